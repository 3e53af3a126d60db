// Package registry stores the objects of one resource in a storage.Store:
// it maps names to keys, encodes objects, turns storage revisions into
// resource versions and storage errors into API errors. It knows nothing
// about HTTP.
package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kstorage "k8s.io/apiserver/pkg/storage"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/resources"
	"github.com/kapi-dev/kapi/internal/storage"
)

// Store reads and writes the objects of one resource.
type Store struct {
	Info    *resources.Info
	storage storage.Store
	prefix  string // every key of the resource starts with it
	gvk     schema.GroupVersionKind
	gr      schema.GroupResource
	typed   bool
	codec   runtime.Serializer
	// protobuf is set when objects are stored in protobuf (built-in
	// kinds); codec still reads the ones stored in JSON.
	protobuf bool

	backend *Backend
	// storageGVK and convert are set when objects are stored in another
	// version than this store serves: they are converted on the way in
	// and out.
	storageGVK schema.GroupVersionKind
	convert    Converter
	// schema, for a version defined by data, prunes and defaults what is
	// read.
	schema Schema
	// unserved is set on a storage version that is not served (Spec's
	// StorageUnserved).
	unserved bool
}

// Backend is the backend the store serves a version of.
func (s *Store) Backend() *Backend { return s.backend }

// Scale is how the store's version serves the scale sub-resource: its own
// way where the type's versions differ, else the type's (nil without one).
func (s *Store) Scale() *Scale {
	if scale, ok := s.backend.Hooks.Scales[s.Info.Version]; ok {
		return scale
	}
	return s.backend.Hooks.Scale
}

// Converts reports whether the store serves another version than the one
// its objects are stored in.
func (s *Store) Converts() bool { return s.convert != nil }

// FromStorage returns obj, as stored (and as the watch cache holds it), in
// the store's version. Objects in the store's own version are returned as
// they are.
func (s *Store) FromStorage(obj runtime.Object) (runtime.Object, error) {
	return s.convertTo(obj, s.gvk.GroupVersion())
}

// toStorage returns obj in the storage version.
func (s *Store) toStorage(obj runtime.Object) (runtime.Object, error) {
	return s.convertTo(obj, s.storageGVK.GroupVersion())
}

func (s *Store) convertTo(obj runtime.Object, gv schema.GroupVersion) (runtime.Object, error) {
	return convertWith(s.convert, s.gr, obj, gv)
}

// convertWith converts obj of gr to gv with c (obj itself without c), a
// failure being an internal error.
func convertWith(c Converter, gr schema.GroupResource, obj runtime.Object, gv schema.GroupVersion) (runtime.Object, error) {
	if c == nil {
		return obj, nil
	}
	out, err := c.Convert(obj, gv)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("converting %s to %s: %w", gr, gv, err))
	}
	return out, nil
}

// NewStore returns the store for info's objects in s.
func NewStore(info *resources.Info, s storage.Store) *Store {
	group := info.Group
	if group == "" {
		group = "core"
	}
	st := &Store{
		Info:    info,
		storage: s,
		prefix:  "/registry/" + group + "/" + info.Resource + "/",
		gvk:     info.GroupVersionKind(),
		gr:      schema.GroupResource{Group: info.Group, Resource: info.Resource},
		typed:   codecs.Scheme.Recognizes(info.GroupVersionKind()),
	}
	st.codec = unstructured.UnstructuredJSONScheme
	if st.typed {
		info, _ := runtime.SerializerInfoForMediaType(codecs.Factory.SupportedMediaTypes(), runtime.ContentTypeJSON)
		st.codec = info.Serializer
		st.protobuf = storesProtobuf(st.gvk)
	}
	return st
}

// Typed reports whether the resource has a Go type (built-in kinds).
func (s *Store) Typed() bool { return s.typed }

// StoreOfKind returns the store that only describes a built-in kind, for
// decoding and patching objects that are not stored themselves (such as
// Scale or Eviction); it has no storage. There is one per kind, so that
// what is kept per store (a field manager) is made once.
func StoreOfKind(gvk schema.GroupVersionKind) *Store {
	if s, ok := kindStores.Load(gvk); ok {
		return s.(*Store)
	}
	s, _ := kindStores.LoadOrStore(gvk, NewStore(&resources.Info{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}, nil))
	return s.(*Store)
}

// kindStores are the stores of StoreOfKind, by kind: a few, kept for the
// process's life.
var kindStores sync.Map

// DefaultBuiltin sets Kubernetes' defaults on a built-in object of a kind
// that has no backend (a token request, an eviction). The package of the
// built-in types sets it, so that the generic layers need not import
// Kubernetes' scheme.
var DefaultBuiltin = func(runtime.Object) {}

// InternalType names the Go type kube-apiserver holds a built-in kind's
// objects in (its internal version, such as *core.ConfigMapList), which its
// errors about a request's representation name; the package of the
// built-in types sets it.
var InternalType = func(schema.GroupVersionKind) string { return "" }

// TypeName names the Go type kube-apiserver holds the store's objects in
// (list: its lists), for errors that name it.
func (s *Store) TypeName(list bool) string {
	gvk := s.gvk
	if list {
		gvk = s.Info.ListGroupVersionKind()
	}
	if s.typed {
		if name := InternalType(gvk); name != "" {
			return name
		}
	}
	if list {
		return fmt.Sprintf("%T", s.newList())
	}
	return fmt.Sprintf("%T", s.New())
}

// Default sets the defaults a request body of the store's kind gets as it
// is decoded (as kube-apiserver's decoder sets them): its type's
// strategy's, or Kubernetes' for a built-in kind only exchanged.
func (s *Store) Default(obj runtime.Object) {
	switch {
	case s.backend != nil && s.backend.Strategy != nil:
		s.backend.Strategy.Default(obj)
	case s.backend == nil && s.typed:
		DefaultBuiltin(obj)
	}
}

// DefaultBySchema sets the defaults of a custom resource's schema (none
// for a built-in kind).
func (s *Store) DefaultBySchema(obj runtime.Object) {
	if s.schema != nil {
		s.schema.Default(obj)
	}
}

// Bookmark is a watch bookmark: an empty object of the resource's kind
// (as kube-apiserver makes it, codecs.Empty) holding only a resource
// version.
func (s *Store) Bookmark(rev int64) runtime.Object {
	var obj runtime.Object
	if s.typed {
		obj, _ = codecs.Empty(s.gvk)
	}
	if obj == nil {
		obj = s.New()
	}
	m, _ := meta.Accessor(obj)
	m.SetResourceVersion(strconv.FormatInt(rev, 10))
	obj.GetObjectKind().SetGroupVersionKind(s.gvk)
	return obj
}

// GroupResource names the resource in errors.
func (s *Store) GroupResource() schema.GroupResource { return s.gr }

// New returns an empty object of the resource's kind.
func (s *Store) New() runtime.Object {
	if s.typed {
		obj, _ := codecs.Scheme.New(s.gvk)
		return obj
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(s.gvk)
	return u
}

func (s *Store) newList() runtime.Object {
	listGVK := s.Info.ListGroupVersionKind()
	if s.typed {
		if obj, err := codecs.Scheme.New(listGVK); err == nil {
			return obj
		}
	}
	u := &unstructured.UnstructuredList{}
	u.SetGroupVersionKind(listGVK)
	return u
}

// key is the storage key of a name; namespace is empty for cluster-scoped
// resources.
func (s *Store) key(namespace, name string) []byte {
	if s.Info.Namespaced {
		return []byte(s.prefix + namespace + "/" + name)
	}
	return []byte(s.prefix + name)
}

// collectionPrefix is the prefix of every key in namespace ("" for all).
func (s *Store) collectionPrefix(namespace string) []byte {
	if s.Info.Namespaced && namespace != "" {
		return []byte(s.prefix + namespace + "/")
	}
	return []byte(s.prefix)
}

// Decode turns a stored version into an object carrying its resource
// version.
func (s *Store) Decode(kv *storage.KeyValue) (runtime.Object, error) { return s.decode(kv) }

// Key is the storage key of an object.
func (s *Store) Key(namespace, name string) string { return string(s.key(namespace, name)) }

// KubeKey is the etcd key kube-apiserver keeps the object of namespace and
// name under, which its storage errors name: "/registry/" and the
// resource (a few have the names of older releases), group-qualified for
// custom resources and the API extension types.
func (s *Store) KubeKey(namespace, name string) string {
	prefix := kubeKeyPrefixes[s.gr]
	switch {
	case prefix != "":
	case !s.typed || s.gr.Group == "apiextensions.k8s.io" || s.gr.Group == "apiregistration.k8s.io":
		prefix = s.gr.Group + "/" + s.gr.Resource
	default:
		prefix = s.gr.Resource
	}
	if s.Info.Namespaced {
		return "/registry/" + prefix + "/" + namespace + "/" + name
	}
	return "/registry/" + prefix + "/" + name
}

// PreconditionKey is the key kube-apiserver names when a precondition (a
// uid, a resourceVersion) fails on this store's object: its storage's key;
// for a dry run, which its dry-run storage checks itself, the key without
// storage's prefix.
func (s *Store) PreconditionKey(namespace, name string, dryRun bool) string {
	key := s.KubeKey(namespace, name)
	if dryRun {
		return strings.TrimPrefix(key, "/registry")
	}
	return key
}

// kubeKeyPrefixes are the resources kube-apiserver stores under another
// name, and those that share another's keys.
var kubeKeyPrefixes = map[schema.GroupResource]string{
	{Resource: "services"}:                              "services/specs",
	{Resource: "endpoints"}:                             "services/endpoints",
	{Resource: "nodes"}:                                 "minions",
	{Resource: "replicationcontrollers"}:                "controllers",
	{Group: "networking.k8s.io", Resource: "ingresses"}: "ingress",
	{Group: "events.k8s.io", Resource: "events"}:        "events",
}

// CollectionPrefix is the key prefix of every object in namespace ("" for
// all namespaces).
func (s *Store) CollectionPrefix(namespace string) string {
	return string(s.collectionPrefix(namespace))
}

// decode turns a stored version into an object carrying its resource
// version. Bytes that do not decode into an object of the resource make a
// corrupt-object error (kube-apiserver's storage error, which the watch
// cache and unsafe deletion recognise); readers answer it as an internal
// error.
func (s *Store) decode(kv *storage.KeyValue) (runtime.Object, error) {
	gvk, into := s.gvk, s.New()
	if s.convert != nil {
		gvk = s.storageGVK
		into, _ = codecs.Scheme.New(gvk)
	}
	obj, err := s.decodeStored(kv.Value, &gvk, into)
	upgraded := false
	if err == nil {
		obj, upgraded, err = s.upgrade(obj, gvk.GroupVersion())
	}
	var m metav1.Object
	if err == nil {
		m, err = meta.Accessor(obj)
	}
	if err != nil {
		return nil, kstorage.NewCorruptObjError(string(kv.Key), &undecodableError{revision: kv.ModRevision, err: err})
	}
	s.defaultStored(obj)
	if obj, err = s.FromStorage(obj); err != nil {
		return nil, err
	}
	if s.convert == nil && s.schema != nil {
		if upgraded {
			// Defaulted by the version it was stored in, as kube's storage
			// codec defaults before it converts; not by this one.
			s.schema.StoredConverted(obj)
		} else {
			s.schema.FromStorage(obj)
		}
	}
	m, _ = meta.Accessor(obj)
	m.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	if s.typed {
		internManagedFields(m)
	}
	return obj, nil
}

// upgrade turns a custom resource stored in another version than the one
// it is decoded in (stored before its CRD's storage version changed) into
// that version, as kube-apiserver's storage codec does: defaulted by its
// own version's schema, then converted. A version the CRD no longer has
// does not convert. upgraded tells whether obj was in another version.
func (s *Store) upgrade(obj runtime.Object, want schema.GroupVersion) (out runtime.Object, upgraded bool, err error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || s.backend == nil || u.GetAPIVersion() == want.String() {
		return obj, false, nil
	}
	if gv, err := schema.ParseGroupVersion(u.GetAPIVersion()); err == nil && gv.Group == want.Group {
		if own := s.backend.Stores[gv.Version]; own != nil && own.schema != nil {
			own.schema.FromStorage(u)
		}
	}
	if s.backend.convert == nil {
		return u, true, nil
	}
	out, err = s.backend.convert.Convert(u, want) // its error, as kube's storage says it
	return out, true, err
}

// AsStored is obj, a dry run's answer, as it would read once stored:
// kube-apiserver's dry run passes it through its storage codec, which
// sets its defaults (a Job's labels from its template) and, in protobuf,
// loses empty lists; an object of another version than the stored one
// goes to the storage version and back (a custom resource's conversion
// webhook called, what the storage version does not keep lost, what it
// defaults set).
func (s *Store) AsStored(obj runtime.Object) (runtime.Object, error) {
	s.defaultStored(obj)
	if s.convert == nil || !s.backend.StoredAs.Empty() {
		if s.protobuf {
			clearEmptyCollections(obj)
		}
		return obj, nil
	}
	m, _ := meta.Accessor(obj)
	rv := m.GetResourceVersion()
	obj.GetObjectKind().SetGroupVersionKind(s.gvk)
	stored, err := s.toStorage(obj)
	if err != nil {
		return nil, err
	}
	out, err := s.readBack(obj, stored, 0)
	if err != nil {
		return nil, err
	}
	m, _ = meta.Accessor(out)
	m.SetResourceVersion(rv)
	return out, nil
}

// defaultStored sets the defaults of a built-in object read from
// storage, as kube-apiserver's storage codec does: a field a strategy
// cleared after the request's defaulting (a new claim's phase) reads as
// its default, and a field a newer release defaults reads so on objects
// stored before. (A custom resource's schema defaults it as it is read.)
func (s *Store) defaultStored(obj runtime.Object) {
	if s.typed {
		s.Default(obj)
	}
	if s.backend != nil && s.backend.Hooks.OnRead != nil {
		s.backend.Hooks.OnRead(obj)
	}
}

// undecodableError says why stored bytes are not an object, in
// kube-apiserver's words.
type undecodableError struct {
	revision int64
	err      error
}

func (e *undecodableError) Error() string {
	return fmt.Sprintf("object not decodable revision=%d: %v", e.revision, e.err)
}

func (e *undecodableError) Unwrap() error { return e.err }

// decodeCurrent decodes a version read for a request: a corrupt object is
// an internal error, as kube-apiserver answers.
func (s *Store) decodeCurrent(kv *storage.KeyValue) (runtime.Object, error) {
	obj, err := s.decode(kv)
	if kstorage.IsCorruptObject(err) {
		return nil, apierrors.NewInternalError(err)
	}
	return obj, err
}

// encode serialises obj for storage; the resource version is not stored,
// since the storage revision is the resource version. obj is stored as
// it reads (the type's OnRead applied): a write starts from what reads
// show, and a write that changes nothing of that must find the stored
// bytes the same.
func (s *Store) encode(obj runtime.Object) ([]byte, runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	if s.backend != nil && s.backend.Hooks.OnRead != nil {
		s.backend.Hooks.OnRead(obj)
	}
	rv := m.GetResourceVersion()
	m.SetResourceVersion("")
	defer m.SetResourceVersion(rv)
	obj.GetObjectKind().SetGroupVersionKind(s.gvk)
	stored, err := s.toStorage(obj)
	if err != nil {
		return nil, nil, err
	}
	data, err := codecs.EncodeToKeep(s.storageEncoder(), stored)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	return data, stored, nil
}

// readBack is the answer to a write of obj, stored as stored at revision
// rev: obj itself, without the empty lists and maps that storage in
// protobuf does not keep; or, for an object of another version than the
// stored one, the stored object read back (readBackConverted).
func (s *Store) readBack(obj, stored runtime.Object, rev int64) (runtime.Object, error) {
	// Objects kept as another resource's (events.k8s.io Events as core
	// ones) would read back as written: core Events have no defaults and
	// convert without loss.
	if s.convert != nil && s.backend.StoredAs.Empty() {
		var err error
		if obj, err = s.readBackConverted(stored); err != nil {
			return nil, err
		}
	} else if s.protobuf {
		clearEmptyCollections(obj)
	}
	m, _ := meta.Accessor(obj)
	m.SetResourceVersion(strconv.FormatInt(rev, 10))
	return obj, nil
}

// readBackConverted is stored, an object of the storage version, read
// back in this store's version as kube-apiserver reads it: the storage
// version's defaults, then converted (a custom resource pruned), which
// loses what the storage version does not keep and has what it defaults.
// Among built-in kinds only HorizontalPodAutoscalers have a storage
// version of their own: a v1 one's behavior annotation gets the scale-up
// rules of autoscaling/v2.
func (s *Store) readBackConverted(stored runtime.Object) (runtime.Object, error) {
	storage := s.backend.Storage()
	if _, custom := stored.(*unstructured.Unstructured); !custom {
		storage.defaultStored(stored)
		if storage.protobuf {
			clearEmptyCollections(stored)
		}
	} else if storage.schema != nil {
		storage.schema.FromStorage(stored)
	}
	return s.FromStorage(stored)
}

// Get reads one object at the current revision.
func (s *Store) Get(ctx context.Context, namespace, name string) (runtime.Object, error) {
	if name == "" {
		return nil, errNameRequired // kube's generic registry makes no key of it
	}
	current, err := s.orStored(ctx, s.key(namespace, name), name, nil)
	if err != nil {
		return nil, err
	}
	return current.obj, nil
}

var errNameRequired = apierrors.NewBadRequest("Name parameter required.")

// List reads every object in namespace ("" for all namespaces) at the
// current revision, filtered by keep.
func (s *Store) List(ctx context.Context, namespace string, keep func(runtime.Object) bool) (runtime.Object, error) {
	res, err := s.storage.Range(ctx, storage.RangeOptions{Prefix: s.collectionPrefix(namespace)})
	if err != nil {
		return nil, s.interpret(err, "")
	}
	items := make([]runtime.Object, 0, len(res.KVs))
	for i := range res.KVs {
		obj, err := s.decodeCurrent(&res.KVs[i])
		if err != nil {
			return nil, err
		}
		if keep == nil || keep(obj) {
			items = append(items, obj)
		}
	}
	list := s.newList()
	if err := meta.SetList(list, items); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	lm, _ := meta.ListAccessor(list)
	lm.SetResourceVersion(strconv.FormatInt(res.Revision, 10))
	list.GetObjectKind().SetGroupVersionKind(s.Info.ListGroupVersionKind())
	return list, nil
}

// NewListOf returns a list of the resource's kind holding items.
func (s *Store) NewListOf(items []runtime.Object) (runtime.Object, error) {
	list := s.newList()
	if err := meta.SetList(list, items); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if s.typed {
		// Items of built-in lists carry no kind, as in kube-apiserver. A
		// typed list holds copies, so the shared items stay untouched.
		meta.EachListItem(list, func(o runtime.Object) error {
			o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			return nil
		})
	}
	list.GetObjectKind().SetGroupVersionKind(s.Info.ListGroupVersionKind())
	return list, nil
}

// Create stores a new object and returns it as stored.
func (s *Store) Create(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	m, _ := meta.Accessor(obj)
	data, stored, err := s.encode(obj)
	if err != nil {
		return nil, err
	}
	key := s.key(m.GetNamespace(), m.GetName())
	rev, err := s.storage.Create(ctx, key, data)
	if err != nil {
		return nil, s.interpret(err, m.GetName())
	}
	s.wrote(key, rev)
	s.defaultStored(obj) // as it reads back from storage
	return s.readBack(obj, stored, rev)
}

// UpdateFunc computes the object to store from the current one. Returning
// the current object unchanged (same encoding) writes nothing.
type UpdateFunc func(current runtime.Object) (runtime.Object, error)

// Update applies fn to the current object and stores the result, retrying
// when another write lands in between. fn sees a fresh copy each time; a
// resource-version precondition is fn's to check.
//
// As kube-apiserver's cacher does, the first attempt starts from a copy of
// the watch cache's object, which saves reading and decoding the stored
// one. The copy may lag behind storage: the write is guarded by its
// revision, and a conflict starts again from storage. When fn refuses the
// copy, or the update may change nothing (which only the stored bytes can
// tell), storage says whether the copy was current: if it was, that
// answer stands; if not, fn runs again on the stored object.
func (s *Store) Update(ctx context.Context, namespace, name string, fn UpdateFunc) (runtime.Object, error) {
	key := s.key(namespace, name)
	current := s.cachedCopy(key)
	for {
		var err error
		if current, err = s.orStored(ctx, key, name, current); err != nil {
			return nil, err
		}
		updated, err := fn(current.obj)
		if err != nil {
			if current, err = s.afterRefusal(ctx, key, name, current, err); err != nil {
				return nil, err
			}
			continue
		}
		data, stored, err := s.encode(updated)
		if err != nil {
			return nil, err
		}
		// The answer, written or not, reads as the stored object does.
		s.defaultStored(updated)
		if current.fromCache() && cache.StoredSum(data) == current.sum {
			newer, err := s.newerThan(ctx, key, name, current)
			if err != nil {
				return nil, err
			}
			if newer != nil {
				current = newer
				continue
			}
		}
		if !current.fromCache() && bytes.Equal(data, current.stored) {
			// Nothing changed: nothing is written and no event is sent.
			return s.readBack(updated, stored, current.rev)
		}
		rev, err := s.storage.Update(ctx, key, data, current.rev)
		if errors.Is(err, storage.ErrConflict) {
			current = nil
			continue
		}
		if err != nil {
			return nil, s.interpret(err, name)
		}
		s.wrote(key, rev)
		return s.readBack(updated, stored, rev)
	}
}

// currentObject is the object a write starts from, at revision rev.
type currentObject struct {
	obj    runtime.Object
	rev    int64
	stored []byte // the bytes stored at rev; nil until read from storage
	sum    uint64 // for the cache's copy, cache.StoredSum of those bytes
}

// fromCache reports whether c is the cache's copy, not yet compared with
// storage.
func (c *currentObject) fromCache() bool { return c.stored == nil }

// cachedCopy returns a copy of the watch cache's object under key, or nil
// when the cache has none as this store would read it: it is not built
// yet, it withholds the key after a write it has not applied yet
// (cache.Cache.GetForWrite), it is another backend's (Spec.StoredAs), or
// this store serves another version than the stored one.
func (s *Store) cachedCopy(key []byte) *currentObject {
	b := s.backend
	if b == nil || b.Cache == nil || b.sharedCache || s.convert != nil || b.Storage() != s || !b.Cache.Ready() {
		return nil
	}
	obj, sum := b.Cache.GetForWrite(string(key))
	if obj == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	rev, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	if err != nil || rev <= 0 {
		return nil
	}
	return &currentObject{obj: obj.DeepCopyObject(), rev: rev, sum: sum}
}

// wrote tells the watch cache of a write through this store, so that it
// does not offer its older copy to the next write (cache.Cache.Wrote).
func (s *Store) wrote(key []byte, rev int64) {
	if s.backend != nil && s.backend.Cache != nil {
		s.backend.Cache.Wrote(string(key), rev)
	}
}

// orStored returns current, or when it is nil the object stored under
// key, as a request's read answers: a corrupt object is an internal error.
func (s *Store) orStored(ctx context.Context, key []byte, name string, current *currentObject) (*currentObject, error) {
	if current != nil {
		return current, nil
	}
	if err := ctx.Err(); err != nil {
		// A request that has ended reads nothing more, as kube-apiserver's
		// storage refuses it (not every backend looks at ctx on a read).
		return nil, s.interpret(err, name)
	}
	kv, _, err := s.storage.Get(ctx, key, 0)
	if err != nil {
		return nil, s.interpret(err, name)
	}
	return s.fromStored(kv)
}

// afterRefusal is what a write does when its function or check refused
// current with err: the refusal stands, unless current is the cache's copy
// and storage holds a newer version, returned to start again from.
func (s *Store) afterRefusal(ctx context.Context, key []byte, name string, current *currentObject, err error) (*currentObject, error) {
	if !current.fromCache() {
		return nil, err
	}
	newer, rerr := s.newerThan(ctx, key, name, current)
	if rerr != nil {
		return nil, rerr
	}
	if newer == nil {
		return nil, err
	}
	return newer, nil
}

// newerThan reads the version stored under key for a write that started
// from the cache's copy c: nil when c is that version (whose bytes c then
// keeps), else the stored object to start again from.
func (s *Store) newerThan(ctx context.Context, key []byte, name string, c *currentObject) (*currentObject, error) {
	kv, _, err := s.storage.Get(ctx, key, 0)
	if err != nil {
		return nil, s.interpret(err, name)
	}
	if kv.ModRevision == c.rev {
		c.stored = kv.Value
		return nil, nil
	}
	return s.fromStored(kv)
}

func (s *Store) fromStored(kv *storage.KeyValue) (*currentObject, error) {
	obj, err := s.decodeCurrent(kv)
	if err != nil {
		return nil, err
	}
	return &currentObject{obj: obj, rev: kv.ModRevision, stored: kv.Value}, nil
}

// Delete removes the object if check accepts its current state, and
// returns the deleted object. As Update does, it starts from a copy of the
// watch cache's object; when check refuses the copy, storage says whether
// the copy was current.
func (s *Store) Delete(ctx context.Context, namespace, name string, check func(current runtime.Object) error) (runtime.Object, error) {
	key := s.key(namespace, name)
	current := s.cachedCopy(key)
	for {
		var err error
		if current, err = s.orStored(ctx, key, name, current); err != nil {
			return nil, err
		}
		if check != nil {
			if err := check(current.obj); err != nil {
				if current, err = s.afterRefusal(ctx, key, name, current, err); err != nil {
					return nil, err
				}
				continue
			}
		}
		rev, _, err := s.storage.Delete(ctx, key, current.rev)
		if errors.Is(err, storage.ErrConflict) {
			current = nil
			continue
		}
		if err != nil {
			return nil, s.interpret(err, name)
		}
		s.wrote(key, rev)
		return current.obj, nil
	}
}

// DeleteCorrupt removes an object whose stored bytes cannot be decoded,
// skipping everything that would need to read it (preconditions,
// finalizers): kube-apiserver's unsafe deletion. An object that decodes is
// refused with kube-apiserver's 409; a dry run only checks.
func (s *Store) DeleteCorrupt(ctx context.Context, namespace, name string, dry bool) error {
	key := s.key(namespace, name)
	for {
		kv, _, err := s.storage.Get(ctx, key, 0)
		if err != nil {
			return s.interpret(err, name)
		}
		if _, err := s.decode(kv); !kstorage.IsCorruptObject(err) {
			return apierrors.NewConflict(s.gr, name, kstorage.NewInvalidObjError(s.KubeKey(namespace, name),
				"unsafe deletion is not allowed because the object is decodable from storage"))
		}
		if dry {
			return nil
		}
		_, _, err = s.storage.Delete(ctx, key, kv.ModRevision)
		if errors.Is(err, storage.ErrConflict) {
			continue
		}
		if err != nil {
			return s.interpret(err, name)
		}
		return nil
	}
}

// interpret turns a storage error into the API error kube-apiserver gives.
func (s *Store) interpret(err error, name string) error {
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return apierrors.NewNotFound(s.gr, name)
	case errors.Is(err, storage.ErrKeyExists):
		return apierrors.NewAlreadyExists(s.gr, name)
	case errors.Is(err, storage.ErrConflict):
		return apierrors.NewConflict(s.gr, name, errors.New(ConflictMessage))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierrors.NewTimeoutError("request did not complete within the allowed duration", 0)
	case errors.Is(err, storage.ErrRequestTooLarge):
		return storage.ErrRequestTooLarge // kube's: etcd's text, a 500 without a reason
	}
	return apierrors.NewInternalError(err)
}

// ConflictMessage is kube-apiserver's explanation of an optimistic
// concurrency failure.
const ConflictMessage = "the object has been modified; please apply your changes to the latest version and try again"

// Serializers lists the media types the resource is served in, the default
// first. Custom resources have protobuf for the meta.k8s.io kinds asked
// for instead of them only (codecs.MetaProtobuf).
func (s *Store) Serializers() []runtime.SerializerInfo {
	if s.schema != nil {
		return s.schema.Serializers()
	}
	if s.typed {
		return codecs.TypedSerializers
	}
	return codecs.UnstructuredSerializers
}
