package registry

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Cached returns the watch cache's own copy of obj: the object its cache
// holds under obj's key, when that is of obj's Go type and at obj's
// resource version; nil otherwise (another version of the object, a kind
// stored in another version or as another group's, a custom resource).
//
// The server's in-process informers keep that copy in place of the one
// they decoded (their transform), so an object is held in memory once
// whoever in the server watches it. Whoever receives it must treat it as
// read-only, as every informer's objects already are.
func (s *Snapshot) Cached(obj runtime.Object) runtime.Object {
	b := s.byType[reflect.TypeOf(obj)]
	if b == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil || m.GetResourceVersion() == "" {
		return nil
	}
	cached := b.Cache.Get(b.Storage().Key(m.GetNamespace(), m.GetName()))
	if cached == nil {
		return nil
	}
	if c, err := meta.Accessor(cached); err != nil || c.GetResourceVersion() != m.GetResourceVersion() || c.GetUID() != m.GetUID() {
		return nil
	}
	return cached
}

// indexByType maps the Go type of each built-in kind to the backend whose
// cache holds objects of that type, leaving out types two backends share.
func indexByType(backends map[schema.GroupResource]*Backend) map[reflect.Type]*Backend {
	byType := make(map[reflect.Type]*Backend, len(backends))
	ambiguous := map[reflect.Type]bool{}
	for _, b := range backends {
		st := b.Storage()
		if b.sharedCache || st == nil || !st.Typed() {
			continue
		}
		t := reflect.TypeOf(st.New())
		if byType[t] != nil {
			ambiguous[t] = true
		}
		byType[t] = b
	}
	for t := range ambiguous {
		delete(byType, t)
	}
	return byType
}

// Holding returns the backend whose watch cache holds objects of Go type
// t, nil when none does or several do.
func (s *Snapshot) Holding(t reflect.Type) *Backend { return s.byType[t] }

// CachedObject returns an empty object of the Go type a watch cache holds
// gvr's objects in, when gvr is that cache's storage version; nil
// otherwise.
func (s *Snapshot) CachedObject(gvr schema.GroupVersionResource) runtime.Object {
	b := s.backends[gvr.GroupResource()]
	if b == nil || b.StorageVersion != gvr.Version || b.Storage() == nil {
		return nil
	}
	obj := b.Storage().New()
	if s.byType[reflect.TypeOf(obj)] != b {
		return nil
	}
	return obj
}
