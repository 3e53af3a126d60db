package handlers

import (
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
)

// connect serves a sub-resource that connects the client to something
// else (a container's streams, a pod's port, a proxied path) as
// kube-apiserver's connect handler does: the connection's options are read
// from the query (a proxy's path from the URL past the sub-resource),
// admitted as a CONNECT, and handed to the type's connecter, whose handler
// then serves the request.
func (a *API) connect(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store, connecter rest.Connecter) {
	if !slices.Contains(connecter.ConnectMethods(), r.Method) {
		writeError(w, r, errMethodNotAllowed) // no route for the method
		return
	}
	if len(r.URL.Query()["dryRun"]) != 0 {
		writeError(w, r, apierrors.NewBadRequest("dryRun is not supported"))
		return
	}
	sub := store.Info.Subresource(req.Subresource)
	kind := schema.GroupVersionKind{Group: store.Info.Group, Version: store.Info.Version, Kind: sub.Kind}
	opts, err := connectOptions(r, req, connecter, kind.GroupVersion())
	if err != nil {
		writeError(w, r, apierrors.NewBadRequest(err.Error()))
		return
	}
	ctx := genericapirequest.WithNamespace(r.Context(), req.Namespace)
	// Admission sees the options in their internal form, as kube's does,
	// so a mutating plugin's change reaches the connection.
	if err := a.pipeline.AdmitConnect(ctx, store, req.Subresource, req.Namespace, req.Name, opts, kind); err != nil {
		writeError(w, r, err)
		return
	}
	handler, err := connecter.Connect(ctx, req.Name, opts, connectResponder{w: w, r: r})
	if err != nil {
		writeError(w, r, err)
		return
	}
	handler.ServeHTTP(w, r.WithContext(ctx))
}

// connectOptions reads a connection's options from the request's query,
// in the version of the sub-resource's kind; a connecter that takes a path
// gets the URL's path past the sub-resource under its key, with a leading
// slash and the request's trailing one.
func connectOptions(r *http.Request, req *request.Info, connecter rest.Connecter, gv schema.GroupVersion) (runtime.Object, error) {
	opts, takesPath, pathKey := connecter.NewConnectOptions()
	query := r.URL.Query()
	if takesPath {
		path := strings.Join(req.Extra, "/")
		if path != "" {
			path = "/" + path
		}
		if strings.HasSuffix(r.URL.Path, "/") && !strings.HasSuffix(path, "/") {
			path += "/"
		}
		query[pathKey] = []string{path}
	}
	if err := legacyscheme.ParameterCodec.DecodeParameters(query, gv, opts); err != nil {
		return nil, err
	}
	return opts, nil
}

// connectResponder answers for a connecter's handler that cannot connect
// (a kubelet that does not answer).
type connectResponder struct {
	w http.ResponseWriter
	r *http.Request
}

func (c connectResponder) Object(code int, obj runtime.Object) {
	writeObject(c.w, c.r, code, obj, obj.GetObjectKind().GroupVersionKind(), codecs.Factory.SupportedMediaTypes())
}

func (c connectResponder) Error(err error) { writeError(c.w, c.r, err) }
