package handlers

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
	"github.com/kapi-dev/kapi/internal/resources"
)

// generateNameAttempts bounds retries when a generated name is taken.
const generateNameAttempts = 8

func (a *API) create(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	dry, err := dryRun(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if req.Subresource != "" || a.virtual[req.Resource] != nil {
		a.createVirtual(w, r, req, dry)
		return
	}
	obj, err := decodeBody(w, r, store)
	if err != nil {
		writeError(w, r, err)
		return
	}
	created, err := a.createObject(r.Context(), req, store, obj, writeOptions{dry: dry, manager: managerName(r)})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeObject(w, r, http.StatusCreated, created, store.Info.GroupVersionKind(), store.Serializers())
}

// createObject prepares, validates and stores a new object, retrying with a
// fresh name when a generated one is already taken.
func (a *API) createObject(ctx context.Context, req *request.Info, store *registry.Store, obj runtime.Object, opts writeOptions) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if err := matchNamespace(m, req, store); err != nil {
		return nil, err
	}
	if m.GetResourceVersion() != "" {
		return nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	generated := m.GetName() == "" && m.GetGenerateName() != ""
	for attempt := 0; ; attempt++ {
		candidate := obj.DeepCopyObject()
		cm, _ := meta.Accessor(candidate)
		if generated {
			cm.SetName(generateName(cm.GetGenerateName()))
		}
		fillSystemFields(cm)
		if opts.manager != "" {
			if candidate, err = a.trackUpdate(store.Info, req.Subresource, store.New(), candidate, opts.manager); err != nil {
				return nil, err
			}
			cm = mustAccessor(candidate)
		}
		store.Info.PrepareForCreate(candidate)
		if errs := store.Info.ValidateCreate(candidate); len(errs) > 0 {
			return nil, apierrors.NewInvalid(store.Info.GroupVersionKind().GroupKind(), cm.GetName(), errs)
		}
		if err := a.admitNamespace(ctx, store, cm); err != nil {
			return nil, err
		}
		release := func() {}
		if hook := a.hooks[store.Info.GroupVersionResource()].beforeCreate; hook != nil {
			if release, err = hook(ctx, candidate, opts.dry); err != nil {
				return nil, err
			}
		}
		if opts.dry {
			return candidate, nil
		}
		created, err := store.Create(ctx, candidate)
		if err != nil {
			release()
		}
		if generated && apierrors.IsAlreadyExists(err) && attempt < generateNameAttempts {
			continue
		}
		return created, err
	}
}

// matchNamespace puts the object in the namespace of the request, refusing
// a body that names another one.
func matchNamespace(m metav1.Object, req *request.Info, store *registry.Store) error {
	if !store.Info.Namespaced {
		m.SetNamespace("")
		return nil
	}
	if m.GetNamespace() == "" {
		m.SetNamespace(req.Namespace)
	}
	if m.GetNamespace() != req.Namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// fillSystemFields sets what the server owns on a new object.
func fillSystemFields(m metav1.Object) {
	m.SetUID(uuid.NewUUID())
	m.SetCreationTimestamp(metav1.Now())
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetSelfLink("")
}

// generateName appends five random characters to base, trimming base so
// that the result is at most 63 characters, as kube-apiserver does.
func generateName(base string) string {
	const maxBase = 63 - 5
	if len(base) > maxBase {
		base = base[:maxBase]
	}
	return base + utilrand.String(5)
}

func (a *API) update(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	dry, err := dryRun(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	obj, err := decodeBody(w, r, store)
	if err != nil {
		writeError(w, r, err)
		return
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		writeError(w, r, apierrors.NewBadRequest(err.Error()))
		return
	}
	if m.GetName() != req.Name {
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf(
			"the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), req.Name)))
		return
	}
	if err := matchNamespace(m, req, store); err != nil {
		writeError(w, r, err)
		return
	}
	updated, err := a.updateObject(r.Context(), req, store, obj, writeOptions{dry: dry, manager: managerName(r)})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeObject(w, r, http.StatusOK, updated, store.Info.GroupVersionKind(), store.Serializers())
}

// updateObject stores obj over the current object. A resourceVersion in obj
// makes the update conditional on it; without one the update applies to
// whatever is current.
func (a *API) updateObject(ctx context.Context, req *request.Info, store *registry.Store, obj runtime.Object, opts writeOptions) (runtime.Object, error) {
	return a.updateWith(ctx, req, store, opts, func(runtime.Object) (runtime.Object, error) {
		return obj.DeepCopyObject(), nil
	})
}

// updateWith stores what desired makes of the current object, through the
// update strategy: the resourceVersion it carries must be current (or
// empty), status and system fields follow the sub-resource's rules, and the
// result is validated. desired runs again if another write intervenes.
func (a *API) updateWith(ctx context.Context, req *request.Info, store *registry.Store, opts writeOptions, desired registry.UpdateFunc) (runtime.Object, error) {
	info := store.Info
	prepare := func(current runtime.Object) (runtime.Object, error) {
		next, err := desired(current)
		if err != nil {
			return nil, err
		}
		if opts.manager != "" {
			if next, err = a.trackUpdate(info, req.Subresource, current, next, opts.manager); err != nil {
				return nil, err
			}
		}
		cur := mustAccessor(current)
		if rv := mustAccessor(next).GetResourceVersion(); rv != "" && rv != cur.GetResourceVersion() {
			return nil, apierrors.NewConflict(store.GroupResource(), req.Name, fmt.Errorf(registry.ConflictMessage))
		}
		if hook := a.hooks[info.GroupVersionResource()].beforeUpdate; hook != nil && req.Subresource == "" {
			if err := hook(ctx, next, current); err != nil {
				return nil, err
			}
		}
		if req.Subresource == "status" {
			next = info.PrepareForStatusUpdate(next, current)
		}
		keepSystemFields(mustAccessor(next), cur)
		if req.Subresource != "status" {
			info.PrepareForUpdate(next, current)
		}
		if errs := info.ValidateUpdate(next, current); len(errs) > 0 {
			return nil, apierrors.NewInvalid(info.GroupVersionKind().GroupKind(), req.Name, errs)
		}
		return next, nil
	}
	if opts.dry {
		current, err := store.Get(ctx, req.Namespace, req.Name)
		if err != nil {
			return nil, err
		}
		return prepare(current)
	}
	updated, err := store.Update(ctx, req.Namespace, req.Name, prepare)
	if err != nil {
		return nil, err
	}
	return a.finishDeletion(ctx, store, updated)
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

func mustAccessor(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("object %T has no metadata: %v", obj, err)) // decoders only produce objects with metadata
	}
	return m
}

// writeOptions are the options every write takes.
type writeOptions struct {
	dry bool
	// manager, when set, is recorded in managedFields as the manager of
	// the fields the write changes (an Update operation).
	manager string
}

// trackUpdate records in next's managedFields what manager changed from
// live, as kube-apiserver does for every create, update and patch.
func (a *API) trackUpdate(info *resources.Info, subresource string, live, next runtime.Object, manager string) (runtime.Object, error) {
	fm, err := a.fieldManagers.get(info, subresource)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	// The field manager types objects by their kind, which decoded bodies
	// and new objects may not carry.
	gvk := info.GroupVersionKind()
	live.GetObjectKind().SetGroupVersionKind(gvk)
	next.GetObjectKind().SetGroupVersionKind(gvk)
	return fm.UpdateNoErrors(live, next, manager), nil
}
