// Package storagetest is the contract every storage.Store backend passes.
// A backend's test calls Run with a function that opens an empty store.
package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/storage"
)

// Opener returns a new, empty store; the suite closes it.
type Opener func(t *testing.T) storage.Store

// Run runs the whole conformance suite.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s storage.Store)
	}{
		{"CreateGet", testCreateGet},
		{"GuardedUpdate", testGuardedUpdate},
		{"GuardedDelete", testGuardedDelete},
		{"RangeAtRevision", testRangeAtRevision},
		{"RangePaging", testRangePaging},
		{"FutureRevision", testFutureRevision},
		{"WatchFromPast", testWatchFromPast},
		{"WatchPrefix", testWatchPrefix},
		{"ConcurrentWriters", testConcurrentWriters},
		{"Compaction", testCompaction},
		{"InvalidKey", testInvalidKey},
		{"RequestTooLarge", testRequestTooLarge},
		{"WatchProgress", testWatchProgress},
		{"WatchProgressKeepsOrder", testWatchProgressKeepsOrder},
		{"WatchFutureRevision", testWatchFutureRevision},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			defer s.Close()
			tc.fn(t, s)
		})
	}
}

var ctx = context.Background()

func mustCreate(t *testing.T, s storage.Store, key, value string) int64 {
	t.Helper()
	rev, err := s.Create(ctx, []byte(key), []byte(value))
	if err != nil {
		t.Fatalf("create %s: %v", key, err)
	}
	return rev
}

func mustGet(t *testing.T, s storage.Store, key string, rev int64) *storage.KeyValue {
	t.Helper()
	kv, _, err := s.Get(ctx, []byte(key), rev)
	if err != nil {
		t.Fatalf("get %s at %d: %v", key, rev, err)
	}
	return kv
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want %v", what, err, want)
	}
}

func testCreateGet(t *testing.T, s storage.Store) {
	r1 := mustCreate(t, s, "/a/1", "one")
	r2 := mustCreate(t, s, "/a/2", "two")
	if r2 <= r1 {
		t.Fatalf("revisions not increasing: %d then %d", r1, r2)
	}
	kv := mustGet(t, s, "/a/1", 0)
	if string(kv.Value) != "one" || kv.ModRevision != r1 || kv.CreateRevision != r1 {
		t.Fatalf("get /a/1 = %+v", kv)
	}
	_, err := s.Create(ctx, []byte("/a/1"), []byte("again"))
	wantErr(t, "second create", err, storage.ErrKeyExists)
	_, _, err = s.Get(ctx, []byte("/a/none"), 0)
	wantErr(t, "get missing", err, storage.ErrNotFound)
	cur, _ := s.CurrentRevision(ctx)
	if cur != r2 {
		t.Fatalf("current revision %d, want %d", cur, r2)
	}
}

func testGuardedUpdate(t *testing.T, s storage.Store) {
	r1 := mustCreate(t, s, "/k", "v1")
	r2, err := s.Update(ctx, []byte("/k"), []byte("v2"), r1)
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	_, err = s.Update(ctx, []byte("/k"), []byte("v3"), r1)
	wantErr(t, "stale update", err, storage.ErrConflict)
	_, err = s.Update(ctx, []byte("/missing"), []byte("v"), r1)
	wantErr(t, "update missing", err, storage.ErrNotFound)
	kv := mustGet(t, s, "/k", 0)
	if string(kv.Value) != "v2" || kv.ModRevision != r2 || kv.CreateRevision != r1 {
		t.Fatalf("after update: %+v", kv)
	}
	if old := mustGet(t, s, "/k", r1); string(old.Value) != "v1" {
		t.Fatalf("get at %d = %q, want v1", r1, old.Value)
	}
}

func testGuardedDelete(t *testing.T, s storage.Store) {
	r1 := mustCreate(t, s, "/k", "v1")
	r2, _ := s.Update(ctx, []byte("/k"), []byte("v2"), r1)
	_, _, err := s.Delete(ctx, []byte("/k"), r1)
	wantErr(t, "stale delete", err, storage.ErrConflict)
	r3, deleted, err := s.Delete(ctx, []byte("/k"), r2)
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	if string(deleted.Value) != "v2" || deleted.ModRevision != r2 {
		t.Fatalf("deleted = %+v", deleted)
	}
	_, _, err = s.Get(ctx, []byte("/k"), 0)
	wantErr(t, "get deleted", err, storage.ErrNotFound)
	_, _, err = s.Delete(ctx, []byte("/k"), 0)
	wantErr(t, "delete twice", err, storage.ErrNotFound)
	if kv := mustGet(t, s, "/k", r3-1); string(kv.Value) != "v2" {
		t.Fatalf("before delete: %+v", kv)
	}
	// A deleted key can be created again, with a new create revision.
	r4 := mustCreate(t, s, "/k", "v4")
	if kv := mustGet(t, s, "/k", 0); kv.CreateRevision != r4 {
		t.Fatalf("recreated: %+v", kv)
	}
}

func testRangeAtRevision(t *testing.T, s storage.Store) {
	mustCreate(t, s, "/p/a", "a1")
	rb := mustCreate(t, s, "/p/b", "b1")
	mustCreate(t, s, "/q/x", "x")
	mustCreate(t, s, "/p/c", "c1")
	s.Delete(ctx, []byte("/p/b"), 0)

	res, err := s.Range(ctx, storage.RangeOptions{Prefix: []byte("/p/")})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(res.KVs); got != "/p/a,/p/c" {
		t.Fatalf("range now = %s", got)
	}
	res, err = s.Range(ctx, storage.RangeOptions{Prefix: []byte("/p/"), Revision: rb})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(res.KVs); got != "/p/a,/p/b" || res.Revision != rb {
		t.Fatalf("range at %d = %s (rev %d)", rb, got, res.Revision)
	}
}

func testRangePaging(t *testing.T, s storage.Store) {
	for i := 0; i < 10; i++ {
		mustCreate(t, s, fmt.Sprintf("/p/%02d", i), "v")
	}
	rev, _ := s.CurrentRevision(ctx)
	mustCreate(t, s, "/p/05x", "later")
	res, err := s.Range(ctx, storage.RangeOptions{Prefix: []byte("/p/"), Limit: 4, Revision: rev, Count: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(res.KVs); got != "/p/00,/p/01,/p/02,/p/03" || !res.More || res.Count != 10 {
		t.Fatalf("page 1 = %s more=%v count=%d", got, res.More, res.Count)
	}
	res, err = s.Range(ctx, storage.RangeOptions{Prefix: []byte("/p/"), Start: []byte("/p/04"), Limit: 4, Revision: rev, Count: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(res.KVs); got != "/p/04,/p/05,/p/06,/p/07" || !res.More || res.Count != 6 {
		t.Fatalf("page 2 = %s more=%v count=%d", got, res.More, res.Count)
	}
	res, err = s.Range(ctx, storage.RangeOptions{Prefix: []byte("/p/"), Start: []byte("/p/08"), Limit: 4, Revision: rev})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(res.KVs); got != "/p/08,/p/09" || res.More {
		t.Fatalf("page 3 = %s more=%v", got, res.More)
	}
	// The key just after a key is that key and a zero byte: a range that
	// starts there goes on after it (what a paged read does), at the
	// revision asked for as at the latest.
	for _, at := range []int64{rev, 0} {
		res, err = s.Range(ctx, storage.RangeOptions{Prefix: []byte("/p/"), Start: []byte("/p/05\x00"), Limit: 2, Revision: at})
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64]string{rev: "/p/06,/p/07", 0: "/p/05x,/p/06"}[at]
		if got := keys(res.KVs); got != want || !res.More {
			t.Fatalf("range at %d from just after /p/05 = %s more=%v, want %s and more", at, got, res.More, want)
		}
	}
}

func testFutureRevision(t *testing.T, s storage.Store) {
	rev := mustCreate(t, s, "/k", "v")
	_, _, err := s.Get(ctx, []byte("/k"), rev+10)
	wantErr(t, "get future", err, storage.ErrFutureRevision)
	_, err = s.Range(ctx, storage.RangeOptions{Prefix: []byte("/"), Revision: rev + 10})
	wantErr(t, "range future", err, storage.ErrFutureRevision)
}

func testWatchFromPast(t *testing.T, s storage.Store) {
	r1 := mustCreate(t, s, "/w/a", "1")
	r2, _ := s.Update(ctx, []byte("/w/a"), []byte("2"), r1)
	r3, _, _ := s.Delete(ctx, []byte("/w/a"), r2)

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.Watch(wctx, []byte("/w/"), r1-1)
	if err != nil {
		t.Fatal(err)
	}
	r4 := mustCreate(t, s, "/w/b", "b")
	want := []string{
		fmt.Sprintf("PUT /w/a=1 @%d create", r1),
		fmt.Sprintf("PUT /w/a=2 @%d", r2),
		fmt.Sprintf("DELETE /w/a=2 @%d", r3),
		fmt.Sprintf("PUT /w/b=b @%d create", r4),
	}
	expectEvents(t, w, want)
}

func testWatchPrefix(t *testing.T, s storage.Store) {
	wctx, cancel := context.WithCancel(ctx)
	now, _ := s.CurrentRevision(ctx)
	w, err := s.Watch(wctx, []byte("/x/"), now)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "/y/1", "no")
	r := mustCreate(t, s, "/x/1", "yes")
	expectEvents(t, w, []string{fmt.Sprintf("PUT /x/1=yes @%d create", r)})
	cancel()
	for range w.Events() {
	}
	if w.Err() != nil {
		t.Fatalf("watch ended by its context: Err = %v", w.Err())
	}
}

func describe(ev storage.Event) string {
	s := fmt.Sprintf("%s %s=%s @%d", ev.Type, ev.KV.Key, ev.KV.Value, ev.KV.ModRevision)
	if ev.IsCreate() {
		s += " create"
	}
	return s
}

func expectEvents(t *testing.T, w storage.Watcher, want []string) {
	t.Helper()
	for i, wantEv := range want {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				t.Fatalf("watch closed after %d events: %v", i, w.Err())
			}
			if got := describe(ev); got != wantEv {
				t.Fatalf("event %d = %q, want %q", i, got, wantEv)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no event %d (%q) within 10s", i, wantEv)
		}
	}
}

func keys(kvs []storage.KeyValue) string {
	s := ""
	for i, kv := range kvs {
		if i > 0 {
			s += ","
		}
		s += string(kv.Key)
	}
	return s
}

// testConcurrentWriters runs writers that race on shared keys with guarded
// updates, and watchers started at different points; each watcher must see
// exactly the committed history from its start, in revision order.
func testConcurrentWriters(t *testing.T, s storage.Store) {
	const writers, writesEach, keysN = 8, 60, 5
	start, _ := s.CurrentRevision(ctx)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	early, err := s.Watch(wctx, []byte("/c/"), start)
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	committed := map[int64]string{} // revision -> key written
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < writesEach; i++ {
				key := fmt.Sprintf("/c/%d", (w+i)%keysN)
				rev, err := writeOnce(s, key, fmt.Sprintf("w%d-%d", w, i))
				if err != nil {
					t.Errorf("write %s: %v", key, err)
					return
				}
				mu.Lock()
				committed[rev] = key
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	end, _ := s.CurrentRevision(ctx)
	if int(end-start) != len(committed) || len(committed) != writers*writesEach {
		t.Fatalf("revisions %d..%d for %d committed writes", start, end, len(committed))
	}
	late, err := s.Watch(wctx, []byte("/c/"), start)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []storage.Watcher{early, late} {
		for rev := start + 1; rev <= end; rev++ {
			select {
			case ev := <-w.Events():
				if ev.KV.ModRevision != rev || string(ev.KV.Key) != committed[rev] {
					t.Fatalf("event at %d for %s, want %d for %s", ev.KV.ModRevision, ev.KV.Key, rev, committed[rev])
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("missing event %d: %v", rev, w.Err())
			}
		}
	}
}

// writeOnce creates key or updates it, retrying on conflicts.
func writeOnce(s storage.Store, key, value string) (int64, error) {
	for {
		kv, _, err := s.Get(ctx, []byte(key), 0)
		if errors.Is(err, storage.ErrNotFound) {
			rev, err := s.Create(ctx, []byte(key), []byte(value))
			if errors.Is(err, storage.ErrKeyExists) {
				continue
			}
			return rev, err
		}
		if err != nil {
			return 0, err
		}
		rev, err := s.Update(ctx, []byte(key), []byte(value), kv.ModRevision)
		if errors.Is(err, storage.ErrConflict) {
			continue
		}
		return rev, err
	}
}

func testCompaction(t *testing.T, s storage.Store) {
	r1 := mustCreate(t, s, "/k/a", "a1")
	r2, _ := s.Update(ctx, []byte("/k/a"), []byte("a2"), r1)
	rb := mustCreate(t, s, "/k/b", "b1")
	rd, _, _ := s.Delete(ctx, []byte("/k/b"), rb)
	r3, _ := s.Update(ctx, []byte("/k/a"), []byte("a3"), r2)

	if err := s.Compact(ctx, rd); err != nil {
		t.Fatalf("compact: %v", err)
	}
	if s.CompactedRevision() != rd {
		t.Fatalf("compacted revision %d, want %d", s.CompactedRevision(), rd)
	}
	_, _, err := s.Get(ctx, []byte("/k/a"), r1)
	wantErr(t, "get below compaction", err, storage.ErrCompacted)
	_, err = s.Range(ctx, storage.RangeOptions{Prefix: []byte("/k/"), Revision: r2})
	wantErr(t, "range below compaction", err, storage.ErrCompacted)
	_, err = s.Watch(ctx, []byte("/k/"), r1)
	wantErr(t, "watch below compaction", err, storage.ErrCompacted)

	if kv := mustGet(t, s, "/k/a", rd); string(kv.Value) != "a2" {
		t.Fatalf("at compaction revision: %+v", kv)
	}
	if kv := mustGet(t, s, "/k/a", 0); string(kv.Value) != "a3" {
		t.Fatalf("current: %+v", kv)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.Watch(wctx, []byte("/k/"), rd-1)
	if err != nil {
		t.Fatalf("watch from compaction revision: %v", err)
	}
	expectEvents(t, w, []string{
		fmt.Sprintf("DELETE /k/b=b1 @%d", rd),
		fmt.Sprintf("PUT /k/a=a3 @%d", r3),
	})
	if err := s.Compact(ctx, r3+100); !errors.Is(err, storage.ErrFutureRevision) {
		t.Fatalf("compact future: %v", err)
	}
}

func testInvalidKey(t *testing.T, s storage.Store) {
	if _, err := s.Create(ctx, []byte("bad\x00key"), []byte("v")); err == nil {
		t.Fatal("create with NUL in key succeeded")
	}
	if _, err := s.Create(ctx, nil, []byte("v")); err == nil {
		t.Fatal("create with empty key succeeded")
	}
}

// testRequestTooLarge: a write larger than etcd's default request limit
// fails with ErrRequestTooLarge and changes nothing; one just under it
// is stored.
func testRequestTooLarge(t *testing.T, s storage.Store) {
	key := []byte("/large")
	fits := bytes.Repeat([]byte("x"), storage.MaxRequestBytes-64*1024)
	rev, err := s.Create(ctx, key, fits)
	if err != nil {
		t.Fatalf("create of %d bytes: %v", len(fits), err)
	}
	tooLarge := bytes.Repeat([]byte("x"), storage.MaxRequestBytes+1)
	if _, err := s.Create(ctx, []byte("/larger"), tooLarge); !errors.Is(err, storage.ErrRequestTooLarge) {
		t.Fatalf("create of %d bytes: %v, want ErrRequestTooLarge", len(tooLarge), err)
	}
	if _, err := s.Update(ctx, key, tooLarge, rev); !errors.Is(err, storage.ErrRequestTooLarge) {
		t.Fatalf("update to %d bytes: %v, want ErrRequestTooLarge", len(tooLarge), err)
	}
	if kv := mustGet(t, s, "/large", 0); kv.ModRevision != rev || len(kv.Value) != len(fits) {
		t.Errorf("after the refused update the key is at revision %d with %d bytes, want %d with %d", kv.ModRevision, len(kv.Value), rev, len(fits))
	}
	if _, _, err := s.Get(ctx, []byte("/larger"), 0); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the refused create left the key behind: %v", err)
	}
}

// testWatchProgress checks that a watcher whose prefix sees no writes still
// learns, on request, that it is up to date with the store.
func testWatchProgress(t *testing.T, s storage.Store) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	now, _ := s.CurrentRevision(ctx)
	w, err := s.Watch(wctx, []byte("/quiet/"), now)
	if err != nil {
		t.Fatal(err)
	}
	w.RequestProgress()
	expectProgress(t, w, now)
	rev := mustCreate(t, s, "/busy/1", "v")
	w.RequestProgress()
	expectProgress(t, w, rev)
}

// testWatchProgressKeepsOrder checks, while writers write under the
// watcher's prefix and another, that a progress event never runs ahead of
// the watcher's events: none of a revision at or below a progress event's
// comes after it, and every one comes once, in order.
func testWatchProgressKeepsOrder(t *testing.T, s storage.Store) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	now, _ := s.CurrentRevision(ctx)
	w, err := s.Watch(wctx, []byte("/mine/"), now)
	if err != nil {
		t.Fatal(err)
	}
	const writes = 200
	written := make(chan struct{})
	go func() {
		defer close(written)
		for i := range writes {
			prefix := "/mine/"
			if i%2 == 1 {
				prefix = "/other/"
			}
			if _, err := s.Create(ctx, fmt.Appendf(nil, "%s%d", prefix, i), []byte("v")); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	defer func() { <-written }() // the writer never outlives the store
	go func() {
		for {
			select {
			case <-written:
				return
			case <-time.After(100 * time.Microsecond):
				w.RequestProgress()
			}
		}
	}()
	var progress, lastEvent int64
	var mine, progresses int
	deadline := time.After(20 * time.Second)
	for mine < writes/2 {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				t.Fatalf("watch closed after %d events: %v", mine, w.Err())
			}
			if ev.Type == storage.EventProgress {
				progress = max(progress, ev.KV.ModRevision)
				progresses++
				continue
			}
			if ev.KV.ModRevision <= progress {
				t.Fatalf("%s after progress at %d", describe(ev), progress)
			}
			if ev.KV.ModRevision <= lastEvent {
				t.Fatalf("%s after an event at %d", describe(ev), lastEvent)
			}
			lastEvent = ev.KV.ModRevision
			mine++
		case <-deadline:
			t.Fatalf("%d of %d events within 20s", mine, writes/2)
		}
	}
	<-written
	// However many progress events came while the writers wrote (as many
	// as the backend answered in time), one asked now covers every write.
	// Progress events the writers' time asked for may still be on the way.
	last, _ := s.CurrentRevision(ctx)
	w.RequestProgress()
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok || ev.Type != storage.EventProgress {
				t.Fatalf("got %v (open %v) after every write was seen, want progress", describe(ev), ok)
			}
			if ev.KV.ModRevision >= last {
				t.Logf("%d progress events while the writers wrote", progresses)
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no progress event at >= %d within 10s", last)
		}
	}
}

func expectProgress(t *testing.T, w storage.Watcher, atLeast int64) {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		if !ok || ev.Type != storage.EventProgress || ev.KV.ModRevision < atLeast {
			t.Fatalf("got %v (open %v), want progress at >= %d", describe(ev), ok, atLeast)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no progress event within 10s")
	}
}

// testWatchFutureRevision checks that a watch from a revision not yet
// written waits for it and sends only later events.
func testWatchFutureRevision(t *testing.T, s storage.Store) {
	now, _ := s.CurrentRevision(ctx)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.Watch(wctx, []byte("/f/"), now+2)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "/f/1", "a")
	mustCreate(t, s, "/f/2", "b")
	r3 := mustCreate(t, s, "/f/3", "c")
	expectEvents(t, w, []string{fmt.Sprintf("PUT /f/3=c @%d create", r3)})
}
