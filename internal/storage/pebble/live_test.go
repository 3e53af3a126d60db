package pebble

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/kapi-dev/kapi/internal/storage"
)

// TestGuardsAfterCompactionAndReopen: the writer's live revisions keep
// every guard as Pebble would answer it, for keys the writer knows and
// those it must read (written before the store was reopened), across a
// compaction, deletions and re-creations; and their map is made again
// once most of its keys are gone.
func TestGuardsAfterCompactionAndReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) []byte { return []byte(fmt.Sprintf("/k/%04d", i)) }
	revs := map[int]int64{}
	for i := range 2000 {
		if revs[i], err = s.Create(ctx, key(i), []byte("v1")); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 2 {
		for i := range 10 {
			stale := revs[i]
			if revs[i], err = s.Update(ctx, key(i), []byte("v2"), stale); err != nil {
				t.Fatalf("round %d: update: %v", round, err)
			}
			if _, err := s.Update(ctx, key(i), []byte("v3"), stale); !errors.Is(err, storage.ErrConflict) {
				t.Fatalf("round %d: stale update: %v", round, err)
			}
			if _, err := s.Create(ctx, key(i), []byte("again")); !errors.Is(err, storage.ErrKeyExists) {
				t.Fatalf("round %d: create of a live key: %v", round, err)
			}
		}
		rev, _ := s.CurrentRevision(ctx)
		if err := s.Compact(ctx, rev); err != nil {
			t.Fatal(err)
		}
		if round == 0 { // the second round reads every key from Pebble first
			s.Close()
			if s, err = Open(dir); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer s.Close()
	for i := 2000; i < 4000; i++ { // keys the writer knows from their creation
		if revs[i], err = s.Create(ctx, key(i), []byte("v1")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4000 {
		if i%2000 < 1900 {
			if _, _, err := s.Delete(ctx, key(i), revs[i]); err != nil {
				t.Fatalf("delete %d: %v", i, err)
			}
		}
	}
	if n := len(s.live.keys); n > 110 || s.live.peak > 1024 {
		t.Errorf("%d live keys remembered (a map made for %d) once most are deleted", n, s.live.peak)
	}
	if rev, err := s.Create(ctx, key(0), []byte("new")); err != nil {
		t.Fatalf("create of a deleted key: %v", err)
	} else if kv, _, err := s.Get(ctx, key(0), 0); err != nil || kv.CreateRevision != rev || string(kv.Value) != "new" {
		t.Fatalf("re-created key reads %+v, %v", kv, err)
	}
	if _, err := s.Update(ctx, key(1999), []byte("v2"), revs[1999]); err != nil {
		t.Fatalf("update of a key created before the reopen: %v", err)
	}
}
