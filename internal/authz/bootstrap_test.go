package authz

import (
	"context"
	"sync"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-helpers/auth/rbac/validation"
)

// TestPolicyCreatedOrReconciled: on an empty cluster every object of the
// policy is written by the creator, once; one that another server creates
// in the meantime (here: view, without its rules) is read back from the
// server and reconciled, not created again.
func TestPolicyCreatedOrReconciled(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	var mu sync.Mutex // the policy's objects are written a few at a time
	created := map[string]int{}
	create := func(ctx context.Context, obj runtime.Object, manager string) error {
		mu.Lock()
		defer mu.Unlock()
		if manager != "kube-apiserver" {
			t.Errorf("%T written as %q", obj, manager)
		}
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			created["clusterrole/"+o.Name]++
			if o.Name == "view" {
				stale := o.DeepCopy()
				stale.Rules, stale.AggregationRule = nil, nil
				client.RbacV1().ClusterRoles().Create(ctx, stale, metav1.CreateOptions{})
				return apierrors.NewAlreadyExists(rbacv1.Resource("clusterroles"), o.Name)
			}
			_, err := client.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
			return err
		case *rbacv1.ClusterRoleBinding:
			created["clusterrolebinding/"+o.Name]++
			_, err := client.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
			return err
		case *rbacv1.Role:
			created["role/"+o.Namespace+"/"+o.Name]++
			_, err := client.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			return err
		case *rbacv1.RoleBinding:
			created["rolebinding/"+o.Namespace+"/"+o.Name]++
			_, err := client.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			return err
		}
		t.Fatalf("created %T", obj)
		return nil
	}
	if err := EnsureBootstrapPolicy(ctx, client, create); err != nil {
		t.Fatal(err)
	}
	for what, n := range created {
		if n != 1 {
			t.Errorf("%s created %d times", what, n)
		}
	}
	if created["clusterrole/cluster-admin"] != 1 || created["clusterrolebinding/cluster-admin"] != 1 ||
		created["role/kube-system/extension-apiserver-authentication-reader"] != 1 {
		t.Errorf("the policy's objects were not all created by the creator: %d created", len(created))
	}
	view, err := client.RbacV1().ClusterRoles().Get(ctx, "view", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	getPods := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}
	if covers, _ := validation.Covers(view.Rules, []rbacv1.PolicyRule{getPods}); !covers || view.AggregationRule == nil {
		t.Errorf("view created meanwhile was not reconciled: %+v", view)
	}
}
