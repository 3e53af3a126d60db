package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	kstorage "k8s.io/apiserver/pkg/storage"

	"github.com/kapi-dev/kapi/internal/admission"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/storage"
)

// Update stores what desired makes of the current object, through the
// update stages: the resourceVersion the desired object carries must be
// current (or empty), status and system fields follow the sub-resource's
// rules, and the result is admitted and validated. desired runs again if
// another write intervenes. An update that removes the last finalizer of
// an object being deleted deletes it instead, as kube's generic registry
// does: the object is not stored without its finalizers first (watchers
// see the deletion only), and the update answers the object it would
// have stored.
func (p *Pipeline) Update(ctx context.Context, store *registry.Store, namespace, name string, opts Options, desired registry.UpdateFunc) (runtime.Object, error) {
	// undo frees what the type's hook allocated for the last attempt; an
	// attempt that runs again, or is not stored, frees it.
	undo := noUndo
	prepare := func(current runtime.Object) (runtime.Object, error) {
		undo()
		next, u, err := p.prepareUpdate(ctx, store, namespace, name, opts, current, desired)
		undo = u
		return next, err
	}
	if opts.DryRun {
		current, err := store.Get(ctx, namespace, name)
		if err != nil {
			return nil, err
		}
		defer func() { undo() }() // nothing is stored
		next, err := prepare(current)
		if err != nil {
			return nil, err
		}
		return store.AsStored(next)
	}
	withoutManagedFields := false
	for {
		var before, read, emptied runtime.Object
		updated, err := store.Update(ctx, namespace, name, func(current runtime.Object) (runtime.Object, error) {
			next, err := prepare(current)
			if err != nil {
				return nil, err
			}
			if withoutManagedFields {
				mustAccessor(next).SetManagedFields(nil)
			}
			if p.deletesOnUpdate(store, current, next) {
				read, emptied = current, next
				return nil, errEmptiedFinalizers
			}
			before = current
			return next, nil
		})
		if errors.Is(err, storage.ErrRequestTooLarge) && opts.Manager != "" && !withoutManagedFields {
			// As kube-apiserver's update and patch: an object too large
			// to store goes without its managed fields (not an applied
			// one).
			undo()
			undo = noUndo
			withoutManagedFields = true
			continue
		}
		if err != errEmptiedFinalizers {
			if err != nil {
				undo()
				return nil, err
			}
			p.afterUpdate(ctx, store, opts, before, updated)
			return updated, nil
		}
		undo() // the update deletes the object instead
		undo = noUndo
		rv := mustAccessor(read).GetResourceVersion()
		deleted, err := store.Delete(ctx, namespace, name, func(cur runtime.Object) error {
			if mustAccessor(cur).GetResourceVersion() != rv {
				return errChanged
			}
			return nil
		})
		switch {
		case err == errChanged:
			continue // written meanwhile: the update runs again on that
		case apierrors.IsNotFound(err):
			return emptied, nil // another request deleted it first
		case err != nil:
			return nil, err
		}
		p.afterDelete(ctx, store, deleted)
		return emptied, nil
	}
}

var errEmptiedFinalizers = errors.New("emptied finalizers")

// noUndo is the undo of a stage that allocated nothing.
func noUndo() {}

// afterUpdate runs the type's hook on a stored update of the main resource.
func (p *Pipeline) afterUpdate(ctx context.Context, store *registry.Store, opts Options, before, updated runtime.Object) {
	if hook := store.Backend().Hooks.AfterUpdate; hook != nil && opts.Subresource == "" {
		hook(context.WithoutCancel(ctx), before, updated)
	}
}

// deletesOnUpdate reports whether next, the update of current, deletes
// the object: current is being deleted (with no grace period left) and
// nothing keeps next, neither finalizers nor its type.
func (p *Pipeline) deletesOnUpdate(store *registry.Store, current, next runtime.Object) bool {
	cur := mustAccessor(current)
	if cur.GetDeletionTimestamp() == nil || len(mustAccessor(next).GetFinalizers()) > 0 {
		return false
	}
	if grace := cur.GetDeletionGracePeriodSeconds(); grace != nil && *grace != 0 {
		return false
	}
	keep, err := p.keeps(store, next)
	return err == nil && !keep
}

// UpdateObject stores obj over the current object. A resourceVersion in
// obj makes the update conditional on it; without one the update applies
// to whatever is current.
func (p *Pipeline) UpdateObject(ctx context.Context, store *registry.Store, obj runtime.Object, opts Options) (runtime.Object, error) {
	m := mustAccessor(obj)
	return p.Update(ctx, store, m.GetNamespace(), m.GetName(), opts, func(current runtime.Object) (runtime.Object, error) {
		if err := uidPrecondition(store, m, current, opts.DryRun); err != nil {
			return nil, err
		}
		return obj.DeepCopyObject(), nil
	})
}

// uidPrecondition is kube-apiserver's precondition of an update given a
// whole object, checked before anything else: the UID it carries, if
// any, is the current object's; one of another object (deleted and made
// again) is a conflict.
func uidPrecondition(store *registry.Store, m metav1.Object, current runtime.Object, dryRun bool) error {
	uid := m.GetUID()
	if uid == "" {
		return nil
	}
	return storagePrecondition(store, &kstorage.Preconditions{UID: &uid}, current, dryRun)
}

// Put writes obj over the object of its name, as a PUT does: an update,
// or, for a type whose strategy allows it, the object's creation when
// it does not exist (a resourceVersion it carries is then ignored, as
// kube-apiserver's create through an update ignores it), if mayCreate,
// the check that the user may create it too, allows. created tells
// which.
func (p *Pipeline) Put(ctx context.Context, store *registry.Store, obj runtime.Object, opts Options, mayCreate func() error) (out runtime.Object, created bool, err error) {
	out, err = p.UpdateObject(ctx, store, obj, opts)
	if !apierrors.IsNotFound(err) || opts.Subresource != "" || !strategyOf(store).AllowCreateOnUpdate(ctx) {
		return out, false, err
	}
	// As kube's storage checks the precondition on the object it did not
	// find, before anything else: a UID names an object that is gone.
	m := mustAccessor(obj)
	absent := store.New()
	mustAccessor(absent).SetNamespace(m.GetNamespace())
	mustAccessor(absent).SetName(m.GetName())
	if err := uidPrecondition(store, m, absent, opts.DryRun); err != nil {
		return nil, false, err
	}
	fresh := obj.DeepCopyObject()
	mustAccessor(fresh).SetResourceVersion("")
	creating := opts
	creating.MayCreate = mayCreate
	out, err = p.Create(ctx, store, fresh, creating)
	if apierrors.IsAlreadyExists(err) { // created in between: update it
		out, err = p.UpdateObject(ctx, store, obj, opts)
		return out, false, err
	}
	return out, err == nil, err
}

// prepareUpdate runs the update stages on one attempt, in kube-apiserver's
// order: the desired object is defaulted as a decoded body is, its managed
// fields are recorded, mutating admission runs, the type's checks of the
// updated object run (RBAC's), its resourceVersion is compared with the
// current one, the type's hook carries over and allocates what it needs
// (kube's BeginUpdate), then the type's strategy prepares and validates
// it, then validating admission. It returns what undoes the hook's
// allocations (nothing to undo when it fails).
func (p *Pipeline) prepareUpdate(ctx context.Context, store *registry.Store, namespace, name string, opts Options, current runtime.Object, desired registry.UpdateFunc) (runtime.Object, func(), error) {
	strategy := strategyOf(store)
	next, err := desired(current)
	if err != nil {
		return nil, noUndo, err
	}
	strategy.Default(next)
	if opts.Manager != "" {
		if next, err = p.trackUpdate(store.Info, opts.Subresource, current, next, opts.Manager); err != nil {
			return nil, noUndo, err
		}
	}
	attrs := attributes(admission.Update, store, namespace, name, next, current, opts)
	if err := p.admitUpdate(ctx, store, opts, attrs); err != nil {
		return nil, noUndo, err
	}
	next = attrs.Object
	if !opts.Unadmitted {
		DedupOwnerReferences(ctx, next, true)
	}
	if check := store.Backend().Hooks.CheckUpdated; check != nil && opts.Subresource == "" {
		if err := check(ctx, next, current); err != nil {
			return nil, noUndo, err
		}
	}
	if err := checkVersion(ctx, store, name, opts, next, current); err != nil {
		return nil, noUndo, err
	}
	// The write applies to the current object (its resourceVersion was
	// checked above, or the update is unconditional).
	mustAccessor(next).SetResourceVersion(mustAccessor(current).GetResourceVersion())
	mustAccessor(next).SetSelfLink("")
	undo := noUndo
	if hook := store.Backend().Hooks.BeforeUpdate; hook != nil && opts.Subresource == "" {
		if undo, err = hook(ctx, next, current, opts.DryRun); err != nil {
			return nil, noUndo, err
		}
	}
	if next, err = p.validateUpdate(ctx, store, opts, attrs, next, current); err != nil {
		undo()
		return nil, noUndo, err
	}
	return next, undo, nil
}

// checkVersion compares the resourceVersion the desired object of an
// update carries with the current object's, as kube-apiserver's storage
// reads it ("0" is no version either): a different one is a conflict, and
// none is refused where the type allows no unconditional update.
func checkVersion(ctx context.Context, store *registry.Store, name string, opts Options, next, current runtime.Object) error {
	var asked uint64
	if rv := mustAccessor(next).GetResourceVersion(); rv != "" {
		var err error
		if asked, err = strconv.ParseUint(rv, 10, 64); err != nil {
			return err // kube-apiserver's storage answers its bare 500
		}
	}
	if asked == 0 && !strategyOf(store).AllowUnconditionalUpdate(ctx, opts.Subresource) {
		// kube-apiserver names the resource where the kind goes here.
		gr := store.GroupResource()
		return apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: gr.Resource}, name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "resourceVersion"), uint64(0), "must be specified for an update"),
		})
	}
	if asked != 0 && strconv.FormatUint(asked, 10) != mustAccessor(current).GetResourceVersion() {
		return apierrors.NewConflict(store.GroupResource(), name, fmt.Errorf(registry.ConflictMessage))
	}
	return nil
}

// updateVerb is the verb kube's strategies see for an update: "patch"
// when the request is a patch, as its request info says, else "update".
// (The checks some make of what the requester may do ask about that verb.)
func updateVerb(ctx context.Context) string {
	if info, ok := genericapirequest.RequestInfoFrom(ctx); ok && info.Verb == "patch" {
		return "patch"
	}
	return "update"
}

// validateUpdate runs the type's strategy and validating admission on the
// desired object of an update.
func (p *Pipeline) validateUpdate(ctx context.Context, store *registry.Store, opts Options, attrs *admission.Attributes, next, current runtime.Object) (runtime.Object, error) {
	w := registry.Write{Info: store.Info, Subresource: opts.Subresource, Namespace: attrs.Namespace, Name: attrs.Name, Verb: updateVerb(ctx)}
	next, err := strategyOf(store).Update(ctx, w, next, current)
	if err != nil {
		return nil, err
	}
	// As kube-apiserver's store: an update that changes nothing but the
	// times of managed fields entries (a manager writing the fields it
	// owns again, with a value admission or the strategy then puts back)
	// keeps the old times, so that it writes nothing.
	if next, err = fieldmanager.IgnoreManagedFieldsTimestampsTransformer(ctx, next, current); err != nil {
		return nil, err
	}
	attrs.Object = next
	seen, err := admitted(store, attrs)
	if err != nil {
		return nil, err
	}
	if err := p.validate(ctx, opts, seen); err != nil {
		return nil, err
	}
	return next, nil
}

// admitUpdate runs mutating admission on an update, on what admission
// sees of it (admitted); a change to a Scale's replicas is carried back
// to the object.
func (p *Pipeline) admitUpdate(ctx context.Context, store *registry.Store, opts Options, attrs *admission.Attributes) error {
	seen, err := admitted(store, attrs)
	if err != nil {
		return err
	}
	if err := p.admit(ctx, opts, seen); err != nil {
		return err
	}
	if seen == attrs {
		return nil
	}
	scale := seen.Object.(*autoscalingv1.Scale)
	if scale.Spec.Replicas < 0 && !store.Scale().ValidatesReplicas {
		// As kube's scale storage validates the Scale admission made.
		return apierrors.NewInvalid(schema.GroupKind{Group: autoscalingv1.GroupName, Kind: "Scale"}, scale.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "replicas"), scale.Spec.Replicas, "must be greater than or equal to 0"),
		})
	}
	if attrs.Object, err = store.Scale().WithReplicas(attrs.Object, scale.Spec.Replicas); err != nil {
		return apierrors.NewInternalError(err)
	}
	return nil
}

// admitted is what admission sees of an update: its own objects, or for
// the scale sub-resource the Scales of the object before and after, as
// kube-apiserver admits a write of a Scale.
func admitted(store *registry.Store, attrs *admission.Attributes) (*admission.Attributes, error) {
	scale := store.Scale()
	if attrs.Subresource != "scale" || scale == nil {
		return attrs, nil
	}
	view := *attrs
	view.Kind = autoscalingv1.SchemeGroupVersion.WithKind("Scale")
	var err error
	if view.Object, err = scale.Of(attrs.Object); err != nil {
		return nil, err
	}
	if view.OldObject, err = scale.Of(attrs.OldObject); err != nil {
		return nil, err
	}
	return &view, nil
}
