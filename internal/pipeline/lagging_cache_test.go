package pipeline_test

import (
	"context"
	"maps"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/pipeline/pipelinetest"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/storage"
	"github.com/kapi-dev/kapi/internal/storage/pebble"
)

// heldStorage is storage whose watches can be held back, so that a test
// can make the watch caches lag behind the writes.
type heldStorage struct {
	storage.Store
	hold sync.RWMutex // held for writing: no watch event goes through
}

func (h *heldStorage) Watch(ctx context.Context, prefix []byte, fromRev int64) (storage.Watcher, error) {
	w, err := h.Store.Watch(ctx, prefix, fromRev)
	if err != nil {
		return nil, err
	}
	held := &heldWatcher{Watcher: w, events: make(chan storage.Event)}
	go func() {
		defer close(held.events)
		for ev := range w.Events() {
			h.hold.RLock()
			h.hold.RUnlock()
			select {
			case held.events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return held, nil
}

type heldWatcher struct {
	storage.Watcher
	events chan storage.Event
}

func (w *heldWatcher) Events() <-chan storage.Event { return w.events }

// laggingPipeline returns a pipeline over s, whose caches stop following
// storage while s.hold is held, and another pipeline over s, as another
// server sharing the storage is: its writes reach the first one's caches
// only through storage.
func laggingPipeline(t *testing.T) (p, other *pipeline.Pipeline, s *heldStorage) {
	t.Helper()
	db, err := pebble.OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	s = &heldStorage{Store: db}
	t.Cleanup(func() { db.Close() })
	return pipelinetest.NewOver(t, s, cache.Options{}), pipelinetest.NewOver(t, s, cache.Options{}), s
}

// cachedConfigMap creates a ConfigMap and waits for the cache to hold it.
func cachedConfigMap(t *testing.T, p *pipeline.Pipeline, store *registry.Store) *corev1.ConfigMap {
	t.Helper()
	created, err := p.Create(ctx, store, &corev1.ConfigMap{ObjectMeta: configMapMeta, Data: map[string]string{"start": "1"}}, pipeline.Options{Manager: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Backend().Cache.WaitFresh(ctx); err != nil {
		t.Fatal(err)
	}
	return created.(*corev1.ConfigMap)
}

// setData returns an update that sets key to value.
func setData(key, value string) registry.UpdateFunc {
	return func(current runtime.Object) (runtime.Object, error) {
		cm := current.DeepCopyObject().(*corev1.ConfigMap)
		cm.Data[key] = value
		return cm, nil
	}
}

func storedConfigMap(t *testing.T, store *registry.Store) *corev1.ConfigMap {
	t.Helper()
	obj, err := store.Get(ctx, "default", "cm") // storage, not the cache
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*corev1.ConfigMap)
}

// writtenElsewhere returns a pipeline whose cache holds a ConfigMap that
// another server has since updated ("first" set to "1", the update
// returned), unseen by the cache until the test ends.
func writtenElsewhere(t *testing.T) (p *pipeline.Pipeline, store *registry.Store, first *corev1.ConfigMap) {
	t.Helper()
	p, other, s := laggingPipeline(t)
	store = lookup(t, p, configmaps)
	cachedConfigMap(t, p, store)
	s.hold.Lock()
	t.Cleanup(s.hold.Unlock)
	updated, err := other.Update(ctx, lookup(t, other, configmaps), "default", "cm", pipeline.Options{Manager: "test"}, setData("first", "1"))
	if err != nil {
		t.Fatal(err)
	}
	return p, store, updated.(*corev1.ConfigMap)
}

// An update starts from the cache's copy; when the cache has not seen the
// previous write yet, the update must still build on that write.
func TestUpdateAfterAWriteTheCacheHasNotSeen(t *testing.T) {
	p, store, _ := writtenElsewhere(t)
	if _, err := p.Update(ctx, store, "default", "cm", pipeline.Options{Manager: "test"}, setData("second", "2")); err != nil {
		t.Fatal(err)
	}
	got := storedConfigMap(t, store)
	if got.Data["first"] != "1" || got.Data["second"] != "2" {
		t.Fatalf("stored data %v, want both updates", got.Data)
	}
}

// A resource-version precondition is checked against the stored object,
// not against the cache's older copy.
func TestUpdatePreconditionWithALaggingCache(t *testing.T) {
	p, store, first := writtenElsewhere(t)
	desired := first.DeepCopy() // carries the new resource version
	desired.Data["second"] = "2"
	if _, err := p.UpdateObject(ctx, store, desired, pipeline.Options{Manager: "test"}); err != nil {
		t.Fatalf("update at the current resource version: %v", err)
	}
	stale := first.DeepCopy()
	stale.Data["third"] = "3"
	if _, err := p.UpdateObject(ctx, store, stale, pipeline.Options{Manager: "test"}); !apierrors.IsConflict(err) {
		t.Fatalf("update at an older resource version: %v, want a conflict", err)
	}
}

// An update that changes nothing writes nothing, whether the cache's copy
// is current or not.
func TestNoOpUpdateWithTheCache(t *testing.T) {
	p, other, s := laggingPipeline(t)
	store := lookup(t, p, configmaps)
	created := cachedConfigMap(t, p, store)
	unchanged := func(current runtime.Object) (runtime.Object, error) { return current, nil }

	got, err := p.Update(ctx, store, "default", "cm", pipeline.Options{Manager: "test"}, unchanged)
	if err != nil {
		t.Fatal(err)
	}
	if rv := got.(*corev1.ConfigMap).ResourceVersion; rv != created.ResourceVersion {
		t.Fatalf("no-op update from a current cache answered resource version %s, want %s", rv, created.ResourceVersion)
	}

	s.hold.Lock()
	defer s.hold.Unlock()
	first, err := other.Update(ctx, lookup(t, other, configmaps), "default", "cm", pipeline.Options{Manager: "test"}, setData("first", "1"))
	if err != nil {
		t.Fatal(err)
	}
	rev, _ := s.CurrentRevision(ctx)
	// The cache's copy lacks "first": against it this update changes
	// something, against storage nothing.
	got, err = p.Update(ctx, store, "default", "cm", pipeline.Options{Manager: "test"}, setData("first", "1"))
	if err != nil {
		t.Fatal(err)
	}
	if rv := got.(*corev1.ConfigMap).ResourceVersion; rv != first.(*corev1.ConfigMap).ResourceVersion {
		t.Fatalf("no-op update from a lagging cache answered resource version %s, want %s", rv, first.(*corev1.ConfigMap).ResourceVersion)
	}
	if now, _ := s.CurrentRevision(ctx); now != rev {
		t.Fatalf("no-op update wrote: revision %d -> %d", rev, now)
	}

	// Back to what the cache's copy holds: a change against storage.
	back, err := p.Update(ctx, store, "default", "cm", pipeline.Options{Manager: "test"}, func(current runtime.Object) (runtime.Object, error) {
		cm := current.DeepCopyObject().(*corev1.ConfigMap)
		delete(cm.Data, "first")
		cm.ManagedFields = created.ManagedFields
		return cm, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := storedConfigMap(t, store); got.ResourceVersion != back.(*corev1.ConfigMap).ResourceVersion || got.Data["first"] != "" {
		t.Fatalf("stored %s %v after an update back to the cache's copy, want %s without first", got.ResourceVersion, got.Data, back.(*corev1.ConfigMap).ResourceVersion)
	}
}

// A deletion's preconditions are checked against the stored object, and
// what it answers is the object it deleted.
func TestDeleteWithALaggingCache(t *testing.T) {
	p, store, first := writtenElsewhere(t)
	rv := first.ResourceVersion
	deleted, gone, err := p.Delete(ctx, store, "default", "cm", &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}}, pipeline.Options{})
	if err != nil || !gone {
		t.Fatalf("delete at the current resource version: gone %v, %v", gone, err)
	}
	if got := deleted.(*corev1.ConfigMap); got.Data["first"] != "1" {
		t.Fatalf("deleted object %v, want the stored one", got.Data)
	}
	if _, err := store.Get(ctx, "default", "cm"); !apierrors.IsNotFound(err) {
		t.Fatalf("read after delete: %v, want not found", err)
	}
}

// A client updating an object twice in a row, faster than the cache
// follows, has its second update start from storage, not from the cache's
// copy older than its first: the update runs once, not twice.
func TestSecondUpdateDoesNotStartFromAnOlderCopy(t *testing.T) {
	p, _, s := laggingPipeline(t)
	store := lookup(t, p, configmaps)
	cachedConfigMap(t, p, store)
	s.hold.Lock()
	defer s.hold.Unlock()
	runs := 0
	counted := func(key string) registry.UpdateFunc {
		return func(current runtime.Object) (runtime.Object, error) {
			runs++
			return setData(key, "1")(current)
		}
	}
	if _, err := p.Update(ctx, store, "default", "cm", pipeline.Options{Manager: "test"}, counted("first")); err != nil {
		t.Fatal(err)
	}
	if runs != 1 {
		t.Fatalf("the first update ran %d times, want once from the cache's current copy", runs)
	}
	runs = 0
	if _, err := p.Update(ctx, store, "default", "cm", pipeline.Options{Manager: "test"}, counted("second")); err != nil {
		t.Fatal(err)
	}
	if runs != 1 {
		t.Fatalf("the second update ran %d times, want once", runs)
	}
}

// When the cache's copy is current, an update that the update function
// refuses, or that changes nothing, runs once: storage only confirms the
// copy's revision.
func TestUpdateFromACurrentCopyRunsOnce(t *testing.T) {
	p, _, _ := laggingPipeline(t)
	store := lookup(t, p, configmaps)
	created := cachedConfigMap(t, p, store)
	runs := 0
	unchanged := func(current runtime.Object) (runtime.Object, error) {
		runs++
		return current, nil
	}
	if _, err := p.Update(ctx, store, "default", "cm", pipeline.Options{Manager: "test"}, unchanged); err != nil {
		t.Fatal(err)
	}
	if runs != 1 {
		t.Fatalf("a no-op update ran %d times, want once", runs)
	}
	stale := created.DeepCopy()
	stale.ResourceVersion = "1"
	stale.Data["other"] = "1"
	runs = 0
	_, err := p.Update(ctx, store, "default", "cm", pipeline.Options{Manager: "test"}, func(current runtime.Object) (runtime.Object, error) {
		runs++
		return stale, nil
	})
	if !apierrors.IsConflict(err) || runs != 1 {
		t.Fatalf("an update at an older resource version: %v after %d runs, want a conflict after one", err, runs)
	}
}

// An object deleted and made again under the same name by another server,
// unseen by the cache, is the one an update changes.
func TestUpdateAfterARecreationTheCacheHasNotSeen(t *testing.T) {
	p, other, s := laggingPipeline(t)
	store, otherStore := lookup(t, p, configmaps), lookup(t, other, configmaps)
	cachedConfigMap(t, p, store)
	s.hold.Lock()
	defer s.hold.Unlock()
	if _, _, err := other.Delete(ctx, otherStore, "default", "cm", nil, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	again, err := other.Create(ctx, otherStore, &corev1.ConfigMap{ObjectMeta: configMapMeta, Data: map[string]string{"again": "1"}}, pipeline.Options{Manager: "test"})
	if err != nil {
		t.Fatal(err)
	}
	updated, err := p.Update(ctx, store, "default", "cm", pipeline.Options{Manager: "test"}, setData("second", "2"))
	if err != nil {
		t.Fatal(err)
	}
	got := updated.(*corev1.ConfigMap)
	if got.UID != again.(*corev1.ConfigMap).UID || got.Data["again"] != "1" || got.Data["start"] != "" {
		t.Fatalf("updated %s with %v, want the object made again (%s)", got.UID, got.Data, again.(*corev1.ConfigMap).UID)
	}
}

// beingDeleted creates a ConfigMap held by finalizers, deletes it, and
// waits for the cache to see the deletion.
func beingDeleted(t *testing.T, p *pipeline.Pipeline, store *registry.Store, finalizers ...string) {
	t.Helper()
	held := configMapMeta
	held.Finalizers = finalizers
	if _, err := p.Create(ctx, store, &corev1.ConfigMap{ObjectMeta: held, Data: map[string]string{"start": "1"}}, pipeline.Options{Manager: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, gone, err := p.Delete(ctx, store, "default", "cm", nil, pipeline.Options{}); err != nil || gone {
		t.Fatalf("delete: gone %v, %v", gone, err)
	}
	if err := store.Backend().Cache.WaitFresh(ctx); err != nil {
		t.Fatal(err)
	}
}

// Removing the last finalizer deletes the object, judged on the stored
// object, not on the cache's older copy, which lacks another server's
// change or still holds the finalizer that server removed.
func TestRemovingTheLastFinalizerWithALaggingCache(t *testing.T) {
	for _, tc := range []struct {
		name       string
		finalizers []string
		elsewhere  registry.UpdateFunc // another server's update, unseen by the cache
		want       map[string]string   // the data of the object the removal answers
	}{
		{"the copy lacks a change", []string{"example.com/a"}, setData("first", "1"), map[string]string{"start": "1", "first": "1"}},
		{"the copy holds a removed finalizer", []string{"example.com/a", "example.com/b"}, dropFinalizer("example.com/b"), map[string]string{"start": "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, other, s := laggingPipeline(t)
			store := lookup(t, p, configmaps)
			beingDeleted(t, p, store, tc.finalizers...)
			s.hold.Lock()
			defer s.hold.Unlock()
			if _, err := other.Update(ctx, lookup(t, other, configmaps), "default", "cm", pipeline.Options{Manager: "test"}, tc.elsewhere); err != nil {
				t.Fatal(err)
			}
			last, err := p.Update(ctx, store, "default", "cm", pipeline.Options{Manager: "test"}, dropFinalizer("example.com/a"))
			if err != nil {
				t.Fatal(err)
			}
			if got := last.(*corev1.ConfigMap); len(got.Finalizers) != 0 || !maps.Equal(got.Data, tc.want) {
				t.Fatalf("removing the last finalizer answered finalizers %v, data %v; want none and %v", got.Finalizers, got.Data, tc.want)
			}
			if _, err := store.Get(ctx, "default", "cm"); !apierrors.IsNotFound(err) {
				t.Fatalf("read after the last finalizer: %v, want not found", err)
			}
		})
	}
}
