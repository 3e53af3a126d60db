package handlers

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
)

func (a *API) create(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	dry, err := dryRun(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if req.Subresource != "" || store.Backend().Hooks.Actions[""] != nil {
		a.act(w, r, req, store, dry)
		return
	}
	obj, err := decodeBody(w, r, store)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// As kube's create handler, the fields only the server sets are
	// cleared before anything records them (managed fields).
	rest.WipeObjectMetaSystemFields(mustAccessor(obj))
	if err := matchNamespace(mustAccessor(obj), req, store); err != nil {
		writeError(w, r, err)
		return
	}
	pipeline.DedupOwnerReferences(r.Context(), obj, false)
	created, err := a.pipeline.Create(r.Context(), store, obj, pipeline.Options{DryRun: dry, Manager: managerName(r), Asked: asked(r)})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeResult(w, r, http.StatusCreated, created, store)
}

// matchNamespace puts the object in the namespace of the request, refusing
// a body that names another one.
func matchNamespace(m metav1.Object, req *request.Info, store *registry.Store) error {
	if !store.Info.Namespaced {
		m.SetNamespace("")
		return nil
	}
	return pipeline.InNamespace(m, req.Namespace)
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
	// As kube-apiserver, the namespace is checked first.
	if err := matchNamespace(m, req, store); err != nil {
		writeError(w, r, err)
		return
	}
	if err := checkName(m.GetName(), req.Name); err != nil {
		writeError(w, r, err)
		return
	}
	if err := checkPathName(req, store); err != nil {
		writeError(w, r, err)
		return
	}
	pipeline.DedupOwnerReferences(r.Context(), obj, false)
	opts := pipeline.Options{DryRun: dry, Manager: managerName(r), Subresource: req.Subresource, Asked: asked(r)}
	updated, created, err := a.pipeline.Put(r.Context(), store, obj, opts, func() error { return a.authorizeCreate(r, req, store) })
	if err != nil {
		writeError(w, r, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	writeResult(w, r, code, updated, store)
}

func mustAccessor(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("object %T has no metadata: %v", obj, err)) // decoders only produce objects with metadata
	}
	return m
}

// checkName refuses an object written to the URL of another, with
// kube-apiserver's words for one that names none.
func checkName(name, urlName string) error {
	if name == "" {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s based on URL) was undeterminable: name must be provided", urlName))
	}
	if name != urlName {
		return errNameMismatch(name, urlName)
	}
	return nil
}

// errNameMismatch is kube-apiserver's 400 for an object named otherwise
// than its URL.
func errNameMismatch(name, urlName string) error {
	return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", name, urlName))
}
