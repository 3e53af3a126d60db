package admission

import (
	"context"
	"fmt"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	apiadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/plugin/pkg/admission/limitranger"
)

// LimitRanger is kube-apiserver's LimitRanger admission plugin: pods and
// their containers get the defaults of their namespace's LimitRanges, and
// pods and PersistentVolumeClaims outside a LimitRange's min, max or
// ratio are refused with its 403 message. Like kube-apiserver, it works on
// internal objects. It starts once the server serves (Start).
type LimitRanger struct {
	plugin  *limitranger.LimitRanger
	started atomic.Bool
}

// NewLimitRanger makes the plugin; Start makes it act.
func NewLimitRanger() (*LimitRanger, error) {
	plugin, err := limitranger.NewLimitRanger(&limitranger.DefaultLimitRangerActions{})
	if err != nil {
		return nil, err
	}
	return &LimitRanger{plugin: plugin}, nil
}

// Start gives the plugin its client and LimitRange informer until ctx ends.
func (l *LimitRanger) Start(ctx context.Context, config *rest.Config, factory informers.SharedInformerFactory) error {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	l.plugin.SetExternalKubeClientSet(client)
	l.plugin.SetExternalKubeInformerFactory(factory)
	if err := l.plugin.ValidateInitialization(); err != nil {
		return fmt.Errorf("limit ranger admission: %w", err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	l.started.Store(true)
	return nil
}

// Admit implements Mutator: defaults requests and limits.
func (l *LimitRanger) Admit(ctx context.Context, a *Attributes) error {
	if !l.applies(ctx, a) {
		return nil
	}
	return onInternal(ctx, a, true, func(attrs apiadmission.Attributes) error {
		return l.plugin.Admit(ctx, attrs, apiadmission.NewObjectInterfacesFromScheme(legacyscheme.Scheme))
	})
}

// Validate implements Validator: enforces min, max and ratios.
func (l *LimitRanger) Validate(ctx context.Context, a *Attributes) error {
	if !l.applies(ctx, a) {
		return nil
	}
	return onInternal(ctx, a, false, func(attrs apiadmission.Attributes) error {
		return l.plugin.Validate(ctx, attrs, apiadmission.NewObjectInterfacesFromScheme(legacyscheme.Scheme))
	})
}

// applies reports whether the plugin looks at a write (pods and
// PersistentVolumeClaims): the others are not converted for it.
func (l *LimitRanger) applies(ctx context.Context, a *Attributes) bool {
	return l.started.Load() && l.plugin.Handles(apiadmission.Operation(a.Operation)) &&
		(&limitranger.DefaultLimitRangerActions{}).SupportsAttributes(kubeAttributes(ctx, a))
}

// onInternal runs a kube admission plugin on the internal forms of a
// write's objects, as kube-apiserver admits them; with mutate, the
// plugin's changes are carried back to the written object. Only changes
// are: the round trip through the internal form is not free of them (an
// unset optional number comes back as zero).
func onInternal(ctx context.Context, a *Attributes, mutate bool, plugin func(apiadmission.Attributes) error) error {
	internal := *a
	var err error
	if internal.Object, err = toInternal(a.Object); err != nil {
		return err
	}
	if internal.OldObject, err = toInternal(a.OldObject); err != nil {
		return err
	}
	var before runtime.Object
	if mutate && internal.Object != a.Object && internal.Object != nil {
		before = internal.Object.DeepCopyObject()
	}
	if err := plugin(kubeAttributes(ctx, &internal)); err != nil {
		return err
	}
	if before == nil || apiequality.Semantic.DeepEqual(before, internal.Object) {
		return nil
	}
	return legacyscheme.Scheme.Convert(internal.Object, a.Object, nil)
}

// toInternal converts a built-in object to its internal type; others
// (custom resources) and nil stay as they are.
func toInternal(obj runtime.Object) (runtime.Object, error) {
	if obj == nil {
		return nil, nil
	}
	if _, ok := obj.(runtime.Unstructured); ok {
		return obj, nil // custom resources have no internal form
	}
	if _, _, err := legacyscheme.Scheme.ObjectKinds(obj); err != nil {
		return obj, nil
	}
	return legacyscheme.Scheme.ConvertToVersion(obj, runtime.InternalGroupVersioner)
}
