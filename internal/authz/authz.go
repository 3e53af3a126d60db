// Package authz decides what a user may do, as kube-apiserver's
// authorizers do: members of system:masters may do everything, and
// everyone else what RBAC grants them (--authorization-mode=RBAC, the
// default), or everyone everything (AlwaysAllow). RBAC is Kubernetes' own
// evaluator, reading Roles, ClusterRoles and their bindings through
// informers on the server's own API.
package authz

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/union"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"

	"github.com/kapi-dev/kapi/internal/loopback"
)

// Modes are the values of --authorization-mode kapi knows.
const (
	ModeRBAC        = "RBAC"
	ModeAlwaysAllow = "AlwaysAllow"
)

// Authorizer is the server's authorizer and rule resolver (for
// SelfSubjectRulesReview).
type Authorizer struct {
	authorizer.Authorizer
	authorizer.RuleResolver
	// RBAC is set when RBAC decides (not AlwaysAllow): RBAC objects are
	// then checked for rules their author does not hold.
	RBAC bool
	// informers feed RBAC; nil with AlwaysAllow.
	informers informers.SharedInformerFactory
}

// New returns the authorizer of a mode. RBAC reads the server's API with
// client (a privileged loopback configuration); it allows nothing beyond
// system:masters until Start has filled its informers.
func New(mode string, client *rest.Config) (*Authorizer, error) {
	switch mode {
	case ModeAlwaysAllow:
		allow := authorizerfactory.NewAlwaysAllowAuthorizer()
		return &Authorizer{Authorizer: allow, RuleResolver: allow}, nil
	case ModeRBAC, "":
	default:
		return nil, fmt.Errorf("unknown authorization mode %q: %s or %s", mode, ModeRBAC, ModeAlwaysAllow)
	}
	clientset, err := kubernetes.NewForConfig(client)
	if err != nil {
		return nil, err
	}
	f := informers.NewSharedInformerFactoryWithOptions(clientset, 0, informers.WithTransform(loopback.TrimManagedFields))
	rbacInformers := f.Rbac().V1()
	roles := &rbac.RoleGetter{Lister: rbacInformers.Roles().Lister()}
	roleBindings := &rbac.RoleBindingLister{Lister: rbacInformers.RoleBindings().Lister()}
	clusterRoles := &rbac.ClusterRoleGetter{Lister: rbacInformers.ClusterRoles().Lister()}
	clusterRoleBindings := &rbac.ClusterRoleBindingLister{Lister: rbacInformers.ClusterRoleBindings().Lister()}
	evaluator := rbac.New(roles, roleBindings, clusterRoles, clusterRoleBindings)
	chain, err := union.New(
		// Named as kube-apiserver names them: RBAC's name begins its
		// reasons ("rbac: ...").
		union.NamedAuthorizer{AuthorizerName: "kubernetes.io/system-privileged-group", Authorizer: authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)},
		union.NamedAuthorizer{AuthorizerName: strings.ToLower(ModeRBAC), Authorizer: evaluator},
	)
	if err != nil {
		return nil, err
	}
	return &Authorizer{
		Authorizer: chain, RuleResolver: evaluator, informers: f, RBAC: true,
	}, nil
}

// Start fills RBAC's informers and keeps them current until ctx ends; it
// returns once they have synced.
func (a *Authorizer) Start(ctx context.Context) error {
	if a.informers == nil {
		return nil
	}
	a.informers.StartWithContext(ctx)
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for typ, ok := range a.informers.WaitForCacheSync(waitCtx.Done()) {
		if !ok {
			return fmt.Errorf("authorization: the %v informer did not sync", typ)
		}
	}
	return nil
}

// Wait blocks until the informers have stopped, after the context given
// to Start has ended.
func (a *Authorizer) Wait() {
	if a.informers != nil {
		a.informers.Shutdown()
	}
}
