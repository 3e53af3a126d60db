package handlers

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/audit"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
)

// computed serves a get or list of a resource whose objects are made at
// each read (component statuses): a list of them all, with no resource
// version, or the one named.
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
	out, gvk, err := target.transform(store, nil, c.List(r.Context()), &metav1.ListMeta{})
	if err != nil {
		writeError(w, r, err)
		return
	}
	audit.LogResponseObject(r.Context(), out, gvk.GroupVersion(), codecs.Factory)
	writeEncoded(w, r, http.StatusOK, out, gvk, target.info)
}
