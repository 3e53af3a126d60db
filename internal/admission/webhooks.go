package admission

import (
	"context"
	"fmt"
	"sync/atomic"

	apiadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/kapi-dev/kapi/internal/webhook"
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
	authorizer authorizer.Authorizer
	// any tells whether configurations of each kind exist: without any,
	// a write skips the plugin and the conversions it needs.
	anyMutating, anyValidating func() bool
	started                    atomic.Bool
}

// NewWebhooks makes the plugins; Start makes them act.
func NewWebhooks(authorizer authorizer.Authorizer) (*Webhooks, error) {
	m, err := mutating.NewMutatingWebhook(nil)
	if err != nil {
		return nil, err
	}
	v, err := validating.NewValidatingAdmissionWebhook(nil)
	if err != nil {
		return nil, err
	}
	return &Webhooks{mutating: m, validating: v, authorizer: authorizer}, nil
}

// Start gives the plugins their client, informers and service resolver,
// as kube-apiserver's plugin initializers do.
func (w *Webhooks) Start(ctx context.Context, config *rest.Config) error {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	mutatingConfigs := factory.Admissionregistration().V1().MutatingWebhookConfigurations().Informer().GetStore()
	validatingConfigs := factory.Admissionregistration().V1().ValidatingWebhookConfigurations().Informer().GetStore()
	w.anyMutating = func() bool { return len(mutatingConfigs.ListKeys()) > 0 }
	w.anyValidating = func() bool { return len(validatingConfigs.ListKeys()) > 0 }
	w.mutating.SetExternalKubeClientSet(client)
	w.mutating.SetExternalKubeInformerFactory(factory)
	w.mutating.SetDrainedNotification(ctx.Done())
	w.mutating.SetUnconditionalAuthorizer(w.authorizer)
	w.mutating.SetServiceResolver(webhook.ServiceResolver{Client: client})
	w.mutating.InspectFeatureGates(utilfeature.DefaultFeatureGate)
	if err := w.mutating.ValidateInitialization(); err != nil {
		return fmt.Errorf("mutating admission webhooks: %w", err)
	}
	w.validating.SetExternalKubeClientSet(client)
	w.validating.SetExternalKubeInformerFactory(factory)
	w.validating.SetDrainedNotification(ctx.Done())
	w.validating.SetUnconditionalAuthorizer(w.authorizer)
	w.validating.SetServiceResolver(webhook.ServiceResolver{Client: client})
	w.validating.InspectFeatureGates(utilfeature.DefaultFeatureGate)
	if err := w.validating.ValidateInitialization(); err != nil {
		return fmt.Errorf("validating admission webhooks: %w", err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	w.started.Store(true)
	return nil
}

// Admit implements Mutator: the mutating webhooks, on the internal forms
// of the objects as kube-apiserver sends them (converted to each
// webhook's version).
func (w *Webhooks) Admit(ctx context.Context, a *Attributes) error {
	if !w.started.Load() || !w.anyMutating() || !w.mutating.Handles(apiadmission.Operation(a.Operation)) {
		return nil
	}
	return onInternal(ctx, a, true, func(attrs apiadmission.Attributes) error {
		if err := w.mutating.Admit(ctx, attrs, objectInterfaces); err != nil {
			return err
		}
		// A webhook with reinvocationPolicy IfNeeded runs again when a
		// later one changed the object, as kube-apiserver's admission
		// chain reinvokes.
		if reinvocation := attrs.GetReinvocationContext(); reinvocation.ShouldReinvoke() {
			reinvocation.SetIsReinvoke()
			return w.mutating.Admit(ctx, attrs, objectInterfaces)
		}
		return nil
	})
}

// Validate implements Validator: the validating webhooks.
func (w *Webhooks) Validate(ctx context.Context, a *Attributes) error {
	if !w.started.Load() || !w.anyValidating() || !w.validating.Handles(apiadmission.Operation(a.Operation)) {
		return nil
	}
	return onInternal(ctx, a, false, func(attrs apiadmission.Attributes) error {
		return w.validating.Validate(ctx, attrs, objectInterfaces)
	})
}

// objectInterfaces convert between the internal and versioned forms of
// built-in objects.
var objectInterfaces = apiadmission.NewObjectInterfacesFromScheme(legacyscheme.Scheme)
