package pebble

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/storage"
)

// cancelAfter is a context whose Err is nil for the first n calls and
// Canceled afterwards: a shutdown that lands mid-compaction.
type cancelAfter struct {
	context.Context
	n     int32
	calls atomic.Int32
}

func (c *cancelAfter) Err() error {
	if c.calls.Add(1) > c.n {
		return context.Canceled
	}
	return nil
}

// fillDeletable writes n keys under prefix, each created then updated, so
// a compaction after them deletes n old versions.
func fillDeletable(t *testing.T, s *Store, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	revs := make([]int64, n)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rev, err := s.Create(ctx, []byte(fmt.Sprintf("%s%05d", prefix, i)), []byte("v1"))
			if err != nil {
				failed.Store(true)
			}
			revs[i] = rev
		}(i)
	}
	wg.Wait()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, err := s.Update(ctx, []byte(fmt.Sprintf("%s%05d", prefix, i)), []byte("v2"), revs[i]); err != nil {
				failed.Store(true)
			}
		}(i)
	}
	wg.Wait()
	if failed.Load() {
		t.Fatal("fill failed")
	}
}

// TestInterruptedCompactionNeverRevivesDeletedKeys stops a compaction
// between batches (as a shutdown does) right where a deleted key's
// tombstone and its older versions would be split, and checks that the key
// stays deleted and that the next open finishes the compaction.
func TestInterruptedCompactionNeverRevivesDeletedKeys(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	fillDeletable(t, s, "/a/", compactBatch-1) // 4095 deletions before /b
	rev, err := s.Create(ctx, []byte("/b"), []byte("doomed"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Delete(ctx, []byte("/b"), rev); err != nil {
		t.Fatal(err)
	}
	fillDeletable(t, s, "/c/", compactBatch) // enough for a second boundary
	if _, _, err := s.Get(ctx, []byte("/b"), 0); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("before compaction: /b err %v, want not found", err)
	}

	current, _ := s.CurrentRevision(ctx)
	err = s.Compact(&cancelAfter{Context: ctx, n: 1}, current)
	t.Logf("compaction to %d: %v", current, err)

	kv, _, err := s.Get(ctx, []byte("/b"), 0)
	if err == nil {
		t.Errorf("deleted key /b is live again after an interrupted compaction: value %q mod %d", kv.Value, kv.ModRevision)
	}
	// Retrying the same compaction does nothing: the damage stays.
	if err := s.Compact(ctx, current); err != nil {
		t.Fatal(err)
	}
	if kv, _, err := s.Get(ctx, []byte("/b"), 0); err == nil {
		t.Errorf("after retrying the compaction, /b is still live: %q", kv.Value)
	}
	// The writer sees it deleted too.
	if _, err := s.Create(ctx, []byte("/b"), []byte("new")); err != nil {
		t.Errorf("re-creating deleted /b: %v", err)
	}

	// An interrupted compaction is finished by the next open.
	s2dir := t.TempDir()
	s2, err := Open(s2dir)
	if err != nil {
		t.Fatal(err)
	}
	fillDeletable(t, s2, "/a/", compactBatch+10)
	now, _ := s2.CurrentRevision(ctx)
	s2.Compact(&cancelAfter{Context: ctx, n: 0}, now)
	s2.Close()
	s2, err = Open(s2dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if done, err := s2.readMeta(metaCompactionDone); err != nil || done != now {
		t.Fatalf("after reopening, compaction done at %d (%v), want %d", done, err, now)
	}
}

// TestWriteAfterCloseFails checks that writes after Close fail with
// ErrClosed instead of waiting for a writer that has stopped.
func TestWriteAfterCloseFails(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 64; i++ {
			if _, err := s.Create(context.Background(), []byte(fmt.Sprintf("/k%d", i)), []byte("v")); !errors.Is(err, storage.ErrClosed) {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("create after close: %v", err)
		}
	case <-timeAfter():
		t.Fatal("Create after Close blocked forever")
	}
}

func timeAfter() <-chan time.Time { return time.After(3 * time.Second) }
