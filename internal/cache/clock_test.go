package cache

import (
	"context"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kapi-dev/kapi/internal/storage"
	"github.com/kapi-dev/kapi/internal/storage/pebble"
)

// TestBookmarksFollowTheClock: a watcher that asked for bookmarks gets one
// each time the cache's clock passes the bookmark interval, however little
// real time has gone by.
func TestBookmarksFollowTheClock(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Now())
	c, s := newCache(t, Options{BookmarkInterval: time.Hour, Clock: fc})
	ctx := context.Background()
	w, _, err := c.WatchFrom(ctx, c.Revision(), Filter{Prefix: prefix}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	rev, err := s.Create(ctx, []byte(prefix+"ns/a"), configMapValue("a", nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	if d := nextDelivery(t, w); d.Bookmark != 0 || d.Event.Rev != rev {
		t.Fatalf("first delivery %+v, want the creation at %d", d, rev)
	}
	if deliveryWaiting(w) {
		t.Fatalf("delivery %+v before the clock moved", nextDelivery(t, w))
	}
	for i := 0; i < 2; i++ { // twice: the timer is re-armed after firing
		fc.Step(time.Hour)
		d := nextDelivery(t, w)
		if d.Bookmark < rev || d.Event != nil {
			t.Fatalf("step %d: delivery %+v, want a bookmark at %d or later", i, d, rev)
		}
	}
}

// TestEventWindowFollowsTheClock: events older than the window by the
// cache's clock are dropped, so a watch cannot resume from before them.
func TestEventWindowFollowsTheClock(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Now())
	c, s := newCache(t, Options{Window: time.Minute, Clock: fc})
	ctx := context.Background()
	start := c.Revision()
	r1 := createApplied(t, c, s, "a")
	w, backlog, err := c.WatchFrom(ctx, start, Filter{Prefix: prefix}, false)
	if err != nil || len(backlog) != 1 {
		t.Fatalf("watch from %d inside the window: %d events, %v", start, len(backlog), err)
	}
	w.Stop()

	fc.Step(2 * time.Minute)
	r2, err := s.Create(ctx, []byte(prefix+"ns/b"), configMapValue("b", nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitNotOlderThan(ctx, r2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.WatchFrom(ctx, start, Filter{Prefix: prefix}, false); err == nil {
		t.Fatalf("watch from %d after the window passed its only event: no error, want ErrExpired", start)
	} else if _, ok := err.(*ErrExpired); !ok {
		t.Fatalf("watch from %d: %v, want ErrExpired", start, err)
	}
	w, backlog, err = c.WatchFrom(ctx, r1, Filter{Prefix: prefix}, false)
	if err != nil || len(backlog) != 1 || backlog[0].Event.Rev != r2 {
		t.Fatalf("watch from %d: %v, backlog %v", r1, err, backlog)
	}
	w.Stop()
}

// TestQuietCacheLetsItsWindowGo: with no event to trim it, the window
// still drops what the clock says is older than it, objects and all; a
// watch can then resume from the last change, not from before it.
func TestQuietCacheLetsItsWindowGo(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Now())
	c, s := newCache(t, Options{Window: time.Minute, Clock: fc})
	ctx := context.Background()
	start := c.Revision()
	r1 := createApplied(t, c, s, "a")
	// A write elsewhere moves the cache's revision past its last change.
	other, err := s.Create(ctx, []byte("/elsewhere/a"), configMapValue("a", nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitNotOlderThan(ctx, other); err != nil {
		t.Fatal(err)
	}
	fc.Step(2 * time.Minute)
	giveUp := time.Now().Add(10 * time.Second)
	for held := 1; held > 0; {
		if time.Now().After(giveUp) {
			t.Fatalf("the window holds %d events a minute past it, with no event to trim it", held)
		}
		time.Sleep(time.Millisecond)
		c.mu.RLock()
		held = len(c.events)
		c.mu.RUnlock()
	}
	if _, _, err := c.WatchFrom(ctx, start, Filter{Prefix: prefix}, false); err == nil {
		t.Fatalf("watch from %d, before the dropped event: no error, want ErrExpired", start)
	} else if _, ok := err.(*ErrExpired); !ok {
		t.Fatalf("watch from %d: %v, want ErrExpired", start, err)
	}
	w, backlog, err := c.WatchFrom(ctx, r1, Filter{Prefix: prefix}, false)
	if err != nil || len(backlog) != 0 {
		t.Fatalf("watch from the last change %d: backlog %v, %v; want none, no error", r1, backlog, err)
	}
	defer w.Stop()
	r2, err := s.Create(ctx, []byte(prefix+"ns/b"), configMapValue("b", nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	if d := nextDelivery(t, w); d.Event == nil || d.Event.Rev != r2 {
		t.Fatalf("delivery %+v, want the creation at %d", d, r2)
	}
}

// TestQuietCacheLetsDeletedObjectsGo: once the window has passed the
// deletion of an object and nothing else happened, nothing in the cache
// keeps the object alive.
func TestQuietCacheLetsDeletedObjectsGo(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Now())
	c, s := newCache(t, Options{Window: time.Minute, Clock: fc})
	ctx := context.Background()
	key := []byte(prefix + "ns/a")
	createApplied(t, c, s, "a")
	held := weak.Make(c.Get(string(key)).(*corev1.ConfigMap))
	deleted, _, err := s.Delete(ctx, key, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitNotOlderThan(ctx, deleted); err != nil {
		t.Fatal(err)
	}
	fc.Step(2 * time.Minute)
	for giveUp := time.Now().Add(10 * time.Second); held.Value() != nil; time.Sleep(time.Millisecond) {
		if time.Now().After(giveUp) {
			t.Fatal("the deleted object is still held a minute past the window")
		}
		runtime.GC()
	}
}

// createApplied creates the ConfigMap name and waits for c to apply it.
func createApplied(t *testing.T, c *Cache, s storage.Store, name string) int64 {
	t.Helper()
	ctx := context.Background()
	rev, err := s.Create(ctx, []byte(prefix+"ns/"+name), configMapValue(name, nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitNotOlderThan(ctx, rev); err != nil {
		t.Fatal(err)
	}
	return rev
}

// TestWaitForFutureRevisionFollowsTheClock: the three seconds a read of a
// future resource version waits are the cache clock's.
func TestWaitForFutureRevisionFollowsTheClock(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Now())
	c, _ := newCache(t, Options{Clock: fc})
	waiters := fc.Waiters() // the bookmark timer
	done := make(chan error, 1)
	go func() { done <- c.WaitNotOlderThan(context.Background(), c.Revision()+100) }()
	// Wait (in real time, without sleeping) for the deadline timer.
	giveUp := time.Now().Add(10 * time.Second)
	for fc.Waiters() == waiters {
		if time.Now().After(giveUp) {
			t.Fatal("the wait set no timer on the cache's clock")
		}
		runtime.Gosched()
	}
	select {
	case err := <-done:
		t.Fatalf("wait ended before the clock moved: %v", err)
	default:
	}
	fc.Step(3 * time.Second)
	select {
	case err := <-done:
		if _, ok := err.(*ErrTooLarge); !ok {
			t.Fatalf("got %v, want ErrTooLarge", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("wait did not end when the clock passed three seconds")
	}
}

// TestCompactedContinuationGoesOnAtLatest: a continue token whose snapshot
// and storage history are gone gets 410 with a token that goes on from the
// same key at the latest revision, as kube-apiserver answers; following
// it lists the rest, including what changed since.
func TestCompactedContinuationGoesOnAtLatest(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Now())
	c, s := newCache(t, Options{Window: time.Minute, Clock: fc})
	ctx := context.Background()
	for _, name := range []string{"a", "b", "c", "d"} {
		if _, err := s.Create(ctx, []byte(prefix+"ns/"+name), configMapValue(name, nil, "")); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitFresh(ctx); err != nil {
		t.Fatal(err)
	}
	first, err := c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Limit: 2})
	if err != nil || len(first.Items) != 2 || first.Continue == "" {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	fc.Step(2 * time.Minute) // the snapshot ages out with the next event
	rev, err := s.Create(ctx, []byte(prefix+"ns/e"), configMapValue("e", nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitNotOlderThan(ctx, rev); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	token, err := DecodeToken(first.Continue)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Limit: 2, Continue: token})
	gone, ok := err.(*ErrGone)
	if !ok || gone.Continue == "" {
		t.Fatalf("continuation after compaction: %v, want ErrGone with a new token", err)
	}
	if status := APIError(err).(interface{ Status() metav1.Status }).Status(); status.Code != 410 || status.Continue != gone.Continue {
		t.Errorf("status %+v, want 410 carrying the token", status)
	}
	latest, err := DecodeToken(gone.Continue)
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Limit: 1, Continue: latest})
	if err != nil || len(page.Items) != 1 || page.Remaining == nil || *page.Remaining != 2 {
		t.Fatalf("a page of one at latest: %d items, remaining %v, %v; want c with 2 remaining", len(page.Items), page.Remaining, err)
	}
	rest, err := c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Continue: latest})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, item := range rest.Items {
		names = append(names, item.(metav1.Object).GetName())
	}
	if strings.Join(names, ",") != "c,d,e" || rest.Revision != rev {
		t.Fatalf("continued at latest: %v at %d, want c,d,e at %d", names, rest.Revision, rev)
	}
}

// TestContinuationPastCompactionIsGone: once storage has compacted past a
// continue token's revision the token is gone, even though nothing in the
// resource changed and the cache could still answer it (kube-apiserver's
// tokens expire with etcd's compaction); a token at the compacted revision
// itself still works.
func TestContinuationPastCompactionIsGone(t *testing.T) {
	c, s := newCache(t, Options{})
	ctx := context.Background()
	for _, name := range []string{"a", "b", "c"} {
		if _, err := s.Create(ctx, []byte(prefix+"ns/"+name), configMapValue(name, nil, "")); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitFresh(ctx); err != nil {
		t.Fatal(err)
	}
	first, err := c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	token, _ := DecodeToken(first.Continue)
	if err := s.Compact(ctx, first.Revision); err != nil {
		t.Fatal(err)
	}
	if _, err := c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Limit: 1, Continue: token}); err != nil {
		t.Fatalf("continue at the compacted revision itself: %v", err)
	}
	// A write elsewhere moves the revision on; compaction passes the token.
	rev, err := s.Create(ctx, []byte("/elsewhere"), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	_, err = c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Limit: 1, Continue: token})
	if g, ok := err.(*ErrGone); !ok || g.Continue == "" {
		t.Fatalf("continue past compaction: %v, want ErrGone with a token", err)
	}
}

// countingEncoder counts the objects it encodes.
type countingEncoder struct{ encoded int }

func (e *countingEncoder) Encode(obj kruntime.Object, w io.Writer) error {
	e.encoded++
	_, err := w.Write([]byte("encoded"))
	return err
}

func (e *countingEncoder) Identifier() kruntime.Identifier { return "counting" }

// TestUnreadEncodingsAreDropped: an encoding made for a reader is kept
// while readers take it, and dropped once no reader took it for a whole
// KeepEncodings period by the cache's clock; the next reader encodes the
// object again.
func TestUnreadEncodingsAreDropped(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Now())
	c, s := newCache(t, Options{KeepEncodings: time.Minute, BookmarkInterval: time.Hour, Clock: fc})
	ctx := context.Background()
	rev, err := s.Create(ctx, []byte(prefix+"ns/a"), configMapValue("a", nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitNotOlderThan(ctx, rev); err != nil {
		t.Fatal(err)
	}
	c.mu.RLock()
	e, _ := c.tree.Get(&entry{key: prefix + "ns/a"})
	c.mu.RUnlock()
	encoder := &countingEncoder{}
	read := func() {
		t.Helper()
		if data, err := e.enc.Encode(encoder, e.obj); err != nil || string(data) != "encoded" {
			t.Fatalf("encoding: %q, %v", data, err)
		}
	}
	// sweep steps the clock to the next sweep and waits until the
	// encoding (read since the last) is kept as unread, or dropped.
	sweep := func(dropped bool) {
		t.Helper()
		fc.Step(time.Minute)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			e.enc.mu.Lock()
			kept, read := len(e.enc.entries), len(e.enc.entries) > 0 && e.enc.entries[0].read
			e.enc.mu.Unlock()
			if dropped && kept == 0 || !dropped && kept == 1 && !read {
				return
			}
		}
		t.Fatalf("the clock passed KeepEncodings, but the encoding is not %s", map[bool]string{true: "dropped", false: "kept unread"}[dropped])
	}
	read()
	read()
	if encoder.encoded != 1 {
		t.Fatalf("two reads encoded %d times, want once", encoder.encoded)
	}
	sweep(false) // read since it was made: kept
	read()
	sweep(false) // read again since the last sweep: kept
	read()
	if encoder.encoded != 1 {
		t.Fatalf("an encoding read in every period was made %d times, want once", encoder.encoded)
	}
	sweep(false)
	sweep(true) // a whole period unread: dropped
	read()
	if encoder.encoded != 2 {
		t.Fatalf("a reader after the encoding was dropped: encoded %d times in all, want 2", encoder.encoded)
	}
}

// TestIdleSnapshotIsDropped: a paged list's snapshot goes once no page was
// served from it for SnapshotIdle by the cache's clock, even with no event
// to trim it, so the superseded states it holds go with it; a page served
// keeps it; a continuation after it went reads the same revision from
// storage and still sees the list's state.
func TestIdleSnapshotIsDropped(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Now())
	c, s := newCache(t, Options{SnapshotIdle: 10 * time.Second, Clock: fc})
	ctx := context.Background()
	for _, name := range []string{"a", "b", "c", "d"} {
		if _, err := s.Create(ctx, []byte(prefix+"ns/"+name), configMapValue(name, nil, "old")); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitFresh(ctx); err != nil {
		t.Fatal(err)
	}
	first, err := c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Limit: 1})
	if err != nil || first.Continue == "" {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	kv, _, err := s.Get(ctx, []byte(prefix+"ns/d"), 0)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := s.Update(ctx, []byte(prefix+"ns/d"), configMapValue("d", nil, "new"), kv.ModRevision)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitNotOlderThan(ctx, rev); err != nil {
		t.Fatal(err)
	}
	next := func(token string) *ListResult {
		t.Helper()
		tok, err := DecodeToken(token)
		if err != nil {
			t.Fatal(err)
		}
		page, err := c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Limit: 1, Continue: tok})
		if err != nil {
			t.Fatal(err)
		}
		return page
	}

	stepAndCheck(t, c, fc, 6*time.Second, 1) // no check due yet
	second := next(first.Continue)           // served from the snapshot, which it keeps
	// The check at 12 s, 6 after the second page, keeps it; the one at
	// 22 s (seen at 23), 17 after, drops it.
	stepAndCheck(t, c, fc, 6*time.Second, 1)
	stepAndCheck(t, c, fc, 11*time.Second, 0)
	var names []string
	for page := next(second.Continue); ; page = next(page.Continue) {
		if page.Revision != first.Revision {
			t.Fatalf("page at %d, the list is at %d", page.Revision, first.Revision)
		}
		for _, item := range page.Items {
			cm := item.(*corev1.ConfigMap)
			names = append(names, cm.Name+"="+cm.Data["d"])
		}
		if page.Continue == "" || len(names) > 2 { // more would repeat items
			break
		}
	}
	if strings.Join(names, ",") != "c=old,d=old" {
		t.Fatalf("pages after the snapshot went: %v, want the list's state c=old,d=old", names)
	}
}

// TestDroppedSnapshotLetsGoOfWhatItAloneHeld: a paged list's snapshot
// that held an object since deleted tells LetGo of that object's
// encodings when it is dropped (the deletion told it once already, while
// the snapshot still held them).
func TestDroppedSnapshotLetsGoOfWhatItAloneHeld(t *testing.T) {
	var letGo atomic.Int64
	fc := clocktesting.NewFakeClock(time.Now())
	c, s := newCache(t, Options{SnapshotIdle: 10 * time.Second, Clock: fc, LetGo: func(n int) { letGo.Add(int64(n)) }})
	ctx := context.Background()
	for _, name := range []string{"a", "b"} {
		if _, err := s.Create(ctx, []byte(prefix+"ns/"+name), configMapValue(name, nil, "")); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitFresh(ctx); err != nil {
		t.Fatal(err)
	}
	if first, err := c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Limit: 1}); err != nil || first.Continue == "" {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	c.mu.RLock()
	e, _ := c.tree.Get(&entry{key: prefix + "ns/a"})
	c.mu.RUnlock()
	if _, err := e.enc.Encode(&countingEncoder{}, e.obj); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Delete(ctx, []byte(prefix+"ns/a"), 0); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := letGo.Load(); got != int64(len("encoded")) {
		t.Fatalf("after the deletion: %d bytes let go, want %d", got, len("encoded"))
	}
	stepAndCheck(t, c, fc, 11*time.Second, 0) // the snapshot, idle, goes
	if got := letGo.Load(); got != 2*int64(len("encoded")) {
		t.Fatalf("after the snapshot went: %d bytes let go, want %d", got, 2*len("encoded"))
	}
}

// stepAndCheck steps the cache's clock by d, waits (in real time) for
// the timers it fired to be armed again, which the snapshot check does
// once it has run, and then wants n snapshots.
func stepAndCheck(t *testing.T, c *Cache, fc *clocktesting.FakeClock, d time.Duration, n int) {
	t.Helper()
	armed := fc.Waiters()
	fc.Step(d)
	for giveUp := time.Now().Add(10 * time.Second); fc.Waiters() < armed; time.Sleep(time.Millisecond) {
		if time.Now().After(giveUp) {
			t.Fatalf("after a step of %v the cache's timers were not armed again", d)
		}
	}
	c.mu.RLock()
	got := len(c.snapshots)
	c.mu.RUnlock()
	if got != n {
		t.Fatalf("after a step of %v: %d snapshots, want %d", d, got, n)
	}
}

// TestReplacedObjectsLetGoOfEncodings: the encodings a reader made of an
// object are let go (told to LetGo, for the memory releaser) when the
// object is replaced by a newer version or deleted, and only then.
func TestReplacedObjectsLetGoOfEncodings(t *testing.T) {
	var letGo atomic.Int64
	c, s := newCache(t, Options{LetGo: func(n int) { letGo.Add(int64(n)) }})
	ctx := context.Background()
	key := []byte(prefix + "ns/a")
	encodeCurrent := func(rev int64) {
		t.Helper()
		if err := c.WaitNotOlderThan(ctx, rev); err != nil {
			t.Fatal(err)
		}
		c.mu.RLock()
		e, _ := c.tree.Get(&entry{key: string(key)})
		c.mu.RUnlock()
		if _, err := e.enc.Encode(&countingEncoder{}, e.obj); err != nil {
			t.Fatal(err)
		}
	}
	want := func(what string, n int) {
		t.Helper()
		if err := c.WaitFresh(ctx); err != nil {
			t.Fatal(err)
		}
		if got := letGo.Load(); got != int64(n) {
			t.Fatalf("%s: %d bytes let go, want %d", what, got, n)
		}
	}
	rev, err := s.Create(ctx, key, configMapValue("a", nil, "1"))
	if err != nil {
		t.Fatal(err)
	}
	encodeCurrent(rev)
	want("created and encoded", 0)
	if rev, err = s.Update(ctx, key, configMapValue("a", nil, "2"), rev); err != nil {
		t.Fatal(err)
	}
	want("updated", len("encoded"))
	encodeCurrent(rev)
	if _, _, err = s.Delete(ctx, key, 0); err != nil {
		t.Fatal(err)
	}
	want("deleted", 2*len("encoded"))
}

// TestRequestsDoNotWaitForAnUnbuiltCacheForever: a request to a cache not
// yet built waits up to three seconds on the cache's clock, then gets
// ErrUnready (kube-apiserver's 429 "storage is (re)initializing"); one
// waiting when the cache stops unbuilt (replaced, as when a CRD changes
// again at once) is told so at once. Before, both waited for as long as
// the client did, a watch holding its seat of priority and fairness.
func TestRequestsDoNotWaitForAnUnbuiltCacheForever(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Now())
	s, err := pebble.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := New(s, prefix, decodeConfigMap, Options{Clock: fc}) // never run: never built
	done := make(chan error, 1)
	go func() {
		_, _, err := c.WatchFrom(context.Background(), 1, Filter{Prefix: prefix}, false)
		done <- err
	}()
	giveUp := time.Now().Add(10 * time.Second)
	for !fc.HasWaiters() {
		if time.Now().After(giveUp) {
			t.Fatal("the wait set no timer on the cache's clock")
		}
		runtime.Gosched()
	}
	fc.Step(3 * time.Second)
	select {
	case err := <-done:
		if unready, ok := err.(*ErrUnready); !ok || unready.Stopped {
			t.Fatalf("got %v, want ErrUnready", err)
		}
		if status := apiStatusOf(t, err); status.Code != 429 || status.Message != "storage is (re)initializing" || status.Details.RetryAfterSeconds != 1 {
			t.Errorf("answered %d %q retry after %d", status.Code, status.Message, status.Details.RetryAfterSeconds)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end when the clock passed three seconds")
	}

	stopping := New(s, prefix, decodeConfigMap, Options{Clock: fc})
	go func() { done <- stopping.WaitServing(context.Background()) }()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stopping.Run(ctx) // stops at once, unbuilt
	select {
	case err := <-done:
		if unready, ok := err.(*ErrUnready); !ok || !unready.Stopped {
			t.Fatalf("got %v, want ErrUnready of a stopped cache", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a request waiting for a cache that stopped unbuilt still waits")
	}
	if err := stopping.WaitReady(context.Background()); err == nil {
		t.Error("the server's start waits for a cache that stopped unbuilt as if built")
	}
}

func apiStatusOf(t *testing.T, err error) metav1.Status {
	t.Helper()
	status, ok := APIError(err).(interface{ Status() metav1.Status })
	if !ok {
		t.Fatalf("%v is no API status", APIError(err))
	}
	return status.Status()
}
