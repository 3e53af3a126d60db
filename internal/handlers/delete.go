package handlers

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
)

func (a *API) delete(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	opts, dry, err := deleteOptions(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var obj runtime.Object
	var gone bool
	if store == a.namespaces {
		obj, gone, err = a.deleteNamespace(r.Context(), req.Name, opts, dry)
	} else {
		obj, gone, err = a.deleteObject(r.Context(), store, req.Namespace, req.Name, opts, dry)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	a.writeDeleted(w, r, store, obj, gone, opts)
}

// writeDeleted answers a delete with the object or a success Status by
// resource. Like kube-apiserver, it answers 202 only when the object is
// kept and the client asked for cascading deletion with
// orphanDependents=false; 200 otherwise.
func (a *API) writeDeleted(w http.ResponseWriter, r *http.Request, store *registry.Store, obj runtime.Object, gone bool, opts *metav1.DeleteOptions) {
	code := http.StatusOK
	//nolint:staticcheck // orphanDependents is deprecated but still decides the code
	if !gone && opts.OrphanDependents != nil && !*opts.OrphanDependents {
		code = http.StatusAccepted
	}
	if store.Info.ReturnsDeletedObject || !gone {
		writeObject(w, r, code, obj, store.Info.GroupVersionKind(), store.Serializers())
		return
	}
	m := mustAccessor(obj)
	status := &metav1.Status{
		Status: metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name: m.GetName(), Group: store.Info.Group, Kind: store.Info.Resource, UID: m.GetUID(),
		},
	}
	writeObject(w, r, code, status, statusGVK, codecs.Factory.SupportedMediaTypes())
}

// deleteOptions reads DeleteOptions from the body, if any, and the query.
func deleteOptions(r *http.Request) (*metav1.DeleteOptions, bool, error) {
	opts := &metav1.DeleteOptions{}
	data, err := readBody(r)
	if err != nil {
		return nil, false, err
	}
	if len(data) > 0 {
		info, err := codecs.NegotiateInput(r.Header.Get("Content-Type"), codecs.Factory.SupportedMediaTypes())
		if err != nil {
			return nil, false, err
		}
		gvk := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
		if _, _, err := info.Serializer.Decode(data, &gvk, opts); err != nil {
			return nil, false, apierrors.NewBadRequest(fmt.Sprintf("unable to decode delete options: %v", err))
		}
	}
	if err := codecs.ParameterCodec.DecodeParameters(r.URL.Query(), coreV1, opts); err != nil {
		return nil, false, apierrors.NewBadRequest(err.Error())
	}
	dry, err := checkDryRun(r, opts.DryRun) // from the body or the query
	if err != nil {
		return nil, false, err
	}
	return opts, dry, nil
}

// checkPreconditions enforces DeleteOptions.Preconditions.
func checkPreconditions(store *registry.Store, opts *metav1.DeleteOptions, obj runtime.Object) error {
	p := opts.Preconditions
	if p == nil {
		return nil
	}
	m := mustAccessor(obj)
	if p.UID != nil && *p.UID != m.GetUID() {
		return apierrors.NewConflict(store.GroupResource(), m.GetName(), fmt.Errorf(
			"Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, m.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
		return apierrors.NewConflict(store.GroupResource(), m.GetName(), fmt.Errorf(
			"Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v",
			*p.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}

// deleteObject deletes an object, or, while it has finalizers, marks it with
// a deletion timestamp and keeps it. gone tells which happened.
func (a *API) deleteObject(ctx context.Context, store *registry.Store, namespace, name string, opts *metav1.DeleteOptions, dry bool) (obj runtime.Object, gone bool, err error) {
	current, err := store.Get(ctx, namespace, name)
	if err != nil {
		return nil, false, err
	}
	if err := checkPreconditions(store, opts, current); err != nil {
		return nil, false, err
	}
	if len(mustAccessor(current).GetFinalizers()) > 0 {
		if dry {
			markDeleting(current)
			return current, false, nil
		}
		marked, err := store.Update(ctx, namespace, name, func(cur runtime.Object) (runtime.Object, error) {
			if err := checkPreconditions(store, opts, cur); err != nil {
				return nil, err
			}
			markDeleting(cur)
			return cur, nil
		})
		if err != nil {
			return nil, false, err
		}
		// The finalizers may have been removed in between.
		obj, err := a.finishDeletion(ctx, store, marked)
		return obj, len(mustAccessor(marked).GetFinalizers()) == 0, err
	}
	if dry {
		return current, true, nil
	}
	deleted, err := store.Delete(ctx, namespace, name, func(cur runtime.Object) error {
		if len(mustAccessor(cur).GetFinalizers()) > 0 {
			return apierrors.NewConflict(store.GroupResource(), name, fmt.Errorf(registry.ConflictMessage))
		}
		return checkPreconditions(store, opts, cur)
	})
	if err == nil {
		a.afterDelete(ctx, store, deleted)
	}
	return deleted, err == nil, err
}

// markDeleting sets the deletion timestamp, once.
func markDeleting(obj runtime.Object) {
	m := mustAccessor(obj)
	if m.GetDeletionTimestamp() == nil {
		now := metav1.Now()
		var zero int64
		m.SetDeletionTimestamp(&now)
		m.SetDeletionGracePeriodSeconds(&zero)
	}
}

// finishDeletion removes an object being deleted once its last finalizer is
// gone; otherwise it returns obj unchanged.
func (a *API) finishDeletion(ctx context.Context, store *registry.Store, obj runtime.Object) (runtime.Object, error) {
	m := mustAccessor(obj)
	if m.GetDeletionTimestamp() == nil || len(m.GetFinalizers()) > 0 || store == a.namespaces {
		return obj, nil
	}
	rv := m.GetResourceVersion()
	_, err := store.Delete(ctx, m.GetNamespace(), m.GetName(), func(cur runtime.Object) error {
		if mustAccessor(cur).GetResourceVersion() != rv {
			return errChanged
		}
		return nil
	})
	if err != nil && err != errChanged && !apierrors.IsNotFound(err) {
		return nil, err
	}
	if err == nil {
		a.afterDelete(ctx, store, obj)
	}
	return obj, nil
}

// afterDelete runs the resource's afterDelete hook.
func (a *API) afterDelete(ctx context.Context, store *registry.Store, obj runtime.Object) {
	if hook := a.hooks[store.Info.GroupVersionResource()].afterDelete; hook != nil {
		hook(context.WithoutCancel(ctx), obj)
	}
}

var errChanged = fmt.Errorf("object changed")

// deleteCollection deletes every object matching the selectors.
func (a *API) deleteCollection(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	opts, dry, err := deleteOptions(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	listOpts, err := listOptions(r, req, store)
	if err != nil {
		writeError(w, r, err)
		return
	}
	res, err := a.caches[store.Info.GroupVersionResource()].List(r.Context(),
		cache.ListRequest{Filter: filterFor(req, store, listOpts), Consistency: cache.Consistent})
	if err != nil {
		writeError(w, r, cacheError(err))
		return
	}
	for _, item := range res.Items {
		m := mustAccessor(item)
		if _, _, err := a.deleteObject(r.Context(), store, m.GetNamespace(), m.GetName(), opts, dry); err != nil && !apierrors.IsNotFound(err) {
			writeError(w, r, err)
			return
		}
	}
	list, err := store.NewListOf(res.Items)
	if err != nil {
		writeError(w, r, err)
		return
	}
	gvk := store.Info.GroupVersionKind()
	gvk.Kind += "List"
	writeObject(w, r, http.StatusOK, list, gvk, store.Serializers())
}

// coreV1 is the group-version whose query-parameter conversions every
// option type has.
var coreV1 = schema.GroupVersion{Version: "v1"}
