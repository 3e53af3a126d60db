package admission

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	apiadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// Policies are kube-apiserver's MutatingAdmissionPolicy and
// ValidatingAdmissionPolicy plugins (k8s.io/apiserver): the CEL policies
// and their bindings stored in admissionregistration.k8s.io are enforced
// on every write they match. They authorise parameter reads with kapi's
// authorizer (everything is allowed until RBAC exists). They start once
// the server serves (Start).
type Policies struct {
	mutating   *mutating.Plugin
	validating *validating.Plugin
	// authorizer answers the policies' authorizer checks (CEL's
	// authorizer library, paramKind access).
	authorizer authorizer.Authorizer
	started    atomic.Bool
}

// NewPolicies makes the plugins; Start makes them act.
func NewPolicies(authorizer authorizer.Authorizer) (*Policies, error) {
	m, err := mutating.NewPlugin(nil)
	if err != nil {
		return nil, err
	}
	m.InspectFeatureGates(utilfeature.DefaultFeatureGate)
	v, err := validating.NewPlugin(nil)
	if err != nil {
		return nil, err
	}
	return &Policies{mutating: m, validating: v, authorizer: authorizer}, nil
}

// Start gives the plugins their clients, informers and REST mapper, as
// kube-apiserver's initializers do, until ctx ends.
func (p *Policies) Start(ctx context.Context, config *rest.Config) error {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		return err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return err
	}
	// The mapper learns resources added later (CRDs) when it is reset.
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	go wait.Until(mapper.Reset, 10*time.Second, ctx.Done())
	factory := informers.NewSharedInformerFactory(client, 0)

	p.mutating.SetExternalKubeInformerFactory(factory)
	p.mutating.SetExternalKubeClientSet(client)
	p.mutating.SetRESTMapper(mapper)
	p.mutating.SetDynamicClient(dyn)
	p.mutating.SetDrainedNotification(ctx.Done())
	p.mutating.SetUnconditionalAuthorizer(p.authorizer)
	if err := p.mutating.ValidateInitialization(); err != nil {
		return fmt.Errorf("mutating admission policy: %w", err)
	}
	p.validating.SetExternalKubeInformerFactory(factory)
	p.validating.SetExternalKubeClientSet(client)
	p.validating.SetRESTMapper(mapper)
	p.validating.SetDynamicClient(dyn)
	p.validating.SetDrainedNotification(ctx.Done())
	p.validating.SetUnconditionalAuthorizer(p.authorizer)
	if err := p.validating.ValidateInitialization(); err != nil {
		return fmt.Errorf("validating admission policy: %w", err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	p.started.Store(true)
	return nil
}

// Admit implements Mutator: the mutating policies.
func (p *Policies) Admit(ctx context.Context, a *Attributes) error {
	if !p.started.Load() || !p.mutating.Handles(apiadmission.Operation(a.Operation)) {
		return nil
	}
	return p.mutating.Admit(ctx, kubeAttributes(ctx, a), apiadmission.NewObjectInterfacesFromScheme(legacyscheme.Scheme))
}

// Validate implements Validator: the validating policies.
func (p *Policies) Validate(ctx context.Context, a *Attributes) error {
	if !p.started.Load() || !p.validating.Handles(apiadmission.Operation(a.Operation)) {
		return nil
	}
	return p.validating.Validate(ctx, kubeAttributes(ctx, a), apiadmission.NewObjectInterfacesFromScheme(legacyscheme.Scheme))
}
