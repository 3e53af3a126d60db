package registry_test

import (
	"testing"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/resources"
	"github.com/kapi-dev/kapi/internal/storage/pebble"
)

// TestHiddenBackendsServeButAreNotDiscovered: a hidden backend serves
// requests (its store is found) but is not in the snapshot's Resources,
// which discovery and the OpenAPI documents are made from; revealing it
// keeps the same backend, so its cache and watches go on.
func TestHiddenBackendsServeButAreNotDiscovered(t *testing.T) {
	s, err := pebble.OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reg := registry.New(s, nil, cache.Options{})
	info := &resources.Info{Group: "example.com", Version: "v1", Resource: "widgets", Singular: "widget", Kind: "Widget",
		Namespaced: true, Verbs: []string{"create", "get", "list", "watch"}}
	gvr := info.GroupVersionResource()
	discovered := func(snap *registry.Snapshot) bool {
		for _, g := range snap.Resources.Groups() {
			for _, v := range g.Versions {
				for _, i := range v.Resources {
					if i.GroupVersionResource() == gvr {
						return true
					}
				}
			}
		}
		return false
	}

	if err := reg.Put(registry.Spec{Versions: []*resources.Info{info}, StorageVersion: "v1", Hidden: true}); err != nil {
		t.Fatal(err)
	}
	hidden := reg.Snapshot()
	if hidden.Lookup(gvr) == nil {
		t.Fatal("a hidden backend serves nothing")
	}
	if discovered(hidden) {
		t.Error("a hidden backend is discovered")
	}

	reg.SetHidden(gvr.GroupResource(), false)
	shown := reg.Snapshot()
	if !discovered(shown) {
		t.Error("a revealed backend is not discovered")
	}
	if shown.Generation == hidden.Generation {
		t.Error("revealing a backend made no new snapshot: discovery would not be rebuilt")
	}
	if shown.Backend(gvr.GroupResource()) != hidden.Backend(gvr.GroupResource()) {
		t.Error("revealing a backend replaced it (and would restart its cache)")
	}

	reg.Remove(gvr.GroupResource())
	if err := reg.Put(registry.Spec{Versions: []*resources.Info{info}, StorageVersion: "v1"}); err != nil {
		t.Fatal(err)
	}
	if !discovered(reg.Snapshot()) {
		t.Error("a backend put again after removal is hidden")
	}
}
