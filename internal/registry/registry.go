package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/discovery"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/resources"
	"github.com/kapi-dev/kapi/internal/share"
	"github.com/kapi-dev/kapi/internal/storage"
)

// Registry holds the backend of every served resource. Readers take an
// immutable Snapshot; changes (a CustomResourceDefinition adding a resource)
// build a new snapshot and swap it in, so requests in flight keep the
// backends they started with and never see a half-made change.
type Registry struct {
	storage   storage.Store
	cacheOpts cache.Options
	convert   Converter

	mu      sync.Mutex // serialises changes
	snap    atomic.Pointer[Snapshot]
	hidden  map[schema.GroupResource]bool // served but not discovered (Spec.Hidden)
	running context.Context               // set by Run; caches of later backends start in it
	caches  sync.WaitGroup                // running caches
}

// Converter turns an object into another version of its group, as
// kube-apiserver converts between the versions a resource is served in.
type Converter interface {
	Convert(obj runtime.Object, to schema.GroupVersion) (runtime.Object, error)
}

// Storage is the store the resources are kept in, for the records that
// are no resource's objects (the node ports Service writes have claimed).
func (r *Registry) Storage() storage.Store { return r.storage }

// Converter is what turns objects between the versions of a group, nil
// if the registry was made without one.
func (r *Registry) Converter() Converter { return r.convert }

// Snapshot is the set of backends at one moment. It is never modified.
type Snapshot struct {
	// Generation counts changes; documents derived from a snapshot
	// (discovery, OpenAPI) are rebuilt when it moves.
	Generation int64
	// Resources indexes every served version for discovery, except those
	// of hidden backends (Spec.Hidden).
	Resources *resources.Registry
	backends  map[schema.GroupResource]*Backend
	stores    map[schema.GroupVersionResource]*Store
	byType    map[reflect.Type]*Backend // see Cached
	// replaced is closed when a newer snapshot is published.
	replaced chan struct{}
}

// Replaced is closed once a newer snapshot than s is published: those who
// follow the served resources (the APIService registration) wait on it.
func (s *Snapshot) Replaced() <-chan struct{} { return s.replaced }

// Backend is everything kapi keeps for one group-resource: the Info and
// store of each served version, the version objects are stored in, one
// watch cache (in the storage version), and the type's hooks.
type Backend struct {
	GroupResource  schema.GroupResource
	StorageVersion string
	Stores         map[string]*Store // by served version
	Cache          *cache.Cache
	Hooks          Hooks
	// Strategy is the type's write rules; nil means the generic ones of
	// its resources.Info.
	Strategy Strategy
	// StoredAs is the resource whose objects this one's are kept as
	// (Spec.StoredAs), empty if none.
	StoredAs schema.GroupResource
	// convert turns objects between the resource's versions.
	convert Converter

	stop context.CancelFunc // ends the cache
	// sharedCache is set when Cache is another backend's, the one this
	// backend's objects are stored as (Spec.StoredAs): that one runs it.
	sharedCache bool
}

// Storage is the store of the storage version.
func (b *Backend) Storage() *Store { return b.Stores[b.StorageVersion] }

// Convert returns obj in version gv of the backend's resource (itself if
// the backend has no converter: a built-in resource of one version).
func (b *Backend) Convert(obj runtime.Object, gv schema.GroupVersion) (runtime.Object, error) {
	return convertWith(b.convert, b.GroupResource, obj, gv)
}

// New returns an empty registry over s; convert turns objects between the
// versions of multi-version resources.
func New(s storage.Store, convert Converter, opts cache.Options) *Registry {
	r := &Registry{storage: s, cacheOpts: opts, convert: convert}
	r.snap.Store(&Snapshot{
		Resources: resources.New(nil),
		backends:  map[schema.GroupResource]*Backend{},
		stores:    map[schema.GroupVersionResource]*Store{},
		replaced:  make(chan struct{}),
	})
	return r
}

// Snapshot returns the current set of backends.
func (r *Registry) Snapshot() *Snapshot { return r.snap.Load() }

// Follow calls apply with the current snapshot before it returns; the
// function it returns calls apply again with each newer snapshot until
// ctx ends. Those who must know the served resources from the start (the
// APIService registration, webhooks' equivalent resources) follow them so.
func (r *Registry) Follow(apply func(*Snapshot)) func(ctx context.Context) {
	snap := r.Snapshot()
	apply(snap)
	return func(ctx context.Context) {
		for {
			select {
			case <-ctx.Done():
				return
			case <-snap.Replaced():
				snap = r.Snapshot()
				apply(snap)
			}
		}
	}
}

// Lookup returns the store serving a group-version-resource, or nil.
func (s *Snapshot) Lookup(gvr schema.GroupVersionResource) *Store { return s.stores[gvr] }

// Backend returns the backend of a group-resource, nil if it is not served.
func (s *Snapshot) Backend(gr schema.GroupResource) *Backend { return s.backends[gr] }

// Backends lists every backend, ordered by group and resource.
func (s *Snapshot) Backends() []*Backend {
	out := make([]*Backend, 0, len(s.backends))
	for _, b := range s.backends {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].GroupResource.Group != out[j].GroupResource.Group {
			return out[i].GroupResource.Group < out[j].GroupResource.Group
		}
		return out[i].GroupResource.Resource < out[j].GroupResource.Resource
	})
	return out
}

// ForKind returns the store of the preferred version serving a kind.
func (s *Snapshot) ForKind(gvk schema.GroupVersionKind) *Store {
	for _, store := range s.stores {
		if store.Info.GroupVersionKind() == gvk {
			return store
		}
	}
	return nil
}

// Spec describes a backend to add: the Info of every served version and the
// version its objects are stored in.
type Spec struct {
	Versions       []*resources.Info
	StorageVersion string
	Hooks          Hooks
	Strategy       Strategy
	// Schemas, for a type defined by data (a custom resource), are the
	// schema of each served version, by version name.
	Schemas map[string]Schema
	// Converter, when set, converts between the versions instead of the
	// registry's converter (custom resources convert as their CRD says).
	Converter Converter
	// StoredAs, when set, is the resource this one's objects are kept as:
	// under its keys, in its version (kube-apiserver's cohabiting
	// resources: events.k8s.io Events are core Events). Both APIs then
	// see the same objects.
	StoredAs *resources.Info
	// StorageUnserved is set when the storage version is not served: a
	// CRD may keep storing in a version it no longer serves. Its Info,
	// among Versions, is then used for storage alone: no request reaches
	// it and discovery does not list it.
	StorageUnserved bool
	// Hidden backends serve requests but are left out of discovery and
	// the OpenAPI documents (Snapshot.Resources) until SetHidden reveals
	// them: a CRD whose names are accepted but which is not established
	// yet, as kube-apiserver's discovery lists only established CRDs.
	Hidden bool
	// HashedVersion, when set, is the version discovery's
	// storageVersionHash names instead of StorageVersion: kube-apiserver
	// stores some resources in an older version than kapi does (one it
	// does not serve by default), and clients compare the hashes.
	HashedVersion string
	// KeepCache is set when the objects, and how they are read, are
	// those of the backend this one replaces, and only how they are
	// served changes (a CRD that starts terminating refuses creates and
	// lists fewer verbs): that backend's cache, and the watches on it,
	// carry on, as kube-apiserver keeps a CRD's storage until the CRD
	// is gone, and its watchers see its objects deleted.
	KeepCache bool
}

// Schema is what the schema of a version defined by data does when its
// objects are read, as kube-apiserver's custom resource codecs do.
type Schema interface {
	// Serializers decode request bodies: fields the schema does not know
	// are dropped and reported as strict decoding errors, and defaults
	// are set.
	Serializers() []runtime.SerializerInfo
	// FromStorage drops unknown fields from an object read from storage
	// and sets its defaults (a default added to the schema later applies
	// to objects stored before).
	FromStorage(obj runtime.Object)
	// Converted drops unknown fields from an object converted to the
	// schema's version from another; it gets no defaults of this version.
	Converted(obj runtime.Object)
	// StoredConverted is Converted for an object read from storage in
	// another version, repaired as one read from storage is.
	StoredConverted(obj runtime.Object)
	// Default sets the schema's defaults, as kube's defaulter of custom
	// resources does after mutating admission changed an object.
	Default(obj runtime.Object)
}

// Put adds backends, or replaces those of the same group-resources (whose
// caches are rebuilt, unless the spec keeps them), in one new snapshot: a
// spec stored as another's objects may follow that spec in the same call.
// A new backend serves once its cache is ready.
func (r *Registry) Put(specs ...Spec) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.snap.Load()
	added := map[schema.GroupResource]*Backend{}
	hide := map[schema.GroupResource]bool{}
	kept := map[schema.GroupResource]bool{}
	for _, spec := range specs {
		b, err := r.newBackend(spec, func(gr schema.GroupResource) *Backend {
			if b := added[gr]; b != nil {
				return b
			}
			return old.backends[gr]
		})
		if err != nil {
			return err
		}
		kept[b.GroupResource] = spec.KeepCache && old.backends[b.GroupResource] != nil
		added[b.GroupResource] = b
		hide[b.GroupResource] = spec.Hidden
	}
	for gr, hidden := range hide {
		r.setHiddenLocked(gr, hidden)
	}
	next := old.with(r.hidden, func(backends map[schema.GroupResource]*Backend) { maps.Copy(backends, added) })
	for gr, b := range added {
		if kept[gr] {
			continue // the cache runs on
		}
		if r.running != nil {
			b.start(r.running, &r.caches)
		}
		if prev := old.backends[gr]; prev != nil && prev.stop != nil {
			prev.stop()
		}
	}
	r.publish(next)
	return nil
}

// newBackend makes the backend of spec; served returns the backend a
// group-resource has, for the cache of objects stored as another kind's.
func (r *Registry) newBackend(spec Spec, served func(schema.GroupResource) *Backend) (*Backend, error) {
	if len(spec.Versions) == 0 {
		return nil, fmt.Errorf("registry: no versions")
	}
	gr := spec.Versions[0].GroupVersionResource().GroupResource()
	b := &Backend{GroupResource: gr, StorageVersion: spec.StorageVersion, Stores: map[string]*Store{}, Hooks: spec.Hooks, Strategy: spec.Strategy}
	if spec.StoredAs != nil {
		b.StoredAs = spec.StoredAs.GroupVersionResource().GroupResource()
	}
	for _, info := range spec.Versions {
		b.Stores[info.Version] = NewStore(info, r.storage)
		b.Stores[info.Version].schema = spec.Schemas[info.Version]
	}
	storageStore := b.Stores[spec.StorageVersion]
	if storageStore == nil {
		return nil, fmt.Errorf("registry: storage version %q of %s is not served", spec.StorageVersion, gr)
	}
	storageStore.unserved = spec.StorageUnserved
	hash := discovery.StorageVersionHash(gr.Group, spec.StorageVersion, storageStore.Info.Kind)
	switch s := spec.StoredAs; {
	case s != nil:
		hash = discovery.StorageVersionHash(s.Group, s.Version, s.Kind)
	case spec.HashedVersion != "":
		hash = discovery.StorageVersionHash(gr.Group, spec.HashedVersion, storageStore.Info.Kind)
	case spec.StorageUnserved:
		// As apiextensions' discovery, which hashes the storage version
		// only among the served ones.
		hash = ""
	}
	for _, info := range spec.Versions {
		// As kube-apiserver, only resources kept in storage have a hash:
		// those that can be watched (not reviews, bindings or component
		// statuses).
		if slices.Contains(info.Verbs, "watch") {
			info.StorageVersionHash = hash
		}
	}
	convert := r.convert
	if spec.Converter != nil {
		convert = spec.Converter
	}
	b.convert = convert
	var storedAs *Store
	if spec.StoredAs != nil {
		storedAs = NewStore(spec.StoredAs, r.storage)
	}
	for _, store := range b.Stores {
		store.backend = b
		switch {
		case storedAs != nil:
			store.prefix, store.storageGVK, store.convert, store.protobuf = storedAs.prefix, storedAs.gvk, r.convert, storedAs.protobuf
		case store != storageStore && convert != nil:
			store.storageGVK = storageStore.gvk
			store.convert = convert
			store.protobuf = storageStore.protobuf
		}
	}
	owner := cacheOwner(spec, served)
	switch prev := served(gr); {
	case owner != nil:
		// One cache of the shared objects, in the owner's kind, which
		// this backend's stores convert from as they read.
		b.Cache, b.sharedCache = owner.Cache, true
	case spec.KeepCache && prev != nil:
		// The cache runs on, stopped as this backend is.
		b.Cache, b.stop, b.sharedCache = prev.Cache, prev.stop, prev.sharedCache
	default:
		opts := r.cacheOpts
		opts.Resource = gr
		if storageStore.Typed() {
			opts.Prepare = prepareSharing(spec.Hooks.Share)
		}
		b.Cache = cache.New(r.storage, storageStore.CollectionPrefix(""), storageStore.Decode, opts)
	}
	return b, nil
}

// cacheOwner is the backend whose objects spec's are stored as, when it
// is served and stores them in the version spec names.
func cacheOwner(spec Spec, served func(schema.GroupResource) *Backend) *Backend {
	if spec.StoredAs == nil {
		return nil
	}
	owner := served(spec.StoredAs.GroupVersionResource().GroupResource())
	if owner == nil || owner.StorageVersion != spec.StoredAs.Version {
		return nil
	}
	return owner
}

// Remove stops serving a group-resource. Its objects stay in storage.
func (r *Registry) Remove(gr schema.GroupResource) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.snap.Load()
	b := old.backends[gr]
	if b == nil {
		return
	}
	if b.stop != nil {
		b.stop()
	}
	r.setHiddenLocked(gr, false)
	r.publish(old.with(r.hidden, func(backends map[schema.GroupResource]*Backend) { delete(backends, gr) }))
}

// SetHidden leaves a served group-resource out of discovery and the
// OpenAPI documents, or puts it back (see Spec.Hidden), keeping its
// backend, cache and watches.
func (r *Registry) SetHidden(gr schema.GroupResource, hidden bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.snap.Load()
	if old.backends[gr] == nil || r.hidden[gr] == hidden {
		return
	}
	r.setHiddenLocked(gr, hidden)
	r.publish(old.with(r.hidden, func(map[schema.GroupResource]*Backend) {}))
}

func (r *Registry) setHiddenLocked(gr schema.GroupResource, hidden bool) {
	if !hidden {
		delete(r.hidden, gr)
		return
	}
	if r.hidden == nil {
		r.hidden = map[schema.GroupResource]bool{}
	}
	r.hidden[gr] = true
}

// publish makes next current; callers hold r's write lock.
func (r *Registry) publish(next *Snapshot) {
	old := r.snap.Swap(next)
	close(old.replaced)
}

// with returns a copy of s with change applied to its backends; those
// hidden are served but not in its Resources.
func (s *Snapshot) with(hidden map[schema.GroupResource]bool, change func(map[schema.GroupResource]*Backend)) *Snapshot {
	backends := make(map[schema.GroupResource]*Backend, len(s.backends)+1)
	for gr, b := range s.backends {
		backends[gr] = b
	}
	change(backends)
	next := &Snapshot{
		Generation: s.Generation + 1, backends: backends,
		stores: map[schema.GroupVersionResource]*Store{}, replaced: make(chan struct{}),
	}
	var infos []*resources.Info
	for gr, b := range backends {
		for _, store := range b.Stores {
			if store.unserved {
				continue
			}
			next.stores[store.Info.GroupVersionResource()] = store
			if !hidden[gr] {
				infos = append(infos, store.Info)
			}
		}
	}
	next.Resources = resources.New(infos)
	next.byType = indexByType(backends)
	return next
}

// Run keeps every backend's watch cache current until ctx ends; backends
// added later start at once.
func (r *Registry) Run(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running = ctx
	for _, b := range r.snap.Load().backends {
		b.start(ctx, &r.caches)
	}
}

func (b *Backend) start(ctx context.Context, running *sync.WaitGroup) {
	if b.sharedCache {
		return
	}
	ctx, b.stop = context.WithCancel(ctx)
	running.Add(1)
	go func() {
		defer running.Done()
		b.Cache.Run(ctx)
	}()
}

// Wait blocks until every cache has stopped, once the context given to
// Run has ended.
func (r *Registry) Wait() { r.caches.Wait() }

// WaitReady blocks until every backend's watch cache has been built. A
// cache that stops unbuilt while the registry runs was replaced (it
// stops just before the snapshot with its successor is published): the
// newer snapshot's caches are waited for instead.
func (r *Registry) WaitReady(ctx context.Context) error {
	for {
		snap := r.Snapshot()
		err := snap.waitReady(ctx)
		running := r.runningContext()
		if unready := (*cache.ErrUnready)(nil); !errors.As(err, &unready) || running == nil {
			return err
		}
		select {
		case <-snap.Replaced():
		case <-running.Done(): // the caches stopped for good
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// runningContext is the context the registry runs in, nil before Run.
func (r *Registry) runningContext() context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running
}

func (s *Snapshot) waitReady(ctx context.Context) error {
	for _, b := range s.backends {
		if err := b.Cache.WaitReady(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Ready reports whether the caches of every backend have been built.
func (r *Registry) Ready() bool {
	for _, b := range r.Snapshot().backends {
		if !b.Cache.Ready() {
			return false
		}
	}
	return true
}

// prepareSharing prepares a typed cache's objects: the type's own
// sharing hook, then the parts equal to those of the objects decoded
// before become theirs (one table per cache: the cache prepares its
// objects one at a time, each encoded before the next shares its parts).
func prepareSharing(hook func(runtime.Object)) func(runtime.Object, *cache.Encodings) {
	parts := share.NewTable()
	return func(obj runtime.Object, enc *cache.Encodings) {
		if hook != nil {
			hook(obj)
		}
		parts.Parts(obj)
		PrepareShared(obj, enc)
	}
}

// PrepareShared readies a built-in object for sharing: encoding it (as a
// bare protobuf message, into a reused buffer that is then dropped) fills
// every lazily cached field (a Quantity's string form), so that no later
// reader writes to the shared object. The encoding is not kept: protobuf
// readers encode it once when they first need it (and it is kept then),
// while the server's own informers, which read the cache's objects, never
// do; kept for every object it was a fifth of the live heap.
func PrepareShared(obj runtime.Object, _ *cache.Encodings) {
	buf := prepareBuffers.Get().(*bytes.Buffer)
	codecs.ProtobufRaw.Encode(obj, buf)
	if buf.Cap() <= 1<<20 { // a rare huge object's buffer is not kept
		buf.Reset()
		prepareBuffers.Put(buf)
	}
}

var prepareBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
