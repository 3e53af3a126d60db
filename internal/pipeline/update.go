package pipeline

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/internal/admission"
	"github.com/kapi-dev/kapi/internal/registry"
)

// Update stores what desired makes of the current object, through the
// update stages: the resourceVersion the desired object carries must be
// current (or empty), status and system fields follow the sub-resource's
// rules, and the result is admitted and validated. desired runs again if
// another write intervenes. An object being deleted whose last finalizer
// the update removes is then deleted.
func (p *Pipeline) Update(ctx context.Context, store *registry.Store, namespace, name string, opts Options, desired registry.UpdateFunc) (runtime.Object, error) {
	prepare := func(current runtime.Object) (runtime.Object, error) {
		return p.prepareUpdate(ctx, store, namespace, name, opts, current, desired)
	}
	if opts.DryRun {
		current, err := store.Get(ctx, namespace, name)
		if err != nil {
			return nil, err
		}
		return prepare(current)
	}
	updated, err := store.Update(ctx, namespace, name, prepare)
	if err != nil {
		return nil, err
	}
	return p.finishDeletion(ctx, store, updated)
}

// UpdateObject stores obj over the current object. A resourceVersion in
// obj makes the update conditional on it; without one the update applies
// to whatever is current.
func (p *Pipeline) UpdateObject(ctx context.Context, store *registry.Store, obj runtime.Object, opts Options) (runtime.Object, error) {
	m := mustAccessor(obj)
	return p.Update(ctx, store, m.GetNamespace(), m.GetName(), opts, func(runtime.Object) (runtime.Object, error) {
		return obj.DeepCopyObject(), nil
	})
}

// prepareUpdate runs the update stages on one attempt, in kube-apiserver's
// order: the desired object is defaulted as a decoded body is, its managed
// fields are recorded, mutating admission runs, then the type's strategy
// prepares and validates it, then validating admission.
func (p *Pipeline) prepareUpdate(ctx context.Context, store *registry.Store, namespace, name string, opts Options, current runtime.Object, desired registry.UpdateFunc) (runtime.Object, error) {
	strategy := strategyOf(store)
	next, err := desired(current)
	if err != nil {
		return nil, err
	}
	strategy.Default(next)
	if opts.Manager != "" {
		if next, err = p.trackUpdate(store.Info, opts.Subresource, current, next, opts.Manager); err != nil {
			return nil, err
		}
	}
	cur := mustAccessor(current)
	rv := mustAccessor(next).GetResourceVersion()
	if rv == "" && !strategy.AllowUnconditionalUpdate(ctx, opts.Subresource) {
		// kube-apiserver names the resource where the kind goes here.
		gr := store.GroupResource()
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: gr.Resource}, name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "resourceVersion"), uint64(0), "must be specified for an update"),
		})
	}
	if rv != "" && rv != cur.GetResourceVersion() {
		return nil, apierrors.NewConflict(store.GroupResource(), name, fmt.Errorf(registry.ConflictMessage))
	}
	if hook := store.Backend().Hooks.BeforeUpdate; hook != nil && opts.Subresource == "" {
		if err := hook(ctx, next, current); err != nil {
			return nil, err
		}
	}
	attrs := attributes(admission.Update, store, opts.Subresource, namespace, name, next, current, opts.DryRun)
	if err := p.admission.Admit(ctx, attrs); err != nil {
		return nil, err
	}
	// The write applies to the current object (its resourceVersion was
	// checked above, or the update is unconditional).
	next = attrs.Object
	mustAccessor(next).SetResourceVersion(cur.GetResourceVersion())
	mustAccessor(next).SetSelfLink("")
	w := registry.Write{Info: store.Info, Subresource: opts.Subresource, Namespace: namespace, Name: name, Verb: "update"}
	if next, err = strategy.Update(ctx, w, next, current); err != nil {
		return nil, err
	}
	attrs.Object = next
	if err := p.admission.Validate(ctx, attrs); err != nil {
		return nil, err
	}
	return next, nil
}
