package pipeline

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kstorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/warning"

	"github.com/kapi-dev/kapi/internal/admission"
	"github.com/kapi-dev/kapi/internal/registry"
)

// Delete deletes an object, or, while it has finalizers (or its type keeps
// it, as a namespace is kept until emptied), marks it with a deletion
// timestamp and keeps it. gone tells which happened.
func (p *Pipeline) Delete(ctx context.Context, store *registry.Store, namespace, name string, opts *metav1.DeleteOptions, o Options) (obj runtime.Object, gone bool, err error) {
	if !o.InCollection {
		if refuse := store.Backend().Hooks.RefuseDelete; refuse != nil {
			if err := refuse(name); err != nil {
				return nil, false, err
			}
		}
		WarnOfDelete(ctx, store, opts)
	}
	for {
		obj, gone, err = p.deleteAsRead(ctx, store, namespace, name, opts, o)
		if !errors.Is(err, errKeptSinceRead) {
			return obj, gone, err
		}
		// Something keeps the object that did not when it was read (a
		// finalizer added meanwhile): the delete starts again from the
		// object as it is now, and marks it instead. kube-apiserver 1.37
		// deletes it regardless (kubernetes#77988, whose fix retries so).
		// The read that starts it again ends the loop once the request
		// has ended.
	}
}

// errKeptSinceRead is the delete's refusal of an object that something
// keeps since the delete read it.
var errKeptSinceRead = errors.New("kept since read")

// deleteAsRead deletes or marks the object as it reads it first, and fails
// with errKeptSinceRead when it read an object nothing kept that something
// keeps by the time it is deleted.
func (p *Pipeline) deleteAsRead(ctx context.Context, store *registry.Store, namespace, name string, opts *metav1.DeleteOptions, o Options) (obj runtime.Object, gone bool, err error) {
	dry := o.DryRun
	current, err := store.Get(ctx, namespace, name)
	if err != nil {
		return nil, false, err
	}
	if err := checkPreconditionsFirst(store, opts, current); err != nil {
		return nil, false, err
	}
	w := registry.Write{Info: store.Info, Namespace: namespace, Name: name, Verb: "delete"}
	gd, deletesGracefully := strategyOf(store).(registry.GracefulDeleter)
	// Admission runs, as in kube-apiserver, where the type's storage
	// validates the delete: after its graceful deletion made the options
	// effective (a pod's grace period), not at all for an object already
	// being deleted gracefully or kept by its type.
	effective := opts.DeepCopy()
	if effective == nil {
		effective = &metav1.DeleteOptions{}
	}
	var graceful, pending bool
	if deletesGracefully {
		if _, graceful, pending, err = gd.BeforeDelete(ctx, w, current, effective); err != nil {
			return nil, false, err
		}
	}
	if pending {
		// Already being deleted gracefully: nothing changes.
		return current, false, nil
	}
	if kept, err := p.keptByType(store, current); err != nil || kept {
		// Being deleted, and kept by its type until something else is
		// done (a namespace until its content is gone): as kube-apiserver's
		// namespace storage, a further delete changes nothing.
		return current, false, err
	}
	own := store.Backend().Hooks.OwnDelete
	if own != nil && (effective.Preconditions == nil || effective.Preconditions.UID == nil) {
		// Types deleting in their own way (namespaces, CRDs) delete the
		// object read, as kube's storages of them do by its UID.
		uid := mustAccessor(current).GetUID()
		if effective.Preconditions == nil {
			effective.Preconditions = &metav1.Preconditions{}
		}
		effective.Preconditions.UID = &uid
	}
	if o.InCollection {
		// Each object of a collection is deleted with a copy of the
		// options; admission keeps the request's.
		if effective = opts.DeepCopy(); effective == nil {
			effective = &metav1.DeleteOptions{}
		}
	}
	attrs := deleteAttributes(store, namespace, name, current, effective, o)
	if err := p.admit(ctx, o, attrs); err != nil {
		return nil, false, err
	}
	if err := p.validate(ctx, o, attrs); err != nil {
		return nil, false, err
	}
	if own != nil && mustAccessor(current).GetDeletionTimestamp() == nil {
		marked, err := p.markFirstDelete(ctx, store, namespace, name, opts, current, dry, own)
		return marked, false, err
	}
	if graceful {
		// Kept for its grace period (a pod, until its kubelet has stopped
		// it and deletes it for good). With no grace left it is marked all
		// the same, then deleted: as in kube-apiserver, watchers see it
		// MODIFIED with its deletion timestamp, then DELETED.
		return p.markDeleting(ctx, store, namespace, name, opts, current, dry)
	}
	if _, changed := gcFinalizers(ctx, strategyOf(store), w, opts, mustAccessor(current)); changed {
		// The garbage collector finishes the delete (orphaning the
		// dependents, or deleting them first).
		return p.markDeleting(ctx, store, namespace, name, opts, current, dry)
	}
	keep, err := p.keeps(store, current)
	if err != nil {
		return nil, false, err
	}
	if keep {
		return p.markDeleting(ctx, store, namespace, name, opts, current, dry)
	}
	if dry {
		return current, true, nil
	}
	deleted, err := store.Delete(ctx, namespace, name, func(cur runtime.Object) error {
		if keep, err := p.keeps(store, cur); err != nil {
			return err
		} else if keep {
			return errKeptSinceRead
		}
		return checkPreconditions(store, opts, cur, false)
	})
	if err == nil {
		p.afterDelete(ctx, store, deleted)
	}
	return deleted, err == nil, err
}

// deleteAttributes describe a delete to admission: the options it sees
// (the caller's own copy, which admission may hold), and no name for an
// object of a deletecollection.
func deleteAttributes(store *registry.Store, namespace, name string, current runtime.Object, opts *metav1.DeleteOptions, o Options) *admission.Attributes {
	if o.InCollection {
		name = ""
	}
	attrs := attributes(admission.Delete, store, namespace, name, nil, current, Options{DryRun: o.DryRun})
	attrs.Options = withDeleteOptionsKind(opts)
	return attrs
}

// withDeleteOptionsKind gives opts the kind admission sees them with.
func withDeleteOptionsKind(opts *metav1.DeleteOptions) *metav1.DeleteOptions {
	opts.TypeMeta = metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "meta.k8s.io/v1"}
	return opts
}

// WarnOfDelete adds the warning the type's storage gives a delete with
// opts, if any, to the request's answer: for a single delete, whether the
// object exists or not, and once for a delete of a collection.
func WarnOfDelete(ctx context.Context, store *registry.Store, opts *metav1.DeleteOptions) {
	if warn := store.Backend().Hooks.DeleteWarning; warn != nil {
		if message := warn(opts); message != "" {
			warning.AddWarning(ctx, "", message)
		}
	}
}

// DeleteCorrupt deletes an object whose stored bytes cannot be decoded
// (ignoreStoreReadErrorWithClusterBreakingPotential): as kube-apiserver's
// unsafe deleter it skips preconditions, finalizers, admission and the
// type's after-delete hook, since there is no object to give them.
func (p *Pipeline) DeleteCorrupt(ctx context.Context, store *registry.Store, namespace, name string, dry bool) error {
	return store.Backend().Storage().DeleteCorrupt(ctx, namespace, name, dry)
}

// keeps reports whether deleting obj only marks it: it has finalizers, it
// is being deleted gracefully (a grace period not yet cut to zero), or its
// type's PrepareDelete says so.
func (p *Pipeline) keeps(store *registry.Store, obj runtime.Object) (bool, error) {
	m := mustAccessor(obj)
	grace := m.GetDeletionGracePeriodSeconds()
	keep := len(m.GetFinalizers()) > 0 || (m.GetDeletionTimestamp() != nil && grace != nil && *grace > 0)
	if hook := store.Backend().Hooks.PrepareDelete; hook != nil {
		typeKeeps, err := hook(obj)
		if err != nil {
			return false, err
		}
		keep = keep || typeKeeps
	}
	return keep, nil
}

// keptByType reports whether obj is being deleted and its type's
// PrepareDelete still keeps it.
func (p *Pipeline) keptByType(store *registry.Store, obj runtime.Object) (bool, error) {
	hook := store.Backend().Hooks.PrepareDelete
	if hook == nil || mustAccessor(obj).GetDeletionTimestamp() == nil {
		return false, nil
	}
	return hook(obj)
}

// markFirstDelete marks an object on its first delete, by its type's own
// delete, and keeps it: a deletion timestamp (no grace period, the
// generation unchanged), and what the type adds.
func (p *Pipeline) markFirstDelete(ctx context.Context, store *registry.Store, namespace, name string, opts *metav1.DeleteOptions, current runtime.Object, dry bool, own *registry.OwnDelete) (runtime.Object, error) {
	mark := func(cur runtime.Object) (runtime.Object, error) {
		if err := checkPreconditions(store, opts, cur, dry); err != nil {
			return nil, err
		}
		if m := mustAccessor(cur); m.GetDeletionTimestamp() == nil { // another delete may have come first
			now := metav1.Now()
			m.SetDeletionTimestamp(&now)
		}
		own.Mark(cur, opts)
		return cur, nil
	}
	if dry {
		return mark(current)
	}
	return store.Update(ctx, namespace, name, mark)
}

// markDeleting sets the deletion timestamp of an object that is kept.
func (p *Pipeline) markDeleting(ctx context.Context, store *registry.Store, namespace, name string, opts *metav1.DeleteOptions, current runtime.Object, dry bool) (runtime.Object, bool, error) {
	mark := func(cur runtime.Object) (runtime.Object, error) {
		if err := checkPreconditions(store, opts, cur, dry); err != nil {
			return nil, err
		}
		w := registry.Write{Info: store.Info, Namespace: namespace, Name: name, Verb: "delete"}
		if finalizers, changed := gcFinalizers(ctx, strategyOf(store), w, opts, mustAccessor(cur)); changed {
			mustAccessor(cur).SetFinalizers(finalizers)
		}
		return p.markForDeletion(ctx, store, w, cur, opts)
	}
	if dry {
		obj, err := mark(current)
		if err != nil {
			return nil, false, err
		}
		keep, err := p.keeps(store, obj)
		return obj, !keep, err
	}
	marked, err := store.Update(ctx, namespace, name, mark)
	if err != nil {
		return nil, false, err
	}
	// The finalizers may have been removed in between.
	return p.finishDeletion(ctx, store, marked)
}

// markForDeletion marks an object a delete keeps: with kube's rules for a
// type that deletes gracefully (a deletion timestamp at the end of the
// grace period), otherwise with a deletion timestamp of now.
func (p *Pipeline) markForDeletion(ctx context.Context, store *registry.Store, w registry.Write, cur runtime.Object, opts *metav1.DeleteOptions) (runtime.Object, error) {
	if gd, ok := strategyOf(store).(registry.GracefulDeleter); ok {
		marked, graceful, pending, err := gd.BeforeDelete(ctx, w, cur, opts.DeepCopy())
		if err != nil {
			return nil, err
		}
		if graceful {
			return marked, nil
		}
		if pending {
			return cur, nil
		}
	}
	setDeletionTimestamp(cur)
	return cur, nil
}

// setDeletionTimestamp marks an object a delete keeps, as kube's generic
// registry does: the first mark moves the generation on, if the type has
// one; a deletion timestamp later than now (a grace period's end) is
// brought to now; and the grace period is 0, on a later delete too (the
// types with their own delete mark their objects themselves on the first).
func setDeletionTimestamp(obj runtime.Object) {
	m := mustAccessor(obj)
	now := metav1.Now()
	switch ts := m.GetDeletionTimestamp(); {
	case ts == nil:
		if m.GetGeneration() > 0 {
			m.SetGeneration(m.GetGeneration() + 1)
		}
		m.SetDeletionTimestamp(&now)
	case ts.After(now.Time):
		m.SetDeletionTimestamp(&now)
	}
	var zero int64
	m.SetDeletionGracePeriodSeconds(&zero)
}

// finishDeletion removes an object being deleted once nothing keeps it any
// more (its last finalizer is gone), and tells whether it is gone;
// otherwise it returns obj unchanged. Writes in between (a status, a
// binding) do not stop it, as kube-apiserver's deletion retries over
// them; only something that keeps the object now does.
func (p *Pipeline) finishDeletion(ctx context.Context, store *registry.Store, obj runtime.Object) (runtime.Object, bool, error) {
	m := mustAccessor(obj)
	if m.GetDeletionTimestamp() == nil {
		return obj, false, nil
	}
	if keep, err := p.keeps(store, obj); err != nil || keep {
		return obj, false, nil
	}
	uid := m.GetUID()
	_, err := store.Delete(ctx, m.GetNamespace(), m.GetName(), func(cur runtime.Object) error {
		c := mustAccessor(cur)
		if c.GetUID() != uid || c.GetDeletionTimestamp() == nil {
			return errChanged
		}
		if keep, err := p.keeps(store, cur); err != nil || keep {
			return errChanged
		}
		return nil
	})
	switch {
	case err == nil:
		p.afterDelete(ctx, store, obj)
		return obj, true, nil
	case apierrors.IsNotFound(err):
		return obj, true, nil // deleted by another writer meanwhile
	case err == errChanged:
		return obj, false, nil
	}
	return nil, false, err
}

var errChanged = fmt.Errorf("object changed")

// afterDelete runs the type's AfterDelete hook.
func (p *Pipeline) afterDelete(ctx context.Context, store *registry.Store, obj runtime.Object) {
	if hook := store.Backend().Hooks.AfterDelete; hook != nil {
		hook(context.WithoutCancel(ctx), obj)
	}
}

// checkPreconditionsFirst enforces DeleteOptions.Preconditions on the
// object as the delete first reads it, with kube-apiserver's error for
// that stage: the generic registry's (naming the kind) for most types,
// their storage's own for namespaces and CustomResourceDefinitions.
func checkPreconditionsFirst(store *registry.Store, opts *metav1.DeleteOptions, obj runtime.Object) error {
	if opts == nil || opts.Preconditions == nil {
		return nil
	}
	if own := store.Backend().Hooks.OwnDelete; own != nil {
		prefix := own.PreconditionFailed
		m := mustAccessor(obj)
		p := opts.Preconditions
		if p.UID != nil && *p.UID != m.GetUID() {
			return apierrors.NewConflict(store.GroupResource(), m.GetName(), fmt.Errorf(
				"%s: UID in precondition: %v, UID in object meta: %v", prefix, *p.UID, m.GetUID()))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
			return apierrors.NewConflict(store.GroupResource(), m.GetName(), fmt.Errorf(
				"%s: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", prefix, *p.ResourceVersion, m.GetResourceVersion()))
		}
		return nil
	}
	m := mustAccessor(obj)
	p := opts.Preconditions
	kind := schema.GroupResource{Group: store.Info.Group, Resource: store.Info.Kind}
	if p.UID != nil && *p.UID != m.GetUID() {
		return apierrors.NewConflict(kind, m.GetName(), fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, m.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
		return apierrors.NewConflict(kind, m.GetName(), fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}

// checkPreconditions enforces DeleteOptions.Preconditions when the delete
// writes, with the storage's error for an object that changed since it
// was first read (kube's own check, naming its storage key).
func checkPreconditions(store *registry.Store, opts *metav1.DeleteOptions, obj runtime.Object, dryRun bool) error {
	if opts == nil || opts.Preconditions == nil {
		return nil
	}
	return storagePrecondition(store, &kstorage.Preconditions{UID: opts.Preconditions.UID, ResourceVersion: opts.Preconditions.ResourceVersion}, obj, dryRun)
}

// storagePrecondition checks p on the current object obj as
// kube-apiserver's storage does before a write: a failure is a conflict
// naming its storage key, which a client retries from a fresh read.
func storagePrecondition(store *registry.Store, p *kstorage.Preconditions, obj runtime.Object, dryRun bool) error {
	m := mustAccessor(obj)
	if err := p.Check(store.PreconditionKey(m.GetNamespace(), m.GetName(), dryRun), obj); err != nil {
		return apierrors.NewConflict(store.GroupResource(), m.GetName(), err)
	}
	return nil
}

// actionName is the name an action is admitted with: the URL's, or the
// body's where the URL has none.
func actionName(name string, m metav1.Object) string {
	if name != "" {
		return name
	}
	return m.GetName()
}

// Act carries out a create that is an operation on other objects (a pod's
// binding): its managed fields recorded as any create's, admitted as a
// create of the sub-resource (completed by the type between mutating and
// validating admission, where it does so), then handed to the type's
// action. (An
// action that answers with the object it was given, as a token request
// or a review does, answers with those managed fields, as in
// kube-apiserver.)
// body is the store of obj's kind, the one the sub-resource exchanges.
func (p *Pipeline) Act(ctx context.Context, store, body *registry.Store, namespace, name string, obj runtime.Object, opts Options) (runtime.Object, error) {
	subresource, dry := opts.Subresource, opts.DryRun
	action := store.Backend().Hooks.Actions[subresource]
	if action == nil {
		return nil, apierrors.NewMethodNotSupported(store.GroupResource(), "create")
	}
	body.Default(obj) // as a decoded body gets them, before its managed fields
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		// A body without apiVersion and kind is of the path's version,
		// which the action answers in.
		obj.GetObjectKind().SetGroupVersionKind(body.Info.GroupVersionKind())
	}
	if opts.Manager != "" {
		var err error
		if obj, err = p.trackUpdate(body.Info, subresource, body.New(), obj, opts.Manager); err != nil {
			return nil, err
		}
	}
	m := mustAccessor(obj)
	attrs := attributes(admission.Create, store, namespace, actionName(name, m), obj, nil, opts)
	attrs.Kind = body.Info.GroupVersionKind() // the action's kind (Eviction), as kube admits it
	if err := p.admit(ctx, opts, attrs); err != nil {
		return nil, err
	}
	if prepare := store.Backend().Hooks.PrepareActions[subresource]; prepare != nil {
		var err error
		if obj, err = prepare(ctx, namespace, name, attrs.Object); err != nil {
			return nil, err
		}
		attrs.Object = obj
	}
	if err := p.validate(ctx, opts, attrs); err != nil {
		return nil, err
	}
	return action(ctx, namespace, name, attrs.Object, dry)
}
