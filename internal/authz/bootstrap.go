package authz

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/component-helpers/auth/rbac/reconciliation"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)

// EnsureBootstrapPolicy creates the roles and bindings kube-apiserver
// creates on start (cluster-admin, admin, edit, view, the system: roles,
// the roles of kube-controller-manager's controllers, and their bindings),
// and reconciles them as kube-apiserver's rbac/bootstrap-roles hook does:
// missing rules and subjects are added, unless the object is annotated
// rbac.authorization.kubernetes.io/autoupdate=false. It writes through
// client, as kube-apiserver does through its loopback client.
func EnsureBootstrapPolicy(ctx context.Context, client kubernetes.Interface) error {
	var g errgroup.Group
	g.SetLimit(8) // the objects are independent; a few at a time keeps the start short
	run := func(what string, reconcile func() error) {
		g.Go(func() error {
			err := retry.RetryOnConflict(retry.DefaultBackoff, reconcile)
			if err != nil {
				return fmt.Errorf("reconciling %s: %w", what, err)
			}
			return nil
		})
	}
	for _, role := range append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...) {
		run("clusterrole "+role.Name, func() error {
			_, err := (&reconciliation.ReconcileRoleOptions{
				Role:    reconciliation.ClusterRoleRuleOwner{ClusterRole: &role},
				Client:  reconciliation.ClusterRoleModifier{Client: client.RbacV1().ClusterRoles()},
				Confirm: true,
			}).Run()
			return err
		})
	}
	for _, binding := range append(bootstrappolicy.ClusterRoleBindings(), bootstrappolicy.ControllerRoleBindings()...) {
		run("clusterrolebinding "+binding.Name, func() error {
			_, err := (&reconciliation.ReconcileRoleBindingOptions{
				RoleBinding: reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: &binding},
				Client:      reconciliation.ClusterRoleBindingClientAdapter{Client: client.RbacV1().ClusterRoleBindings()},
				Confirm:     true,
			}).Run()
			return err
		})
	}
	for namespace, roles := range bootstrappolicy.NamespaceRoles() {
		for _, role := range roles {
			run("role "+namespace+"/"+role.Name, func() error {
				_, err := (&reconciliation.ReconcileRoleOptions{
					Role:    reconciliation.RoleRuleOwner{Role: &role},
					Client:  reconciliation.RoleModifier{Client: client.RbacV1(), NamespaceClient: client.CoreV1().Namespaces()},
					Confirm: true,
				}).Run()
				return err
			})
		}
	}
	for namespace, bindings := range bootstrappolicy.NamespaceRoleBindings() {
		for _, binding := range bindings {
			run("rolebinding "+namespace+"/"+binding.Name, func() error {
				_, err := (&reconciliation.ReconcileRoleBindingOptions{
					RoleBinding: reconciliation.RoleBindingAdapter{RoleBinding: &binding},
					Client:      reconciliation.RoleBindingClientAdapter{Client: client.RbacV1(), NamespaceClient: client.CoreV1().Namespaces()},
					Confirm:     true,
				}).Run()
				return err
			})
		}
	}
	return errors.Join(g.Wait(), ctx.Err())
}
