package server

import (
	"context"
	"log/slog"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/internal/controllers"
)

// TestBootstrapPolicyReconciledOnRestart changes and deletes bootstrap
// roles and bindings, restarts on the same data, and expects what
// kube-apiserver's rbac/bootstrap-roles hook leaves: missing rules and
// objects back, objects annotated autoupdate=false left as they are.
func TestBootstrapPolicyReconciledOnRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	start := func() (*Server, kubernetes.Interface) {
		s, err := Start(ctx, Config{DataDir: dir, Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler), Controllers: controllers.Selection{"-*"}})
		if err != nil {
			t.Fatal(err)
		}
		return s, kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	}
	s, client := start()
	rbac := client.RbacV1()
	basic, err := rbac.ClusterRoles().Get(ctx, "system:basic-user", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRules := len(basic.Rules)
	if wantRules < 2 {
		t.Fatalf("clusterrole system:basic-user has %d rules; the test removes all but one", wantRules)
	}
	basic.Rules = basic.Rules[:1]
	if _, err := rbac.ClusterRoles().Update(ctx, basic, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	edit, err := rbac.ClusterRoles().Get(ctx, "system:discovery", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	edit.Annotations[rbacv1.AutoUpdateAnnotationKey] = "false"
	edit.Rules = nil
	if _, err := rbac.ClusterRoles().Update(ctx, edit, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rbac.ClusterRoleBindings().Delete(ctx, "system:basic-user", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	unlabelled, err := rbac.ClusterRoles().Get(ctx, "system:public-info-viewer", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unlabelled.Labels = nil
	if _, err := rbac.ClusterRoles().Update(ctx, unlabelled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rbac.Roles("kube-system").Delete(ctx, "extension-apiserver-authentication-reader", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	binding, err := rbac.RoleBindings("kube-public").Get(ctx, "system:controller:bootstrap-signer", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	binding.Subjects = nil
	if _, err := rbac.RoleBindings("kube-public").Update(ctx, binding, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	shutdown(t, s)

	s, client = start()
	defer shutdown(t, s)
	rbac = client.RbacV1()
	if basic, err := rbac.ClusterRoles().Get(ctx, "system:basic-user", metav1.GetOptions{}); err != nil || len(basic.Rules) != wantRules {
		t.Errorf("clusterrole system:basic-user after the restart: %d rules, want %d (%v)", len(basic.Rules), wantRules, err)
	}
	if kept, err := rbac.ClusterRoles().Get(ctx, "system:discovery", metav1.GetOptions{}); err != nil || len(kept.Rules) != 0 {
		t.Errorf("clusterrole system:discovery, annotated autoupdate=false, after the restart: %v, %v; want its rules left removed", kept.Rules, err)
	}
	if relabelled, err := rbac.ClusterRoles().Get(ctx, "system:public-info-viewer", metav1.GetOptions{}); err != nil ||
		relabelled.Labels["kubernetes.io/bootstrapping"] != "rbac-defaults" {
		t.Errorf("clusterrole system:public-info-viewer after the restart: labels %v, %v; want its bootstrap label back", relabelled.Labels, err)
	}
	if _, err := rbac.ClusterRoleBindings().Get(ctx, "system:basic-user", metav1.GetOptions{}); err != nil {
		t.Errorf("deleted clusterrolebinding system:basic-user after the restart: %v", err)
	}
	if _, err := rbac.Roles("kube-system").Get(ctx, "extension-apiserver-authentication-reader", metav1.GetOptions{}); err != nil {
		t.Errorf("deleted role kube-system/extension-apiserver-authentication-reader after the restart: %v", err)
	}
	binding, err = rbac.RoleBindings("kube-public").Get(ctx, "system:controller:bootstrap-signer", metav1.GetOptions{})
	if err != nil || len(binding.Subjects) == 0 {
		t.Errorf("rolebinding kube-public/system:controller:bootstrap-signer after the restart: subjects %v, %v", binding.Subjects, err)
	}
	if _, err := rbac.ClusterRoles().Get(ctx, "no-such-role", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get of a role nobody made: %v, want NotFound", err)
	}
}
