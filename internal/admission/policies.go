package admission

import (
	"context"
	"sync/atomic"

	apiadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// Policies are kube-apiserver's MutatingAdmissionPolicy and
// ValidatingAdmissionPolicy plugins (k8s.io/apiserver): the CEL policies
// and their bindings stored in admissionregistration.k8s.io are enforced
// on every write they match. They authorise parameter reads with the
// server's authorizer. They start once
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
	init, err := newPluginInit(ctx, config, p.authorizer)
	if err != nil {
		return err
	}
	if err := init.initialize(p.mutating, p.validating); err != nil {
		return err
	}
	init.start(ctx)
	p.started.Store(true)
	return nil
}

// Admit implements Mutator: the mutating policies.
func (p *Policies) Admit(ctx context.Context, a *Attributes) error {
	if !p.started.Load() || !p.mutating.Handles(apiadmission.Operation(a.Operation)) {
		return nil
	}
	return audited(p.mutating).(apiadmission.MutationInterface).Admit(ctx, kubeAttributes(ctx, a), apiadmission.NewObjectInterfacesFromScheme(legacyscheme.Scheme))
}

// Validate implements Validator: the validating policies.
func (p *Policies) Validate(ctx context.Context, a *Attributes) error {
	if !p.started.Load() || !p.validating.Handles(apiadmission.Operation(a.Operation)) {
		return nil
	}
	return audited(p.validating).(apiadmission.ValidationInterface).Validate(ctx, kubeAttributes(ctx, a), apiadmission.NewObjectInterfacesFromScheme(legacyscheme.Scheme))
}
