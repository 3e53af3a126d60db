package handlers

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
	"github.com/kapi-dev/kapi/internal/resources"
)

// act serves a create that is an operation on other objects rather than a
// stored object (SPEC R6), such as a binding POSTed to bindings or to
// pods/NAME/binding: the body is decoded as the sub-resource's kind and
// handed to the type's action.
func (a *API) act(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store, dry bool) {
	sub := store.Info.Subresource(req.Subresource)
	if store.Backend().Hooks.Actions[req.Subresource] == nil || (sub != nil && sub.Kind == "") {
		writeError(w, r, errMethodNotAllowed) // no POST route
		return
	}
	// As kube-apiserver's create handler, the answer's representation is
	// agreed on before anything is done: an action answers no Table.
	if _, err := codecs.NegotiateOutput(r, codecs.Factory.SupportedMediaTypes()); err != nil {
		writeError(w, r, err)
		return
	}
	// The body is of the sub-resource's kind, which a resource of that
	// kind serves too (Binding: bindings).
	bodyStore := a.storeForKind(store, sub)
	if bodyStore == nil {
		writeError(w, r, errMethodNotAllowed)
		return
	}
	var accepts []schema.GroupVersion
	if sub != nil {
		accepts = sub.Accepts
	}
	obj, err := decodeBodyAccepting(w, r, bodyStore, accepts)
	if err != nil {
		writeError(w, r, err)
		return
	}
	m := mustAccessor(obj)
	if sub == nil || !sub.KeepsSystemFields {
		rest.WipeObjectMetaSystemFields(m)
	}
	// The body is in the request's namespace when the resource acted on
	// is namespaced, whatever its own kind (an Eviction).
	if err := matchNamespace(m, req, store); err != nil {
		writeError(w, r, err)
		return
	}
	result, err := a.pipeline.Act(r.Context(), store, bodyStore, req.Namespace, req.Name, obj,
		pipeline.Options{DryRun: dry, Manager: managerName(r), Subresource: req.Subresource, Asked: asked(r)})
	if err != nil {
		writeError(w, r, err)
		return
	}
	if result == nil {
		writeCreated(w, r)
		return
	}
	if status, ok := result.(*metav1.Status); ok {
		// An action answering with a Status answers with its code.
		code := int(status.Code)
		if code == 0 {
			code = http.StatusCreated
			status.Code = int32(code)
		}
		writeObject(w, r, code, status, statusGVK, codecs.Factory.SupportedMediaTypes())
		return
	}
	result.GetObjectKind().SetGroupVersionKind(bodyStore.Info.GroupVersionKind())
	writeObject(w, r, http.StatusCreated, result, bodyStore.Info.GroupVersionKind(), bodyStore.Serializers())
}

// storeForKind finds the store of the kind a sub-resource exchanges.
func (a *API) storeForKind(store *registry.Store, sub *resources.SubresourceInfo) *registry.Store {
	if sub == nil {
		return store
	}
	group, version := sub.Group, sub.Version
	if version == "" {
		group, version = store.Info.Group, store.Info.Version
	}
	gvk := schema.GroupVersionKind{Group: group, Version: version, Kind: sub.Kind}
	if s := a.reg.Snapshot().ForKind(gvk); s != nil {
		return s
	}
	if codecs.Scheme.Recognizes(gvk) {
		return registry.StoreOfKind(gvk) // a kind only exchanged (Eviction)
	}
	return nil
}

// writeCreated answers an action the way kube-apiserver does: a success
// Status with code 201.
func writeCreated(w http.ResponseWriter, r *http.Request) {
	status := &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusCreated}
	writeObject(w, r, http.StatusCreated, status, statusGVK, codecs.Factory.SupportedMediaTypes())
}
