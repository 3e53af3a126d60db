package handlers

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
)

// computed serves a get or list of a resource whose objects are made at
// each read (component statuses): a list of those its selectors select,
// with no resource version, or the one named.
func (a *API) computed(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store, c *registry.Computed) {
	target, err := negotiateRead(r, store.Serializers(), req.Verb)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if req.Verb == "get" {
		obj, err := c.Get(r.Context(), req.Name)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeTransformed(w, r, http.StatusOK, obj, store, target)
		return
	}
	opts, err := listOptions(r, req, store)
	if err != nil {
		writeError(w, r, err)
		return
	}
	filter := filterFor(req, store, opts)
	var items []runtime.Object
	for _, obj := range c.List(r.Context()) {
		if filter.Match == nil || filter.Match(obj) {
			items = append(items, obj)
		}
	}
	out, gvk, err := target.transform(store, nil, items, &metav1.ListMeta{})
	if err != nil {
		writeError(w, r, err)
		return
	}
	logResponse(r, out, gvk.GroupVersion())
	writeEncoded(w, r, http.StatusOK, out, gvk, target.info)
}

// watchUnsupported answers a watch of a resource that is listed but not
// watched (component statuses) as kube-apiserver does: its list route
// reads the options, then refuses the watch; the deprecated /watch/ path
// has no route for it.
func (a *API) watchUnsupported(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	if req.WatchPath {
		writeError(w, r, errPathNotFound)
		return
	}
	if _, err := listOptions(r, req, store); err != nil {
		writeError(w, r, err)
		return
	}
	writeError(w, r, apierrors.NewMethodNotSupported(store.GroupResource(), "watch"))
}
