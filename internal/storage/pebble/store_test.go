package pebble

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kapi-dev/kapi/internal/storage"
	"github.com/kapi-dev/kapi/internal/storage/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		s, err := Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestReopenKeepsState checks that revisions, values, history and the
// compaction point survive closing and reopening the store.
func TestReopenKeepsState(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for i := 0; i < 5; i++ {
		if last, err = s.Create(ctx, []byte(fmt.Sprintf("/k/%d", i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Compact(ctx, 2); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rev, _ := s.CurrentRevision(ctx); rev != last {
		t.Fatalf("revision after reopen %d, want %d", rev, last)
	}
	if s.CompactedRevision() != 2 {
		t.Fatalf("compacted after reopen %d, want 2", s.CompactedRevision())
	}
	next, err := s.Create(ctx, []byte("/k/new"), []byte("v"))
	if err != nil || next != last+1 {
		t.Fatalf("create after reopen: rev %d err %v, want %d", next, err, last+1)
	}
	res, err := s.Range(ctx, storage.RangeOptions{Prefix: []byte("/k/"), Revision: 3})
	if err != nil || len(res.KVs) != 3 {
		t.Fatalf("range at 3 after reopen: %d keys, err %v", len(res.KVs), err)
	}
}

func TestDecodeRecordRejectsGarbage(t *testing.T) {
	for _, b := range [][]byte{nil, {0}, {9, 1}, {recordPut}, {recordPut, 0x80}} {
		if _, err := decodeRecord(b); err == nil {
			t.Errorf("decodeRecord(%x) accepted garbage", b)
		}
	}
}

// TestOpeners checks the storage.Opener constructors: OnDisk opens the same
// data each time, InMemory a new, empty store each time, and a failure is
// a nil Store, not a nil *Store in an interface.
func TestOpeners(t *testing.T) {
	ctx := context.Background()
	var open storage.Opener = OnDisk(t.TempDir())
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	rev, err := s.Create(ctx, []byte("/k"), []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = open(); err != nil {
		t.Fatal(err)
	}
	if kv, _, err := s.Get(ctx, []byte("/k"), 0); err != nil || kv.ModRevision != rev {
		t.Fatalf("reopened on disk: %+v, %v", kv, err)
	}
	s.Close()

	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := OnDisk(notADir)(); err == nil || s != nil {
		t.Fatalf("opening a store in a file: %#v, %v; want a nil Store and an error", s, err)
	}

	open = InMemory()
	a, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := a.Create(ctx, []byte("/k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Get(ctx, []byte("/k"), 0); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a second in-memory store sees the first one's key: %v", err)
	}
}

// TestCloseWaitsForWatches closes the store while watches replay history
// from their snapshots: Close must wait for them to let go before closing
// the database, and end them.
func TestCloseWaitsForWatches(t *testing.T) {
	ctx := context.Background()
	s, err := OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	fillDeletable(t, s, "/a/", 2000)
	var watches []storage.Watcher
	for _, prefix := range []string{"/a/", "/none/"} {
		w, err := s.Watch(ctx, []byte(prefix), 0)
		if err != nil {
			t.Fatal(err)
		}
		watches = append(watches, w)
	}
	<-watches[0].Events() // replay has begun
	if err := s.Close(); err != nil {
		t.Fatalf("close with watches replaying: %v", err)
	}
	for _, w := range watches {
		for range w.Events() {
		}
		if err := w.Err(); err != nil {
			t.Fatalf("watch ended by Close with %v, want nil", err)
		}
	}
}

// TestWatcherThatFallsBehindEnds: a watcher whose consumer reads nothing
// is ended with ErrWatcherTooSlow once more committed groups than its
// queue holds wait for it; writes never wait for it.
func TestWatcherThatFallsBehindEnds(t *testing.T) {
	ctx := context.Background()
	s, err := OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stalled, err := s.Watch(ctx, []byte("/k/"), 0)
	if err != nil {
		t.Fatal(err)
	}
	// The watcher's goroutine may have taken a run of groups off its queue
	// before it blocked on the full channel, so the queue overflows after
	// somewhere between liveQueue and twice that many more writes.
	w := stalled.(*watcher)
	limit := 2*liveQueue + cap(w.out) + 10
	for i := 0; !isClosed(w.ended); i++ {
		if i == limit {
			t.Fatalf("the stalled watcher is still running after %d writes", limit)
		}
		if _, err := s.Create(ctx, fmt.Appendf(nil, "/k/%d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	for range stalled.Events() {
	}
	if !errors.Is(stalled.Err(), storage.ErrWatcherTooSlow) {
		t.Fatalf("the stalled watcher ended with %v, want %v", stalled.Err(), storage.ErrWatcherTooSlow)
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestKeysOverTheLimitStayWritable: a key already over the request limit
// (written by a kapi that had none) may still be updated, whatever the
// size, so that it can be shrunk or deleted through its finalizers; a
// key within the limit may not grow over it.
func TestKeysOverTheLimitStayWritable(t *testing.T) {
	s, err := OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	big := make([]byte, storage.MaxRequestBytes+1)
	// As an older kapi wrote it: past the check a create now meets.
	legacy := &writeOp{kind: opCreate, key: []byte("/legacy"), value: big, done: make(chan writeResult, 1)}
	s.writes <- legacy
	r := <-legacy.done
	if r.err != nil {
		t.Fatal(r.err)
	}
	rev, err := s.Update(ctx, []byte("/legacy"), append(big, 'x'), r.rev)
	if err != nil {
		t.Fatalf("updating a key over the limit: %v", err)
	}
	if _, err := s.Update(ctx, []byte("/legacy"), []byte("small"), rev); err != nil {
		t.Fatalf("shrinking a key over the limit: %v", err)
	}
	if _, err := s.Update(ctx, []byte("/legacy"), big, rev+1); !errors.Is(err, storage.ErrRequestTooLarge) {
		t.Fatalf("growing a key within the limit over it: %v", err)
	}
}
