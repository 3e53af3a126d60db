package cache

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/internal/storage/pebble"
)

// TestReplayHistory checks that a cache started with ReplayHistory serves a
// watch from a revision written before it started (as one moved from
// another server sharing the storage), with every event since then and the
// right types, and is ready only once current.
func TestReplayHistory(t *testing.T) {
	s, err := pebble.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var revs []int64
	for i := range 3 {
		rev, err := s.Create(ctx, []byte(fmt.Sprintf("%sns/cm-%d", prefix, i)), configMapValue(fmt.Sprintf("cm-%d", i), nil, "a"))
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, rev)
	}
	updated, err := s.Update(ctx, []byte(prefix+"ns/cm-1"), configMapValue("cm-1", nil, "b"), revs[1])
	if err != nil {
		t.Fatal(err)
	}
	deleted, _, err := s.Delete(ctx, []byte(prefix+"ns/cm-2"), 0)
	if err != nil {
		t.Fatal(err)
	}
	// Other prefixes' writes move the revision on too.
	last, err := s.Create(ctx, []byte("/registry/core/secrets/ns/s"), []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}

	c := New(s, prefix, decodeConfigMap, Options{ReplayHistory: true})
	go c.Run(ctx)
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.Revision(); got < last {
		t.Fatalf("ready at revision %d, before storage's %d", got, last)
	}
	if got := c.Len(); got != 2 {
		t.Fatalf("index holds %d objects, want 2", got)
	}
	_, backlog, err := c.WatchFrom(ctx, revs[0], Filter{Prefix: prefix}, false)
	if err != nil {
		t.Fatalf("watch from before the cache started: %v", err)
	}
	want := []struct {
		typ watch.EventType
		rev int64
	}{{watch.Added, revs[1]}, {watch.Added, revs[2]}, {watch.Modified, updated}, {watch.Deleted, deleted}}
	if len(backlog) != len(want) {
		t.Fatalf("backlog has %d events, want %d: %+v", len(backlog), len(want), backlog)
	}
	for i, d := range backlog {
		if d.Type != want[i].typ || d.Event.Rev != want[i].rev {
			t.Errorf("event %d: %s at %d, want %s at %d", i, d.Type, d.Event.Rev, want[i].typ, want[i].rev)
		}
	}
}
