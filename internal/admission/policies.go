package admission

import (
	"context"
	"sync/atomic"

	apiadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
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
	// admit and validate run them as kube-apiserver's chain does: the
	// annotations they add (a policy's audit annotations) go into the
	// request's audit event.
	admit    apiadmission.MutationInterface
	validate apiadmission.ValidationInterface
	// authorizer answers the policies' authorizer checks (CEL's
	// authorizer library, paramKind access).
	authorizer authorizer.Authorizer
	objects    *Objects
	// mutatingOff and validatingOff are set when the plugin of that half
	// is disabled (--disable-admission-plugins).
	mutatingOff, validatingOff bool
	started                    atomic.Bool
}

// NewPolicies makes the plugins, those of the two that sel runs acting
// once Start has run.
func NewPolicies(authorizer authorizer.Authorizer, objects *Objects, sel Selection) (*Policies, error) {
	m, err := mutating.NewPlugin(nil)
	if err != nil {
		return nil, err
	}
	m.InspectFeatureGates(utilfeature.DefaultFeatureGate)
	v, err := validating.NewPlugin(nil)
	if err != nil {
		return nil, err
	}
	return &Policies{
		mutating: m, validating: v, authorizer: authorizer, objects: objects,
		admit:       apiadmission.WithAudit(m).(apiadmission.MutationInterface),
		validate:    apiadmission.WithAudit(v).(apiadmission.ValidationInterface),
		mutatingOff: !sel.Runs("MutatingAdmissionPolicy"), validatingOff: !sel.Runs("ValidatingAdmissionPolicy"),
	}, nil
}

// Start gives the plugins their clients, informers and REST mapper, as
// kube-apiserver's initializers do, until ctx ends.
func (p *Policies) Start(ctx context.Context, clients Clients) error {
	if p.mutatingOff && p.validatingOff {
		return nil // both disabled: nothing to read configurations for
	}
	init, err := newPluginInit(ctx, clients, p.authorizer)
	if err != nil {
		return err
	}
	syncPolicyInformers(ctx, clients.Informers, !p.mutatingOff, !p.validatingOff)
	var enabled []apiadmission.Interface
	if !p.mutatingOff {
		enabled = append(enabled, p.mutating)
	}
	if !p.validatingOff {
		enabled = append(enabled, p.validating)
	}
	if err := init.initialize(enabled...); err != nil {
		return err
	}
	init.start(ctx)
	p.started.Store(true)
	return nil
}

// Admit implements Mutator: the mutating policies.
func (p *Policies) Admit(ctx context.Context, a *Attributes) error {
	if p.mutatingOff || !p.started.Load() || !p.mutating.Handles(apiadmission.Operation(a.Operation)) {
		return nil
	}
	return p.admit.Admit(ctx, kubeAttributes(ctx, a), p.objects)
}

// Validate implements Validator: the validating policies.
func (p *Policies) Validate(ctx context.Context, a *Attributes) error {
	if p.validatingOff || !p.started.Load() || !p.validating.Handles(apiadmission.Operation(a.Operation)) {
		return nil
	}
	return p.validate.Validate(ctx, kubeAttributes(ctx, a), p.objects)
}

// syncPolicyInformers starts the informers the policy plugins read, and
// waits until they have listed, before the plugins are initialised. Each
// plugin's policy source starts waiting for them as it is initialised,
// polling every 100 ms; informers already synced let its first look
// succeed, where otherwise the server's first write would wait out the
// source's next poll.
func syncPolicyInformers(ctx context.Context, factory informers.SharedInformerFactory, mutating, validating bool) {
	admissionregistration := factory.Admissionregistration().V1()
	if validating {
		admissionregistration.ValidatingAdmissionPolicies().Informer()
		admissionregistration.ValidatingAdmissionPolicyBindings().Informer()
	}
	if mutating {
		admissionregistration.MutatingAdmissionPolicies().Informer()
		admissionregistration.MutatingAdmissionPolicyBindings().Informer()
	}
	factory.Core().V1().Namespaces().Informer()
	factory.StartWithContext(ctx)
	factory.WaitForCacheSync(ctx.Done())
}
