package admission

import (
	"context"
	"sync/atomic"

	apiadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Webhooks are kube-apiserver's MutatingAdmissionWebhook and
// ValidatingAdmissionWebhook plugins (k8s.io/apiserver): the
// MutatingWebhookConfigurations and ValidatingWebhookConfigurations of the
// API, called with AdmissionReview over HTTPS with their rules, selectors,
// match conditions, failure policies, timeouts, side effects and
// reinvocation. They read their configurations through informers on the
// server's own API, so they act once Start has run.
type Webhooks struct {
	mutating   *mutating.Plugin
	validating *validating.Plugin
	// admit and validate run them so that the annotations they add go into
	// the request's audit event, as in kube-apiserver's chain.
	admit    apiadmission.MutationInterface
	validate apiadmission.ValidationInterface
	// objects convert objects and tell the versions that serve a resource
	// (matchPolicy: Equivalent).
	objects    *Objects
	authorizer authorizer.Authorizer
	// any tells whether configurations of each kind exist: without any,
	// a write skips the plugin and the conversions it needs.
	anyMutating, anyValidating func() bool
	// mutatingOff and validatingOff are set when the plugin of that half
	// is disabled (--disable-admission-plugins).
	mutatingOff, validatingOff bool
	started                    atomic.Bool
}

// NewWebhooks makes the plugins, those of the two that sel runs acting
// once Start has run.
func NewWebhooks(authorizer authorizer.Authorizer, objects *Objects, sel Selection) (*Webhooks, error) {
	m, err := mutating.NewMutatingWebhook(nil)
	if err != nil {
		return nil, err
	}
	v, err := validating.NewValidatingAdmissionWebhook(nil)
	if err != nil {
		return nil, err
	}
	return &Webhooks{
		mutating: m, validating: v, authorizer: authorizer,
		admit:       apiadmission.WithAudit(m).(apiadmission.MutationInterface),
		validate:    apiadmission.WithAudit(v).(apiadmission.ValidationInterface),
		objects:     objects,
		mutatingOff: !sel.Runs("MutatingAdmissionWebhook"), validatingOff: !sel.Runs("ValidatingAdmissionWebhook"),
	}, nil
}

// Start gives the plugins their client, informers and service resolver,
// as kube-apiserver's plugin initializers do.
func (w *Webhooks) Start(ctx context.Context, clients Clients) error {
	if w.mutatingOff && w.validatingOff {
		return nil // both disabled: nothing to read configurations for
	}
	init, err := newPluginInit(ctx, clients, w.authorizer)
	if err != nil {
		return err
	}
	// Only the enabled halves get their informers, as kube-apiserver
	// initializes only the plugins it runs.
	var enabled []apiadmission.Interface
	if !w.mutatingOff {
		configs := init.informer.Admissionregistration().V1().MutatingWebhookConfigurations().Informer().GetStore()
		w.anyMutating = func() bool { return len(configs.ListKeys()) > 0 }
		enabled = append(enabled, w.mutating)
	}
	if !w.validatingOff {
		configs := init.informer.Admissionregistration().V1().ValidatingWebhookConfigurations().Informer().GetStore()
		w.anyValidating = func() bool { return len(configs.ListKeys()) > 0 }
		enabled = append(enabled, w.validating)
	}
	if err := init.initialize(enabled...); err != nil {
		return err
	}
	init.start(ctx)
	w.started.Store(true)
	return nil
}

// Admit implements Mutator: the mutating webhooks, on the internal forms
// of the objects as kube-apiserver sends them (converted to each
// webhook's version).
func (w *Webhooks) Admit(ctx context.Context, a *Attributes) error {
	if w.mutatingOff || !w.started.Load() || !w.anyMutating() || !w.mutating.Handles(apiadmission.Operation(a.Operation)) {
		return nil
	}
	// A webhook with reinvocationPolicy IfNeeded runs again when the
	// chain runs again (Chain.Admit).
	return onInternal(ctx, a, onlyChanges, func(attrs apiadmission.Attributes) error {
		return w.admit.Admit(ctx, attrs, w.objects)
	})
}

// Validate implements Validator: the validating webhooks.
func (w *Webhooks) Validate(ctx context.Context, a *Attributes) error {
	if w.validatingOff || !w.started.Load() || !w.anyValidating() || !w.validating.Handles(apiadmission.Operation(a.Operation)) {
		return nil
	}
	return onInternal(ctx, a, noChanges, func(attrs apiadmission.Attributes) error {
		return w.validate.Validate(ctx, attrs, w.objects)
	})
}
