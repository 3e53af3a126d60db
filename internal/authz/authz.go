// Package authz decides what a user may do, as kube-apiserver's
// authorizers do: members of system:masters may do everything, and
// everyone else what the modes of --authorization-mode allow, tried in
// order: RBAC grants (the default), the node authorizer lets kubelets
// reach what their node's pods use (Node), or everyone may do everything
// (AlwaysAllow). RBAC and the node authorizer are Kubernetes' own,
// reading Roles, ClusterRoles and their bindings, and the node graph's
// objects, through informers on the server's own API.
package authz

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/union"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	certificatesinformers "k8s.io/client-go/informers/certificates/v1"
	resourceinformers "k8s.io/client-go/informers/resource/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/auth/nodeidentifier"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/node"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"

	"github.com/kapi-dev/kapi/internal/loopback"
)

// Modes are the values of --authorization-mode kapi knows, given alone
// or as a comma-separated list tried in order, as kube-apiserver's flag.
const (
	ModeNode        = "Node"
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
	// informers feed RBAC and the node authorizer's graph; nil with
	// AlwaysAllow alone.
	informers informers.SharedInformerFactory
}

// New returns the authorizer of mode, a comma-separated list of modes:
// system:masters may do everything, then each mode may allow. RBAC and
// Node read the server's API with client (a privileged loopback
// configuration); they allow nothing until Start has filled their
// informers.
func New(mode string, client *rest.Config) (*Authorizer, error) {
	if mode == "" {
		mode = ModeRBAC
	}
	modes := strings.Split(mode, ",")
	if slices.Equal(modes, []string{ModeAlwaysAllow}) {
		allow := authorizerfactory.NewAlwaysAllowAuthorizer()
		return &Authorizer{Authorizer: allow, RuleResolver: allow}, nil
	}
	clientset, err := kubernetes.NewForConfig(client)
	if err != nil {
		return nil, err
	}
	// kube-apiserver's shared factory, which its RBAC and Node
	// authorizers use, resyncs every 10 minutes.
	f := informers.NewSharedInformerFactoryWithOptions(clientset, 10*time.Minute, informers.WithTransform(loopback.TrimManagedFields))
	a := &Authorizer{informers: f}
	authorizers := []union.NamedAuthorizer{
		{AuthorizerName: "kubernetes.io/system-privileged-group", Authorizer: authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)},
	}
	var resolvers []authorizer.RuleResolver
	for _, m := range modes {
		var one interface {
			authorizer.Authorizer
			authorizer.RuleResolver
		}
		switch m {
		case ModeRBAC:
			one, a.RBAC = rbacAuthorizer(f), true
		case ModeNode:
			one = nodeAuthorizer(f)
		case ModeAlwaysAllow:
			one = authorizerfactory.NewAlwaysAllowAuthorizer()
		default:
			return nil, fmt.Errorf("unknown authorization mode %q: a list of %s, %s and %s", m, ModeNode, ModeRBAC, ModeAlwaysAllow)
		}
		// Named as kube-apiserver names them: each name begins its
		// reasons ("rbac: ...", "node: ...").
		authorizers = append(authorizers, union.NamedAuthorizer{AuthorizerName: strings.ToLower(m), Authorizer: one})
		resolvers = append(resolvers, one)
	}
	chain, err := union.New(authorizers...)
	if err != nil {
		return nil, err
	}
	a.Authorizer, a.RuleResolver = chain, union.NewRuleResolvers(resolvers...)
	return a, nil
}

// rbacAuthorizer is Kubernetes' RBAC evaluator over informers of the
// roles and their bindings.
func rbacAuthorizer(f informers.SharedInformerFactory) *rbac.RBACAuthorizer {
	rbacInformers := f.Rbac().V1()
	return rbac.New(
		&rbac.RoleGetter{Lister: rbacInformers.Roles().Lister()},
		&rbac.RoleBindingLister{Lister: rbacInformers.RoleBindings().Lister()},
		&rbac.ClusterRoleGetter{Lister: rbacInformers.ClusterRoles().Lister()},
		&rbac.ClusterRoleBindingLister{Lister: rbacInformers.ClusterRoleBindings().Lister()},
	)
}

// nodeAuthorizer is Kubernetes' node authorizer: a kubelet (system:node:NAME
// in system:nodes) may read what its node's pods use and write its node's
// status, by a graph of nodes, pods, volumes and what refers to them,
// kept from informers.
func nodeAuthorizer(f informers.SharedInformerFactory) *node.NodeAuthorizer {
	// The resources of features that are off are not served, and not
	// read, as in kube-apiserver.
	var resourceSlices resourceinformers.ResourceSliceInformer
	if utilfeature.DefaultFeatureGate.Enabled(features.DynamicResourceAllocation) {
		resourceSlices = f.Resource().V1().ResourceSlices()
	}
	var podCertificates certificatesinformers.PodCertificateRequestInformer
	if utilfeature.DefaultFeatureGate.Enabled(features.PodCertificateRequest) {
		podCertificates = f.Certificates().V1().PodCertificateRequests()
	}
	node.RegisterMetrics()
	graph := node.NewGraph()
	node.AddGraphEventHandlers(graph, f.Core().V1().Nodes(), f.Core().V1().Pods(), f.Core().V1().PersistentVolumes(),
		f.Storage().V1().VolumeAttachments(), resourceSlices, podCertificates)
	return node.NewAuthorizer(graph, nodeidentifier.NewDefaultNodeIdentifier(), bootstrappolicy.NodeRules())
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
