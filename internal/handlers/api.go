// Package handlers implements the Kubernetes API verbs once for every
// resource: it parses options, negotiates the representation, applies the
// resource's strategy and talks to the registry stores. Handlers never
// switch on a kind; what differs between resources lives in resources.Info.
package handlers

import (
	"context"
	"fmt"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/openapi"
	"k8s.io/apimachinery/pkg/runtime"
	"net/http"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
	"github.com/kapi-dev/kapi/internal/resources"
	"github.com/kapi-dev/kapi/internal/storage"
)

// Options tune the API.
type Options struct {
	// MinRequestTimeout is the least time a watch without timeoutSeconds
	// runs; each such watch ends at a random time between it and twice it.
	MinRequestTimeout time.Duration
	// Cache tunes every resource's watch cache.
	Cache cache.Options
}

// API serves every resource of a registry.
type API struct {
	opts       Options
	caches     map[schema.GroupVersionResource]*cache.Cache
	resources  *resources.Registry
	stores     map[schema.GroupVersionResource]*registry.Store
	namespaces *registry.Store
	discovery  *discovery
	openAPI    http.Handler
	virtual    map[string]virtualCreate // by "resource" or "resource/subresource"
	hooks      map[schema.GroupVersionResource]storeHooks

	fieldManagers fieldManagers
}

// New returns the API over the resources of reg stored in s.
func New(reg *resources.Registry, s storage.Store, version string, opts Options) *API {
	if opts.MinRequestTimeout <= 0 {
		opts.MinRequestTimeout = 30 * time.Minute
	}
	a := &API{
		opts: opts, resources: reg,
		stores: map[schema.GroupVersionResource]*registry.Store{},
		caches: map[schema.GroupVersionResource]*cache.Cache{},
	}
	for _, g := range reg.Groups() {
		for _, v := range g.Versions {
			for _, info := range v.Resources {
				store := registry.NewStore(info, s)
				gvr := info.GroupVersionResource()
				a.stores[gvr] = store
				cacheOpts := opts.Cache
				if store.Typed() {
					cacheOpts.Prepare = warmEncodings
				}
				a.caches[gvr] = cache.New(s, store.CollectionPrefix(""), store.Decode, cacheOpts)
			}
		}
	}
	a.namespaces = a.stores[schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}]
	a.discovery = newDiscovery(reg, version)
	a.openAPI = openapi.NewHandler(reg, version)
	a.virtual = map[string]virtualCreate{"bindings": a.bindPod, "pods/binding": a.bindPod}
	a.hooks = map[schema.GroupVersionResource]storeHooks{
		servicesGVR: {beforeCreate: a.allocateService, beforeUpdate: a.keepServiceAllocations, afterDelete: a.releaseService},
	}
	return a
}

// Run keeps every watch cache current until ctx ends.
func (a *API) Run(ctx context.Context) {
	for _, c := range a.caches {
		go c.Run(ctx)
	}
}

// WaitReady blocks until every watch cache has been built.
func (a *API) WaitReady(ctx context.Context) error {
	for _, c := range a.caches {
		if err := c.WaitReady(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Store returns the store of a served resource, or nil.
func (a *API) Store(gvr schema.GroupVersionResource) *registry.Store { return a.stores[gvr] }

// ServeHTTP routes discovery and resource requests.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/openapi/") {
		a.openAPI.ServeHTTP(w, r)
		return
	}
	req := request.Parse(r)
	if !req.IsResourceRequest {
		a.discovery.serve(w, r, req)
		return
	}
	store := a.stores[schema.GroupVersionResource{Group: req.Group, Version: req.Version, Resource: req.Resource}]
	if store == nil || !routable(store.Info, req) {
		writeError(w, r, errNoRoute)
		return
	}
	if !a.allowed(store.Info, req) {
		writeError(w, r, apierrors.NewMethodNotSupported(store.GroupResource(), req.Verb))
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
		writeError(w, r, apierrors.NewMethodNotSupported(store.GroupResource(), req.Verb))
	}
}

// errNoRoute is kube-apiserver's answer for a path no resource serves.
var errNoRoute = apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", "", 0, false)

// routable reports whether the path has the shape the resource is served
// at: namespaced resources under namespaces/NS (or across all of them for
// collections), cluster-scoped ones without, and only served sub-resources.
func routable(info *resources.Info, req *request.Info) bool {
	if info.Resource != "namespaces" {
		if !info.Namespaced && req.Namespace != "" {
			return false
		}
		if info.Namespaced && req.Namespace == "" && req.Name != "" {
			return false
		}
	}
	if req.Subresource != "" {
		return len(req.Extra) == 0 && info.Subresource(req.Subresource) != nil
	}
	return true
}

// implementedVerbs are the verbs this server carries out; a resource
// advertising others answers 405 for them until they exist.
var implementedVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

func (a *API) allowed(info *resources.Info, req *request.Info) bool {
	if !slices.Contains(implementedVerbs, req.Verb) {
		return false
	}
	if req.Subresource != "" {
		return slices.Contains(info.Subresource(req.Subresource).Verbs, req.Verb)
	}
	if req.Verb == "create" && req.Name != "" {
		return false // POST to a named object has no route
	}
	return slices.Contains(info.Verbs, req.Verb)
}

// CreateInternal creates obj on behalf of the server itself, through the
// same preparation, validation and admission as a client's create.
func (a *API) CreateInternal(ctx context.Context, obj runtime.Object) error {
	gvks, _, err := codecs.Scheme.ObjectKinds(obj)
	if err != nil {
		return err
	}
	gvk := gvks[0]
	for gvr, store := range a.stores {
		if store.Info.GroupVersionKind() == gvk && gvr.Resource == store.Info.Resource {
			m := mustAccessor(obj)
			req := &request.Info{Namespace: m.GetNamespace(), Resource: store.Info.Resource, Verb: "create"}
			_, err := a.createObject(ctx, req, store, obj, writeOptions{manager: "kube-apiserver"})
			return err
		}
	}
	return fmt.Errorf("no resource serves %s", gvk)
}

// warmEncodings encodes a built-in object as a bare protobuf message before
// it is shared: the encoding fills every lazily cached field (a Quantity's
// string form), so that no later reader writes to the shared object, and it
// is the form protobuf lists are assembled from.
func warmEncodings(obj runtime.Object, enc *cache.Encodings) {
	enc.Encode(codecs.ProtobufRaw, obj)
}

// WatchState starts an in-process watch of every object of a resource,
// with the objects that exist when it starts: what controllers run on.
func (a *API) WatchState(ctx context.Context, gvr schema.GroupVersionResource) (*cache.Watcher, []runtime.Object, error) {
	c := a.caches[gvr]
	if c == nil {
		return nil, nil, fmt.Errorf("no resource %v", gvr)
	}
	w, objs, _, _, err := c.WatchWithState(ctx, cache.Filter{Prefix: a.stores[gvr].CollectionPrefix("")}, false)
	return w, objs, err
}

// storeHooks are what the server does around storing some resources'
// objects, beyond their strategy: allocations that live in other objects.
type storeHooks struct {
	// beforeCreate runs just before a create is stored; the function it
	// returns undoes it if the object is not stored after all.
	beforeCreate func(ctx context.Context, obj runtime.Object, dry bool) (func(), error)
	// beforeUpdate runs on the desired object of an update.
	beforeUpdate func(ctx context.Context, next, current runtime.Object) error
	// afterDelete runs once an object is gone.
	afterDelete func(ctx context.Context, obj runtime.Object)
}
