package authz

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"golang.org/x/sync/errgroup"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
// rbac.authorization.kubernetes.io/autoupdate=false. It reads and
// reconciles through client, as kube-apiserver does through its loopback
// client; objects the cluster lacks altogether (on a first start, all of
// them) are written by create, if given.
func EnsureBootstrapPolicy(ctx context.Context, client kubernetes.Interface, create Creator) error {
	existing, err := listPolicy(ctx, client)
	if err != nil {
		return err
	}
	var g errgroup.Group
	g.SetLimit(32) // the objects are independent: written 32 at a time, they share the commits' syncs
	run := func(what string, reconcile func() error) {
		g.Go(func() error {
			err := retry.RetryOnConflict(retry.DefaultBackoff, reconcile)
			if err != nil {
				return fmt.Errorf("reconciling %s: %w", what, err)
			}
			return nil
		})
	}
	// createOrReconcile creates obj if the list lacked it, and reconciles
	// it otherwise, or if another server created it meanwhile (kube's
	// reconciliation, told by its create that it exists, reads it back).
	createOrReconcile := func(listed bool, obj runtime.Object, reconcile func() error) func() error {
		return func() error {
			if !listed && create != nil {
				if err := create(ctx, obj, policyManager); !apierrors.IsAlreadyExists(err) {
					return err
				}
			}
			return reconcile()
		}
	}
	// An object that already has everything the policy gives it is left
	// alone: its reconciliation would write nothing (on a restart, nearly
	// every object), and kube's rule-coverage check is the start's
	// costliest step. Each other object's options (and so its modifier,
	// which serves the first read from the list) are made once, outside
	// the retries.
	rbac, namespaces := client.RbacV1(), client.CoreV1().Namespaces()
	for _, role := range policyClusterRoles() {
		have := existing.clusterRoles["/"+role.Name]
		if have != nil && hasMetadata(have, &role) &&
			equality.Semantic.DeepEqual(have.Rules, role.Rules) && equality.Semantic.DeepEqual(have.AggregationRule, role.AggregationRule) {
			continue
		}
		opts := &reconciliation.ReconcileRoleOptions{
			Role: reconciliation.ClusterRoleRuleOwner{ClusterRole: &role},
			Client: &listedRules[*rbacv1.ClusterRole]{RuleOwnerModifier: reconciliation.ClusterRoleModifier{Client: rbac.ClusterRoles()},
				listed: existing.clusterRoles, resource: "clusterroles",
				wrap: func(r *rbacv1.ClusterRole) reconciliation.RuleOwner {
					return reconciliation.ClusterRoleRuleOwner{ClusterRole: r}
				}},
			Confirm: true,
		}
		run("clusterrole "+role.Name, createOrReconcile(have != nil, role.DeepCopy(), func() error { _, err := opts.Run(); return err }))
	}
	for _, binding := range append(bootstrappolicy.ClusterRoleBindings(), bootstrappolicy.ControllerRoleBindings()...) {
		have := existing.clusterRoleBindings["/"+binding.Name]
		if have != nil && hasMetadata(have, &binding) &&
			have.RoleRef == binding.RoleRef && equality.Semantic.DeepEqual(have.Subjects, binding.Subjects) {
			continue
		}
		opts := &reconciliation.ReconcileRoleBindingOptions{
			RoleBinding: reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: &binding},
			Client: &listedSubjects[*rbacv1.ClusterRoleBinding]{RoleBindingModifier: reconciliation.ClusterRoleBindingClientAdapter{Client: rbac.ClusterRoleBindings()},
				listed: existing.clusterRoleBindings, resource: "clusterrolebindings",
				wrap: func(b *rbacv1.ClusterRoleBinding) reconciliation.RoleBinding {
					return reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: b}
				}},
			Confirm: true,
		}
		run("clusterrolebinding "+binding.Name, createOrReconcile(have != nil, binding.DeepCopy(), func() error { _, err := opts.Run(); return err }))
	}
	for namespace, roles := range bootstrappolicy.NamespaceRoles() {
		for _, role := range roles {
			have := existing.roles[namespace+"/"+role.Name]
			if have != nil && hasMetadata(have, &role) && equality.Semantic.DeepEqual(have.Rules, role.Rules) {
				continue
			}
			opts := &reconciliation.ReconcileRoleOptions{
				Role: reconciliation.RoleRuleOwner{Role: &role},
				Client: &listedRules[*rbacv1.Role]{RuleOwnerModifier: reconciliation.RoleModifier{Client: rbac, NamespaceClient: namespaces},
					listed: existing.roles, resource: "roles",
					wrap: func(r *rbacv1.Role) reconciliation.RuleOwner { return reconciliation.RoleRuleOwner{Role: r} }},
				Confirm: true,
			}
			run("role "+namespace+"/"+role.Name, createOrReconcile(have != nil, role.DeepCopy(), func() error { _, err := opts.Run(); return err }))
		}
	}
	for namespace, bindings := range bootstrappolicy.NamespaceRoleBindings() {
		for _, binding := range bindings {
			have := existing.roleBindings[namespace+"/"+binding.Name]
			if have != nil && hasMetadata(have, &binding) &&
				have.RoleRef == binding.RoleRef && equality.Semantic.DeepEqual(have.Subjects, binding.Subjects) {
				continue
			}
			opts := &reconciliation.ReconcileRoleBindingOptions{
				RoleBinding: reconciliation.RoleBindingAdapter{RoleBinding: &binding},
				Client: &listedSubjects[*rbacv1.RoleBinding]{RoleBindingModifier: reconciliation.RoleBindingClientAdapter{Client: rbac, NamespaceClient: namespaces},
					listed: existing.roleBindings, resource: "rolebindings",
					wrap: func(b *rbacv1.RoleBinding) reconciliation.RoleBinding {
						return reconciliation.RoleBindingAdapter{RoleBinding: b}
					}},
				Confirm: true,
			}
			run("rolebinding "+namespace+"/"+binding.Name, createOrReconcile(have != nil, binding.DeepCopy(), func() error { _, err := opts.Run(); return err }))
		}
	}
	return errors.Join(g.Wait(), ctx.Err())
}

// Creator writes an object of the bootstrap policy that the cluster
// lacks, on behalf of the server, as the given field manager: kapi's goes
// through the write pipeline in process, without the loopback
// connection's encoding and filters (a first start writes some 140
// objects).
type Creator func(ctx context.Context, obj runtime.Object, manager string) error

// policyManager is the field manager of the policy's objects:
// kube-apiserver's loopback client, which writes them there, is named by
// its user agent.
const policyManager = "kube-apiserver"

// existingPolicy is what the cluster holds of the kinds the policy writes,
// listed once before the reconciliations start: on a restart nearly every
// object is there and unchanged, and a few lists cost less than a read for
// each of some two hundred objects on the way to ready.
type existingPolicy struct {
	clusterRoles        map[string]*rbacv1.ClusterRole
	clusterRoleBindings map[string]*rbacv1.ClusterRoleBinding
	roles               map[string]*rbacv1.Role // by namespace/name
	roleBindings        map[string]*rbacv1.RoleBinding
}

func listPolicy(ctx context.Context, client kubernetes.Interface) (*existingPolicy, error) {
	rbac := client.RbacV1()
	clusterRoles, err := rbac.ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	clusterRoleBindings, err := rbac.ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	existing := &existingPolicy{
		clusterRoles:        byKey(clusterRoles.Items),
		clusterRoleBindings: byKey(clusterRoleBindings.Items),
		roles:               map[string]*rbacv1.Role{},
		roleBindings:        map[string]*rbacv1.RoleBinding{},
	}
	// Roles and bindings only in the namespaces the policy writes to
	// (kube-system, kube-public): a cluster may hold many elsewhere.
	for namespace := range bootstrappolicy.NamespaceRoles() {
		roles, err := rbac.Roles(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		maps.Copy(existing.roles, byKey(roles.Items))
	}
	for namespace := range bootstrappolicy.NamespaceRoleBindings() {
		bindings, err := rbac.RoleBindings(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		maps.Copy(existing.roleBindings, byKey(bindings.Items))
	}
	return existing, nil
}

// hasMetadata reports whether existing has every label and annotation
// expected names, the values aside: reconciliation adds the missing ones
// and keeps the existing values.
func hasMetadata(existing, expected metav1.Object) bool {
	hasKeys := func(have, want map[string]string) bool {
		for k := range want {
			if _, ok := have[k]; !ok {
				return false
			}
		}
		return true
	}
	return hasKeys(existing.GetLabels(), expected.GetLabels()) && hasKeys(existing.GetAnnotations(), expected.GetAnnotations())
}

// byKey indexes listed objects by namespace/name (/name when cluster-scoped).
func byKey[T any, P interface {
	*T
	metav1.Object
}](items []T) map[string]P {
	out := make(map[string]P, len(items))
	for i := range items {
		obj := P(&items[i])
		out[obj.GetNamespace()+"/"+obj.GetName()] = obj
	}
	return out
}

// listedRules and listedSubjects serve a reconciliation's first read of
// an object from the list made before it, and any later one (a retry after
// a conflict) from the server; writes go to the server. Each
// reconciliation has its own, so no listed object is handed out twice.
type listedRules[O any] struct {
	reconciliation.RuleOwnerModifier
	listed   map[string]O
	resource string
	wrap     func(O) reconciliation.RuleOwner
	read     bool
}

func (m *listedRules[O]) Get(namespace, name string) (reconciliation.RuleOwner, error) {
	return firstRead(&m.read, m.listed, m.wrap, m.resource, namespace, name, m.RuleOwnerModifier.Get)
}

type listedSubjects[O any] struct {
	reconciliation.RoleBindingModifier
	listed   map[string]O
	resource string
	wrap     func(O) reconciliation.RoleBinding
	read     bool
}

func (m *listedSubjects[O]) Get(namespace, name string) (reconciliation.RoleBinding, error) {
	return firstRead(&m.read, m.listed, m.wrap, m.resource, namespace, name, m.RoleBindingModifier.Get)
}

func firstRead[O, R any](done *bool, listed map[string]O, wrap func(O) R, resource, namespace, name string, server func(namespace, name string) (R, error)) (R, error) {
	if *done {
		return server(namespace, name)
	}
	*done = true
	if obj, ok := listed[namespace+"/"+name]; ok {
		return wrap(obj), nil
	}
	var none R
	return none, apierrors.NewNotFound(rbacv1.Resource(resource), name)
}
