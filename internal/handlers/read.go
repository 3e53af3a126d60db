package handlers

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
)

func (a *API) get(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	obj, err := store.Get(r.Context(), req.Namespace, req.Name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeObject(w, r, http.StatusOK, obj, store.Info.GroupVersionKind(), store.Serializers())
}

func (a *API) list(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	keep, err := selectorFilter(r, store)
	if err != nil {
		writeError(w, r, err)
		return
	}
	list, err := store.List(r.Context(), req.Namespace, keep)
	if err != nil {
		writeError(w, r, err)
		return
	}
	gvk := store.Info.GroupVersionKind()
	gvk.Kind += "List"
	writeObject(w, r, http.StatusOK, list, gvk, store.Serializers())
}

// selectorFilter builds the filter for the labelSelector and fieldSelector
// options. Only the metadata fields every type supports are selectable.
func selectorFilter(r *http.Request, store *registry.Store) (func(runtime.Object) bool, error) {
	q := r.URL.Query()
	labelSel, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	fieldSel, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	for _, req := range fieldSel.Requirements() {
		if req.Field != "metadata.name" && req.Field != "metadata.namespace" {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("%q is not a known field selector: only %q, %q",
				req.Field, "metadata.name", "metadata.namespace"))
		}
	}
	if labelSel.Empty() && fieldSel.Empty() {
		return nil, nil
	}
	return func(obj runtime.Object) bool {
		m, err := meta.Accessor(obj)
		if err != nil {
			return false
		}
		return labelSel.Matches(labels.Set(m.GetLabels())) &&
			fieldSel.Matches(fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()})
	}, nil
}
