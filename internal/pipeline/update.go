package pipeline

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

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

// prepareUpdate runs the update stages on one attempt.
func (p *Pipeline) prepareUpdate(ctx context.Context, store *registry.Store, namespace, name string, opts Options, current runtime.Object, desired registry.UpdateFunc) (runtime.Object, error) {
	info := store.Info
	next, err := desired(current)
	if err != nil {
		return nil, err
	}
	if opts.Manager != "" {
		if next, err = p.trackUpdate(info, opts.Subresource, current, next, opts.Manager); err != nil {
			return nil, err
		}
	}
	cur := mustAccessor(current)
	if rv := mustAccessor(next).GetResourceVersion(); rv != "" && rv != cur.GetResourceVersion() {
		return nil, apierrors.NewConflict(store.GroupResource(), name, fmt.Errorf(registry.ConflictMessage))
	}
	if hook := store.Backend().Hooks.BeforeUpdate; hook != nil && opts.Subresource == "" {
		if err := hook(ctx, next, current); err != nil {
			return nil, err
		}
	}
	if opts.Subresource == "status" {
		next = info.PrepareForStatusUpdate(next, current)
	}
	if prepare := store.Backend().Hooks.PrepareSubresource[opts.Subresource]; prepare != nil {
		prepare(next, current)
	}
	keepSystemFields(mustAccessor(next), cur)
	if strategyApplies(opts.Subresource) {
		info.PrepareForUpdate(next, current)
	}
	attrs := attributes(admission.Update, store, opts.Subresource, namespace, name, next, current, opts.DryRun)
	if err := p.admission.Admit(ctx, attrs); err != nil {
		return nil, err
	}
	if errs := info.ValidateUpdate(next, current); len(errs) > 0 {
		return nil, apierrors.NewInvalid(info.GroupVersionKind().GroupKind(), name, errs)
	}
	if err := p.admission.Validate(ctx, attrs); err != nil {
		return nil, err
	}
	return next, nil
}

// keepSystemFields carries over what an update may not change.
func keepSystemFields(next, cur metav1.Object) {
	if next.GetUID() == "" {
		next.SetUID(cur.GetUID())
	}
	next.SetCreationTimestamp(cur.GetCreationTimestamp())
	next.SetDeletionTimestamp(cur.GetDeletionTimestamp())
	next.SetDeletionGracePeriodSeconds(cur.GetDeletionGracePeriodSeconds())
	next.SetResourceVersion(cur.GetResourceVersion())
	next.SetSelfLink("")
}

// strategyApplies reports whether the type's update strategy prepares a
// write of the sub-resource: the object itself and its scale do; status
// has its own rules; the other sub-resources (a pod's binding, a
// namespace's finalize) are written by the type's own action, which
// changes only what that sub-resource may change.
func strategyApplies(subresource string) bool {
	return subresource == "" || subresource == "scale"
}
