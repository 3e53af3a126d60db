// Package handlers implements the Kubernetes API verbs once for every
// resource: it parses options, negotiates the representation, reads from
// the watch cache and hands writes to the write pipeline. Handlers never
// switch on a kind or a resource name; what differs between resources
// lives in their backend (resources.Info, the strategy, registry.Hooks).
package handlers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	requestmetrics "k8s.io/apiserver/pkg/endpoints/handlers/metrics"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"
	clientopenapi "k8s.io/client-go/openapi"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/openapi"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
	"github.com/kapi-dev/kapi/internal/resources"
)

// Options tune the API.
type Options struct {
	// MinRequestTimeout is the least time a watch without timeoutSeconds
	// runs; each such watch ends at a random time between it and twice it.
	MinRequestTimeout time.Duration
	// Authorizer answers the checks handlers make beyond the request's
	// own (the unsafe deletion of a corrupt object); nil allows them.
	Authorizer authorizer.Authorizer
	// Stopping is cancelled when the server shuts down: watches then
	// end, as their clients would see at their timeout, so that the
	// server need not wait for them.
	Stopping context.Context
	// MaxWatches bounds the clients' watches open at once (10,000 if
	// zero; the server's own are not counted): each holds a buffer of
	// events and a stream, and one more is refused with 429 and
	// Retry-After, for the client to retry.
	MaxWatches int
	// ServerAddress is the address /api tells clients to reach the server
	// at ("host:port"), as kube-apiserver tells its advertised one; nil,
	// or an empty answer, names the address the request came to.
	ServerAddress func() string
}

func (a *API) serverAddress(r *http.Request) string {
	if a.opts.ServerAddress != nil {
		if addr := a.opts.ServerAddress(); addr != "" {
			return addr
		}
	}
	return r.Host
}

// API serves every resource of a registry.
type API struct {
	opts     Options
	version  string
	reg      *registry.Registry
	pipeline *pipeline.Pipeline
	watches  atomic.Int64 // open now, against opts.MaxWatches
	segments listSegments // large lists' items sections, kept compressed

	docsMu sync.Mutex
	docs   *documents
}

// documents are what is derived from one registry snapshot: discovery and
// OpenAPI, rebuilt when the registry changes.
type documents struct {
	generation int64
	discovery  *discovery
	openAPI    http.Handler
}

// New returns the API over the backends p writes to.
func New(p *pipeline.Pipeline, version string, opts Options) *API {
	requestmetrics.Register() // the request body sizes readBody records
	limitJSONPatchCopies()
	if opts.MinRequestTimeout <= 0 {
		opts.MinRequestTimeout = 30 * time.Minute
	}
	if opts.MaxWatches <= 0 {
		opts.MaxWatches = 10000
	}
	return &API{opts: opts, version: version, reg: p.Registry(), pipeline: p}
}

// documentsFor returns discovery and OpenAPI for a snapshot.
func (a *API) documentsFor(snap *registry.Snapshot) *documents {
	a.docsMu.Lock()
	defer a.docsMu.Unlock()
	if a.docs == nil || a.docs.generation != snap.Generation {
		openAPI := openapi.NewHandler(snap.Resources, a.version)
		if a.docs != nil {
			openAPI = openapi.NextHandler(a.docs.openAPI, snap.Resources, a.version)
		}
		a.docs = &documents{
			generation: snap.Generation,
			discovery:  newDiscovery(snap.Resources, a.version),
			openAPI:    openAPI,
		}
	}
	return a.docs
}

// OpenAPIV3 reads the current /openapi/v3 documents in process, making
// only those asked for (openapi.InProcessV3).
func (a *API) OpenAPIV3() clientopenapi.Client {
	return openapi.InProcessV3(func() http.Handler { return a.documentsFor(a.reg.Snapshot()).openAPI })
}

// ServeHTTP routes discovery and resource requests.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	snap := a.reg.Snapshot()
	if strings.HasPrefix(r.URL.Path, "/openapi/") {
		a.documentsFor(snap).openAPI.ServeHTTP(w, r)
		return
	}
	req, ok := request.From(r.Context())
	if !ok {
		req = request.Parse(r)
	}
	if !req.IsResourceRequest {
		a.documentsFor(snap).discovery.serve(w, r, req, a.serverAddress(r))
		return
	}
	store := snap.Lookup(schema.GroupVersionResource{Group: req.Group, Version: req.Version, Resource: req.Resource})
	if req.ProxyPath && servesGroup(snap, req.Group) {
		noRoute(w, r, req, nil)
		return
	}
	if store == nil && !servesGroup(snap, req.Group) {
		// No route of the group: kube-apiserver's mux answers.
		http.NotFound(w, r)
		return
	}
	var connecter rest.Connecter
	if store != nil && req.Subresource != "" {
		connecter = store.Backend().Hooks.Connects[req.Subresource]
	}
	if store != nil && !store.Typed() {
		// apiextensions' handler warns of a deprecated version first,
		// whatever the path then answers.
		warnDeprecated(r, store)
	}
	// kube-apiserver's /watch/ routes of built-in resources take no
	// sub-resources (apiextensions' handler answers its 405).
	if store == nil || !routable(store.Info, req, takesPath(connecter)) || store.Typed() && req.WatchPath && req.Subresource != "" {
		noRoute(w, r, req, store)
		return
	}
	if store.Info.Namespaced && req.EmptyNamespace && req.Name != "" {
		// An object's route with an empty namespace.
		writeError(w, r, apierrors.NewBadRequest("Namespace parameter required."))
		return
	}
	req.Deprecated, req.RemovedRelease = store.Info.Deprecated, store.Info.RemovedRelease
	if connecter != nil {
		if store.Typed() {
			warnDeprecated(r, store)
		}
		if err := checkPathName(req, store); err != nil {
			writeError(w, r, err)
			return
		}
		a.connect(w, r, req, store, connecter)
		return
	}
	if !a.allowed(store, req, r.Method) {
		switch {
		case store.Typed() && store.Info.Namespaced && req.Namespace == "" && req.Subresource == "" && !slices.Contains(store.Info.Verbs, "list"):
			// A namespaced resource that is not listed (bindings, local
			// access reviews) has no route across namespaces at all.
			writeError(w, r, errPathNotFound)
		case store.Typed() && req.WatchPath && r.Method != http.MethodGet:
			writeError(w, r, errMethodNotAllowed) // the /watch/ routes take GET alone
		case store.Typed() && req.Verb == "watch" && req.Subresource == "" && slices.Contains(store.Info.Verbs, "list"):
			if !req.WatchPath {
				warnDeprecated(r, store) // the list's route took it
			}
			a.watchUnsupported(w, r, req, store)
		case store.Typed():
			writeError(w, r, errMethodNotAllowed) // the router's
		case req.Namespace == "" && store.Info.Namespaced:
			http.NotFound(w, r) // custom resources across namespaces: reads only
		default:
			writeError(w, r, apierrors.NewMethodNotSupported(store.GroupResource(), req.Verb)) // apiextensions' handler's
		}
		return
	}
	if store.Typed() {
		if err := checkRoute(r, req, store); err != nil {
			writeError(w, r, err)
			return
		}
	}
	if store.Typed() {
		// kube-apiserver's routes of a deprecated version warn once a
		// route has taken the request.
		warnDeprecated(r, store)
	}
	if isWrite(req.Verb) {
		// As kube-apiserver, a write whose answer the client cannot take
		// is refused before it is carried out.
		if _, err := negotiateRead(r, store.Serializers(), "get"); err != nil {
			writeError(w, r, err)
			return
		}
	}
	// After the route's media types, as kube's storage keys the name.
	if err := checkObjectPath(r, req, store); err != nil {
		writeError(w, r, err)
		return
	}
	if c := store.Backend().Hooks.Computed; c != nil && req.Subresource == "" && (req.Verb == "get" || req.Verb == "list") {
		a.computed(w, r, req, store, c)
		return
	}
	if stream := store.Backend().Hooks.Streams[req.Subresource]; stream != nil {
		a.stream(w, r, req, store, stream)
		return
	}
	if req.Subresource == "scale" {
		a.scale(w, r, req, store)
		return
	}
	switch req.Verb {
	case "get":
		a.get(w, r, req, store)
	case "list":
		a.list(w, r, req, store)
	case "watch":
		a.watch(w, r, req, store)
	case "create":
		a.create(w, r, req, store)
	case "update":
		a.update(w, r, req, store)
	case "patch":
		a.patch(w, r, req, store)
	case "delete":
		a.delete(w, r, req, store)
	case "deletecollection":
		a.deleteCollection(w, r, req, store)
	default:
		writeError(w, r, errMethodNotAllowed)
	}
}

// checkObjectPath refuses what kube-apiserver's handlers refuse of the
// object a path names before they read a body: a custom resource's
// collection has no name to replace or patch, a name its storage makes no
// key of (a replace checks its body's name first), and export.
func checkObjectPath(r *http.Request, req *request.Info, store *registry.Store) error {
	if req.Name == "" && !store.Typed() && (req.Verb == "update" || req.Verb == "patch") {
		return apierrors.NewBadRequest("name must be provided")
	}
	// A computed resource's storage (componentstatuses) keys no name.
	if req.Verb != "update" && store.Backend().Hooks.Computed == nil {
		if err := checkPathName(req, store); err != nil {
			return err
		}
	}
	if req.Verb == "get" && store.Backend().Hooks.Streams[req.Subresource] == nil {
		return refuseExport(r)
	}
	return nil
}

// checkPathName refuses an object's name in the path that kube-apiserver's
// storage makes no key of: ".", "..", or one holding "/" or "%" is its
// 400; a NUL byte, which kapi's keys cannot hold, names nothing, as
// kube's storage finds nothing under it. (A replace checks its body's
// name first, then this.)
func checkPathName(req *request.Info, store *registry.Store) error {
	if req.Name == "" || req.Verb == "watch" || req.Verb == "create" && req.Subresource == "" {
		return nil // a watch selects by name; a create names its object in the body
	}
	if msgs := path.IsValidPathSegmentName(req.Name); len(msgs) > 0 {
		return apierrors.NewBadRequest(fmt.Sprintf("Name parameter invalid: %q: %s", req.Name, strings.Join(msgs, ";")))
	}
	if strings.ContainsRune(req.Namespace, 0) || strings.ContainsRune(req.Name, 0) {
		return apierrors.NewNotFound(store.GroupResource(), req.Name)
	}
	return nil
}

// refuseExport refuses a read asking for export, which kube-apiserver
// stopped supporting (any value but false or 0, the first one read).
func refuseExport(r *http.Request) error {
	if !strings.Contains(r.URL.RawQuery, "export") {
		return nil // most reads: no query to parse
	}
	values := r.URL.Query()["export"]
	if len(values) == 0 {
		return nil
	}
	switch strings.ToLower(values[0]) {
	case "false", "0":
		return nil
	}
	return apierrors.NewBadRequest("the export parameter, deprecated since v1.14, is no longer supported")
}

// noRoute answers a path no resource serves. Built-in resources get
// kube-apiserver's router's Status; for custom resources its handler of
// them answers a sub-resource their version lacks with the object's
// NotFound, and hands a cluster-scoped one asked for in a namespace, or
// a namespaced object asked for without one, to the mux.
func noRoute(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	switch {
	case store == nil || store.Typed():
		writeError(w, r, errNoRoute)
	case !store.Info.Namespaced && req.Namespace != "", store.Info.Namespaced && req.Namespace == "" && req.Name != "":
		http.NotFound(w, r) // scoped otherwise than the resource: the mux's
	case req.Subresource != "":
		writeError(w, r, apierrors.NewNotFound(schema.GroupResource{Group: req.Group, Resource: req.Resource}, req.Name))
	default:
		writeError(w, r, errNoRoute)
	}
}

// isWrite tells the verbs that change objects and answer with one.
func isWrite(verb string) bool {
	return verb == "create" || verb == "update" || verb == "patch" || verb == "delete"
}

// errNoRoute is kube-apiserver's answer for a path of a group-version it
// serves that no resource serves.
var errNoRoute = apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", "", 0, false)

// errPathNotFound is kube-apiserver's answer for a path under a served
// group-version it has no route for.
var errPathNotFound = apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", "", 0, false)

// errMethodNotAllowed is kube-apiserver's router's answer for a method a
// resource's path has no route for.
var errMethodNotAllowed = &apierrors.StatusError{ErrStatus: metav1.Status{
	Status: metav1.StatusFailure, Code: http.StatusMethodNotAllowed, Reason: metav1.StatusReasonMethodNotAllowed,
	Message: "the server does not allow this method on the requested resource", Details: &metav1.StatusDetails{},
}}

// servesGroup reports whether kube-apiserver's router has routes under the
// group's path (/api for the core group): those of its built-in
// resources, in any version. A path under it that no route takes gets
// the router's Status; one under a group of custom resources alone, the
// mux's plain 404.
func servesGroup(snap *registry.Snapshot, group string) bool {
	for _, b := range snap.Backends() {
		for _, store := range b.Stores {
			if store.Typed() && store.Info.Group == group {
				return true
			}
		}
	}
	return false
}

// routable reports whether the path has the shape the resource is served
// at: namespaced resources under namespaces/NS (or across all of them for
// collections), cluster-scoped ones without, and only served sub-resources,
// followed by a path only when the sub-resource takes one (a proxy).
// A namespace's own path (/api/v1/namespaces/NAME) names its namespace
// too, as a namespace lives in itself.
func routable(info *resources.Info, req *request.Info, pathFollows bool) bool {
	ownNamespace := req.Resource == "namespaces" && req.Group == "" && !req.UnderNamespace
	if !info.Namespaced && req.Namespace != "" && !ownNamespace {
		return false
	}
	if info.Namespaced && req.Namespace == "" && req.Name != "" && !req.EmptyNamespace {
		return false
	}
	if req.Subresource != "" {
		return (len(req.Extra) == 0 || pathFollows) && info.Subresource(req.Subresource) != nil
	}
	// A resource only created (an access review) has no object paths.
	return req.Name == "" || slices.ContainsFunc(info.Verbs, takesName)
}

// warnDeprecated adds the warnings of the store's version (deprecated, or
// the CRD's own deprecation warning) to the answer.
func warnDeprecated(r *http.Request, store *registry.Store) {
	for _, msg := range store.Info.Warnings {
		warning.AddWarning(r.Context(), "", msg)
	}
}

// takesName reports whether a verb acts on one object by its path.
func takesName(verb string) bool {
	switch verb {
	case "get", "update", "patch", "delete":
		return true
	}
	return false
}

// takesPath reports whether a connecter reads the path that follows its
// sub-resource in the URL (a proxy's).
func takesPath(c rest.Connecter) bool {
	if c == nil {
		return false
	}
	_, takes, _ := c.NewConnectOptions()
	return takes
}

// implementedVerbs are the verbs this server carries out; a resource
// advertising others answers 405 for them until they exist.
var implementedVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// allowed reports whether the request's verb is served at its path. A
// namespaced resource across all namespaces is only read. For built-in
// resources, as kube-apiserver's router registers their routes, HEAD has
// none, a collection takes GET, POST and DELETE and an object GET, PUT,
// PATCH and DELETE; custom resources' handler goes by the verb alone.
func (a *API) allowed(store *registry.Store, req *request.Info, method string) bool {
	info := store.Info
	if !slices.Contains(implementedVerbs, req.Verb) {
		return false
	}
	if store.Typed() && (method == http.MethodHead || req.WatchPath && method != http.MethodGet) {
		return false // kube-apiserver's routes take no HEAD, its /watch/ ones GET alone
	}
	if req.Subresource != "" {
		return slices.Contains(info.Subresource(req.Subresource).Verbs, req.Verb)
	}
	if info.Namespaced && req.Namespace == "" && req.Verb != "list" && req.Verb != "watch" {
		return false
	}
	if store.Typed() && req.Name == "" && (method == http.MethodPut || method == http.MethodPatch) {
		return false
	}
	if req.Verb == "create" && req.Name != "" && store.Typed() {
		// POST to a named object has no route; apiextensions' handler
		// creates the custom resource the body names.
		return false
	}
	return slices.Contains(info.Verbs, req.Verb)
}

// fromStorage returns items read from the watch cache in the store's
// version.
func fromStorage(store *registry.Store, items []runtime.Object) ([]runtime.Object, error) {
	if !store.Converts() {
		return items, nil
	}
	out := make([]runtime.Object, len(items))
	for i, item := range items {
		converted, err := store.FromStorage(item)
		if err != nil {
			return nil, err
		}
		out[i] = converted
	}
	return out, nil
}

// checkRoute makes the checks kube-apiserver's router makes of a request
// to a built-in resource before any handler runs: a patch's media type
// (415), then the Accept header against what the route produces (406).
// A collection's GET route also streams watch events; the routes of
// streams (pods/log) produce media types of their own, and custom
// resources are served outside the router.
func checkRoute(r *http.Request, req *request.Info, store *registry.Store) error {
	if store.Backend().Hooks.Streams[req.Subresource] != nil {
		// A stream's route (a pod's log) produces its text first.
		return codecs.CheckRouteProducing(r, append([]string{"text/plain"}, codecs.MediaTypes(store.Serializers())...))
	}
	if req.Verb == "patch" {
		if _, err := negotiatePatchType(r, store); err != nil {
			return err
		}
	}
	var streams func() []string
	if req.Verb == "list" || req.Verb == "watch" {
		streams = func() []string { return watchMediaTypes(store) }
	}
	return codecs.CheckRoute(r, store.Serializers(), streams)
}
