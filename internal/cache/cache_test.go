package cache

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	kstorage "k8s.io/apiserver/pkg/storage"

	"github.com/kapi-dev/kapi/internal/storage"
	"github.com/kapi-dev/kapi/internal/storage/pebble"
)

const prefix = "/registry/core/configmaps/"

func decodeConfigMap(kv *storage.KeyValue) (runtime.Object, error) {
	cm := &corev1.ConfigMap{}
	if err := json.Unmarshal(kv.Value, cm); err != nil {
		return nil, err
	}
	cm.ResourceVersion = strconv.FormatInt(kv.ModRevision, 10)
	return cm, nil
}

func configMapValue(name string, labels map[string]string, data string) []byte {
	b, _ := json.Marshal(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels},
		Data:       map[string]string{"d": data},
	})
	return b
}

// newCache starts a cache over a fresh store.
func newCache(t *testing.T, opts Options) (*Cache, storage.Store) {
	t.Helper()
	s, err := pebble.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); s.Close() })
	c := New(s, prefix, decodeConfigMap, opts)
	go c.Run(ctx)
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return c, s
}

// stoppableCache is newCache with a stop that ends the cache's Run and
// returns once it has returned.
func stoppableCache(t *testing.T, opts Options) (*Cache, storage.Store, func()) {
	t.Helper()
	s, err := pebble.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := New(s, prefix, decodeConfigMap, opts)
	stopped := make(chan struct{})
	go func() { c.Run(ctx); close(stopped) }()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return c, s, func() { cancel(); <-stopped }
}

// openCache is newCache for benchmarks, with default options.
func openCache(dir string) (storage.Store, *Cache, context.CancelFunc) {
	s, err := pebble.Open(dir)
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := New(s, prefix, decodeConfigMap, Options{})
	go c.Run(ctx)
	c.WaitReady(ctx)
	return s, c, cancel
}

func nextDelivery(t *testing.T, w *Watcher) Delivery {
	t.Helper()
	for {
		if d, ok := takenDelivery(w); ok {
			return d
		}
		select {
		case <-w.Ready():
			takeDeliveries(w)
		case <-w.Done():
			t.Fatalf("watch ended: %v", w.Err())
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10s")
		}
	}
}

// taken holds what tests took from each watcher and have not looked at.
var taken = struct {
	sync.Mutex
	deliveries map[*Watcher][]Delivery
}{deliveries: map[*Watcher][]Delivery{}}

func takeDeliveries(w *Watcher) {
	batch := w.Take(nil)
	taken.Lock()
	defer taken.Unlock()
	taken.deliveries[w] = append(taken.deliveries[w], batch...)
}

func takenDelivery(w *Watcher) (Delivery, bool) {
	taken.Lock()
	defer taken.Unlock()
	q := taken.deliveries[w]
	if len(q) == 0 {
		return Delivery{}, false
	}
	taken.deliveries[w] = q[1:]
	return q[0], true
}

// deliveryWaiting reports, without waiting, whether w has a delivery.
func deliveryWaiting(w *Watcher) bool {
	select {
	case <-w.Ready():
		takeDeliveries(w)
	default:
	}
	taken.Lock()
	defer taken.Unlock()
	return len(taken.deliveries[w]) > 0
}

// TestEveryWriteReachesEveryWatcherOnce is DESIGN invariant 1: with many
// concurrent writers, each watcher sees exactly the storage history after
// its start, in revision order, whichever way it started.
func TestEveryWriteReachesEveryWatcherOnce(t *testing.T) {
	c, s := newCache(t, Options{})
	ctx := context.Background()
	const writers, writes, watchers = 6, 40, 8

	type started struct {
		w     *Watcher
		after int64
		seen  []int64
	}
	var ws []*started
	startWatcher := func() {
		rev := c.Revision()
		w, backlog, err := c.WatchFrom(ctx, rev, Filter{Prefix: prefix}, false)
		if err != nil {
			t.Fatal(err)
		}
		st := &started{w: w, after: rev}
		for _, d := range backlog {
			st.seen = append(st.seen, d.Event.Rev)
		}
		ws = append(ws, st)
	}
	startWatcher()

	var wg sync.WaitGroup
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < writes; j++ {
				key := []byte(fmt.Sprintf("%sns/cm-%d-%d", prefix, i, j%5))
				if j < 5 {
					s.Create(ctx, key, configMapValue("x", nil, "v"))
					continue
				}
				kv, _, err := s.Get(ctx, key, 0)
				if err != nil {
					t.Error(err)
					return
				}
				if j%7 == 0 {
					s.Delete(ctx, key, kv.ModRevision)
					s.Create(ctx, key, configMapValue("x", nil, "again"))
				} else {
					s.Update(ctx, key, configMapValue("x", nil, fmt.Sprint(j)), kv.ModRevision)
				}
			}
		}(i)
	}
	for len(ws) < watchers {
		startWatcher() // watchers join while writes are under way
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
	end, _ := s.CurrentRevision(ctx)
	if err := c.WaitNotOlderThan(ctx, end); err != nil {
		t.Fatal(err)
	}

	history, err := s.Watch(ctx, []byte(prefix), 0)
	if err != nil {
		t.Fatal(err)
	}
	var all []int64
	for len(all) == 0 || all[len(all)-1] < end {
		ev := <-history.Events()
		all = append(all, ev.KV.ModRevision)
	}
	for i, st := range ws {
		for st.after < end && (len(st.seen) == 0 || st.seen[len(st.seen)-1] < end) {
			st.seen = append(st.seen, nextDelivery(t, st.w).Event.Rev)
		}
		var want []int64
		for _, r := range all {
			if r > st.after {
				want = append(want, r)
			}
		}
		if fmt.Sprint(st.seen) != fmt.Sprint(want) {
			t.Fatalf("watcher %d from %d saw %v\nwant %v", i, st.after, st.seen, want)
		}
	}
}

func TestFilteredWatchTransitions(t *testing.T) {
	c, s := newCache(t, Options{})
	ctx := context.Background()
	match := func(o runtime.Object) bool { return o.(*corev1.ConfigMap).Labels["tier"] == "web" }
	w, _, err := c.WatchFrom(ctx, c.Revision(), Filter{Prefix: prefix, Match: match}, false)
	if err != nil {
		t.Fatal(err)
	}
	key := []byte(prefix + "ns/a")
	r1, _ := s.Create(ctx, key, configMapValue("a", nil, "1"))
	r2, _ := s.Update(ctx, key, configMapValue("a", map[string]string{"tier": "web"}, "1"), r1)
	r3, _ := s.Update(ctx, key, configMapValue("a", map[string]string{"tier": "web"}, "2"), r2)
	r4, _ := s.Update(ctx, key, configMapValue("a", map[string]string{"tier": "db"}, "2"), r3)
	for _, want := range []struct {
		typ watch.EventType
		rev int64
	}{{watch.Added, r2}, {watch.Modified, r3}, {watch.Deleted, r4}} {
		d := nextDelivery(t, w)
		o, _ := d.Object()
		obj := o.(*corev1.ConfigMap)
		if d.Type != want.typ || obj.ResourceVersion != fmt.Sprint(want.rev) {
			t.Fatalf("got %s at %s, want %s at %d", d.Type, obj.ResourceVersion, want.typ, want.rev)
		}
		if want.typ == watch.Deleted && obj.Labels["tier"] != "web" {
			t.Fatalf("a DELETED for an object leaving the selection carries its previous state, got labels %v", obj.Labels)
		}
	}
}

func TestWatchFromBeforeWindowExpires(t *testing.T) {
	c, s := newCache(t, Options{MaxEvents: 3})
	ctx := context.Background()
	first, _ := s.Create(ctx, []byte(prefix+"ns/0"), configMapValue("0", nil, ""))
	for i := 1; i < 6; i++ {
		s.Create(ctx, []byte(fmt.Sprintf("%sns/%d", prefix, i)), configMapValue("x", nil, ""))
	}
	end, _ := s.CurrentRevision(ctx)
	c.WaitNotOlderThan(ctx, end)
	_, _, err := c.WatchFrom(ctx, first, Filter{Prefix: prefix}, false)
	if _, ok := err.(*ErrExpired); !ok {
		t.Fatalf("watch from %d with only 3 events kept: %v, want ErrExpired", first, err)
	}
	if _, _, err := c.WatchFrom(ctx, end-3, Filter{Prefix: prefix}, false); err != nil {
		t.Fatalf("watch from inside the window: %v", err)
	}
}

func TestPagedListReadsOneSnapshot(t *testing.T) {
	c, s := newCache(t, Options{})
	ctx := context.Background()
	for i := 0; i < 7; i++ {
		s.Create(ctx, []byte(fmt.Sprintf("%sns/%d", prefix, i)), configMapValue(fmt.Sprint(i), nil, ""))
	}
	first, err := c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Items) != 3 || first.Continue == "" || first.Remaining == nil || *first.Remaining != 4 {
		t.Fatalf("first page: %d items, continue %q, remaining %v", len(first.Items), first.Continue, first.Remaining)
	}
	kv, _, _ := s.Get(ctx, []byte(prefix+"ns/5"), 0)
	s.Delete(ctx, []byte(prefix+"ns/5"), kv.ModRevision)
	s.Create(ctx, []byte(prefix+"ns/4a"), configMapValue("new", nil, ""))

	var names []string
	token := first.Continue
	for token != "" {
		tok, err := DecodeToken(token)
		if err != nil {
			t.Fatal(err)
		}
		page, err := c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Limit: 3, Continue: tok})
		if err != nil {
			t.Fatal(err)
		}
		if page.Revision != first.Revision {
			t.Fatalf("page at %d, first page at %d", page.Revision, first.Revision)
		}
		for _, o := range page.Items {
			names = append(names, o.(*corev1.ConfigMap).Name)
		}
		token = page.Continue
	}
	if fmt.Sprint(names) != "[3 4 5 6]" {
		t.Fatalf("later pages = %v, want the snapshot's [3 4 5 6]", names)
	}
}

// TestRemainingCountsOfPages pages through two namespaces and all of them
// in one snapshot, pages interleaved, and checks each page's count of the
// objects after it, while objects change after the first pages.
func TestRemainingCountsOfPages(t *testing.T) {
	c, s := newCache(t, Options{})
	ctx := context.Background()
	counts := map[string]int{"a/": 11, "b/": 6}
	for ns, n := range counts {
		for i := 0; i < n; i++ {
			s.Create(ctx, []byte(fmt.Sprintf("%s%s%02d", prefix, ns, i)), configMapValue("x", nil, ""))
		}
	}
	type pager struct {
		prefix string
		total  int
		seen   int
		token  *Token
	}
	pagers := []*pager{{prefix: prefix + "a/", total: 11}, {prefix: prefix + "b/", total: 6}, {prefix: prefix, total: 17}}
	var rev int64
	for step := 0; ; step++ {
		active := 0
		for _, p := range pagers {
			if step > 0 && p.token == nil {
				continue
			}
			active++
			req := ListRequest{Filter: Filter{Prefix: p.prefix}, Limit: 4, Continue: p.token}
			if step == 0 && rev != 0 {
				req.Consistency, req.Revision = Exact, rev
			}
			page, err := c.List(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			rev = page.Revision
			p.seen += len(page.Items)
			if page.Continue == "" {
				if p.seen != p.total || page.Remaining != nil {
					t.Fatalf("%s: last page after %d of %d objects, remaining %v", p.prefix, p.seen, p.total, page.Remaining)
				}
				p.token = nil
				continue
			}
			if page.Remaining == nil || *page.Remaining != int64(p.total-p.seen) {
				t.Fatalf("%s: after %d of %d objects, remaining %v", p.prefix, p.seen, p.total, page.Remaining)
			}
			if p.token, err = DecodeToken(page.Continue); err != nil {
				t.Fatal(err)
			}
		}
		if active == 0 {
			break
		}
		if step == 0 { // later pages read the snapshot, not these
			s.Create(ctx, []byte(prefix+"a/05x"), configMapValue("new", nil, ""))
			kv, _, _ := s.Get(ctx, []byte(prefix+"b/03"), 0)
			s.Delete(ctx, []byte(prefix+"b/03"), kv.ModRevision)
		}
	}
}

func TestWaitForFutureRevisionTimesOut(t *testing.T) {
	c, _ := newCache(t, Options{})
	err := c.waitFor(context.Background(), c.Revision()+100, 50*time.Millisecond)
	if _, ok := err.(*ErrTooLarge); !ok {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
}

func TestConsistentReadOfQuietResource(t *testing.T) {
	c, s := newCache(t, Options{})
	ctx := context.Background()
	// Writes elsewhere move the store's revision past the cache's.
	for i := 0; i < 3; i++ {
		s.Create(ctx, []byte(fmt.Sprintf("/registry/core/secrets/ns/%d", i)), []byte("{}"))
	}
	if err := c.WaitFresh(ctx); err != nil {
		t.Fatalf("a cache with no writes of its own must still become fresh: %v", err)
	}
}

// TestGetFreshSeesEveryCommittedWrite: GetFresh answers with each write
// made to storage just before it, also when writes elsewhere moved the
// revision on; it leaves to storage what it cannot answer.
func TestGetFreshSeesEveryCommittedWrite(t *testing.T) {
	c, s := newCache(t, Options{FreshGets: true})
	ctx := context.Background()
	key := prefix + "ns/a"
	rev, err := s.Create(ctx, []byte(key), configMapValue("a", nil, "0"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 50; i++ {
		if i%2 == 0 { // the store's revision moves on with the cache's resource quiet
			s.Create(ctx, []byte(fmt.Sprintf("/registry/core/secrets/ns/%d", i)), []byte("{}"))
		}
		if rev, err = s.Update(ctx, []byte(key), configMapValue("a", nil, strconv.Itoa(i)), rev); err != nil {
			t.Fatal(err)
		}
		obj, enc := c.GetFresh(ctx, key)
		if obj == nil || enc == nil {
			t.Fatalf("update %d: no answer", i)
		}
		if cm := obj.(*corev1.ConfigMap); cm.Data["d"] != strconv.Itoa(i) || cm.ResourceVersion != strconv.FormatInt(rev, 10) {
			t.Fatalf("update %d at %d: got %q at %s", i, rev, cm.Data["d"], cm.ResourceVersion)
		}
	}
	if obj, _ := c.GetFresh(ctx, prefix+"ns/missing"); obj != nil {
		t.Fatalf("a missing object: %v, want nil (storage says it is not found)", obj)
	}
	s.Create(ctx, []byte(prefix+"ns/corrupt"), []byte("not json"))
	if obj, _ := c.GetFresh(ctx, prefix+"ns/corrupt"); obj != nil {
		t.Fatalf("an object that does not decode: %v, want nil (storage says why)", obj)
	}
	off, _ := newCache(t, Options{})
	if obj, _ := off.GetFresh(ctx, key); obj != nil {
		t.Fatalf("without FreshGets: %v, want nil", obj)
	}
}

// TestGetFreshLeavesAStoppedCache: a stopped cache answers no progress
// request, so GetFresh leaves it to storage at once instead of waiting
// (a server's controllers read while it stops).
func TestGetFreshLeavesAStoppedCache(t *testing.T) {
	c, s, stop := stoppableCache(t, Options{FreshGets: true})
	stop()
	// The store moves on; the stopped cache cannot follow.
	if _, err := s.Create(context.Background(), []byte("/registry/core/secrets/ns/a"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	defer func(wait time.Duration) { freshGetWait = wait }(freshGetWait)
	freshGetWait = time.Hour
	got := make(chan runtime.Object, 1)
	go func() {
		obj, _ := c.GetFresh(context.Background(), prefix+"ns/a")
		got <- obj
	}()
	select {
	case obj := <-got:
		if obj != nil {
			t.Fatalf("a stopped cache answered %v", obj)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("GetFresh waits for a stopped cache")
	}
}

// TestSlowWatcherIsEnded checks that a watcher that stops reading is cut
// off instead of buffering without bound, and that others are unaffected.
func TestSlowWatcherIsEnded(t *testing.T) {
	c, s := newCache(t, Options{})
	ctx := context.Background()
	slow, _, err := c.WatchFrom(ctx, c.Revision(), Filter{Prefix: prefix}, false)
	if err != nil {
		t.Fatal(err)
	}
	fast, _, _ := c.WatchFrom(ctx, c.Revision(), Filter{Prefix: prefix}, false)
	done := make(chan int)
	go func() {
		n := 0
		for n < watcherBuffer+10 {
			<-fast.Ready()
			n += len(fast.Take(nil))
		}
		done <- n
	}()
	for i := 0; i < watcherBuffer+10; i++ {
		if _, err := s.Create(ctx, []byte(fmt.Sprintf("%sns/%04d", prefix, i)), configMapValue("x", nil, "")); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-slow.Done():
		if slow.Err() != ErrTooSlow {
			t.Fatalf("slow watcher ended with %v", slow.Err())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("slow watcher was not ended")
	}
	if n := <-done; n != watcherBuffer+10 {
		t.Fatalf("reading watcher got %d events", n)
	}
}

// TestStoppedCacheEndsWatches: a cache that stops (its resource replaced,
// as when a CRD changes) ends its watches, and watches started on it
// afterwards end at once, instead of waiting for events that never come.
func TestStoppedCacheEndsWatches(t *testing.T) {
	c, _, stop := stoppableCache(t, Options{})
	w, _, err := c.WatchFrom(context.Background(), 0, Filter{Prefix: prefix}, false)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	select {
	case <-w.Ready(): // what the watch handlers wait on
		if !w.Ended() {
			t.Fatal("Ready without events, yet the watch has not ended")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not end when the cache stopped")
	}
	late, _, err := c.WatchFrom(context.Background(), 0, Filter{Prefix: prefix}, false)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-late.Done():
	default:
		t.Fatal("a watch started on a stopped cache did not end at once")
	}
}

// TestCooledEventsReplayAsDecoded checks that a watch resuming from
// before the decoded part of the window gets the same backlog, objects
// and selector transitions included, as from a window that kept every
// object, and expires once storage has compacted what it would read.
func TestCooledEventsReplayAsDecoded(t *testing.T) {
	cooled, s := newCache(t, Options{DecodedEvents: 2})
	ctx := context.Background()
	decoded := New(s, prefix, decodeConfigMap, Options{})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go decoded.Run(runCtx)
	if err := decoded.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	start := cooled.Revision()

	in, out := map[string]string{"x": "1"}, map[string]string{"x": "2"}
	a, b := []byte(prefix+"ns/a"), []byte(prefix+"ns/b")
	rev, _ := s.Create(ctx, a, configMapValue("a", in, "1"))
	rev, _ = s.Update(ctx, a, configMapValue("a", in, "2"), rev)
	rev, _ = s.Update(ctx, a, configMapValue("a", out, "3"), rev) // leaves the selection
	revB, _ := s.Create(ctx, b, configMapValue("b", in, "1"))
	s.Delete(ctx, b, revB)
	last, _ := s.Update(ctx, a, configMapValue("a", in, "4"), rev) // enters it again
	s.Create(ctx, []byte(prefix+"ns/c"), configMapValue("c", out, "1"))
	s.Create(ctx, []byte(prefix+"ns/d"), configMapValue("d", out, "1"))
	for _, c := range []*Cache{cooled, decoded} {
		if err := c.WaitNotOlderThan(ctx, last+2); err != nil {
			t.Fatal(err)
		}
	}

	matchIn := func(obj runtime.Object) bool { return obj.(*corev1.ConfigMap).Labels["x"] == "1" }
	describe := func(backlog []Delivery) []string {
		var out []string
		for _, d := range backlog {
			obj, _ := d.Object()
			cm := obj.(*corev1.ConfigMap)
			out = append(out, fmt.Sprintf("%s %s@%d rv=%s data=%s", d.Type, cm.Name, d.Event.Rev, cm.ResourceVersion, cm.Data["d"]))
		}
		return out
	}
	for _, filter := range []Filter{{Prefix: prefix}, {Prefix: prefix, Match: matchIn}} {
		_, want, err := decoded.WatchFrom(ctx, start, filter, false)
		if err != nil {
			t.Fatal(err)
		}
		_, got, err := cooled.WatchFrom(ctx, start, filter, false)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := describe(got), describe(want); fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("backlog from cooled events:\n%v\nfrom decoded events:\n%v", g, w)
		}
	}
	if cooled.cooled == 0 {
		t.Fatal("no event was cooled")
	}

	if err := s.Compact(ctx, last); err != nil {
		t.Fatal(err)
	}
	var expired *ErrExpired
	if _, _, err := cooled.WatchFrom(ctx, start, Filter{Prefix: prefix}, false); !errors.As(err, &expired) {
		t.Fatalf("watch from a compacted cooled event: %v, want ErrExpired", err)
	}
}

// TestGetForWriteWithholdsCopiesOlderThanAWrite: a write the index has
// not applied yet withholds the key's copy until it is applied; a write it
// has applied already withholds nothing. The copy comes with the checksum
// of the bytes it was decoded from.
func TestGetForWriteWithholdsCopiesOlderThanAWrite(t *testing.T) {
	c, s := newCache(t, Options{})
	ctx := context.Background()
	key := prefix + "ns/a"
	value := configMapValue("a", nil, "0")
	rev, err := s.Create(ctx, []byte(key), value)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFresh(ctx); err != nil {
		t.Fatal(err)
	}
	c.Wrote(key, rev) // applied already
	obj, sum := c.GetForWrite(key)
	if obj == nil || sum != StoredSum(value) {
		t.Fatalf("after an applied write: %v with sum %x, want the object with %x", obj, sum, StoredSum(value))
	}

	c.Wrote(key, rev+1) // a write the index has yet to see
	if obj, _ := c.GetForWrite(key); obj != nil {
		t.Fatalf("before the write is applied: %v, want nil", obj)
	}
	if obj := c.Get(key); obj == nil {
		t.Fatal("Get withheld the object too")
	}
	value = configMapValue("a", nil, "1")
	if _, err := s.Update(ctx, []byte(key), value, rev); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFresh(ctx); err != nil {
		t.Fatal(err)
	}
	obj, sum = c.GetForWrite(key)
	if obj == nil || obj.(*corev1.ConfigMap).Data["d"] != "1" || sum != StoredSum(value) {
		t.Fatalf("after the write is applied: %v with sum %x, want the new object with %x", obj, sum, StoredSum(value))
	}
}

// TestWatchFromARevisionOfAnotherResource: the window holds every event
// after the last one it let go, so a watch from a revision that changed
// other resources only, after that one and before the window's first
// event, misses nothing and starts (a list's revision often is one).
func TestWatchFromARevisionOfAnotherResource(t *testing.T) {
	c, s := newCache(t, Options{MaxEvents: 3})
	ctx := context.Background()
	var trimmed int64
	for i := range 3 {
		trimmed, _ = s.Create(ctx, []byte(fmt.Sprintf("%sns/old-%d", prefix, i)), configMapValue("x", nil, ""))
	}
	other, _ := s.Create(ctx, []byte("/registry/secrets/ns/s1"), configMapValue("s", nil, ""))
	s.Create(ctx, []byte("/registry/secrets/ns/s2"), configMapValue("s", nil, ""))
	for i := range 3 {
		s.Create(ctx, []byte(fmt.Sprintf("%sns/new-%d", prefix, i)), configMapValue("x", nil, ""))
	}
	end, _ := s.CurrentRevision(ctx)
	c.WaitNotOlderThan(ctx, end)
	if _, _, err := c.WatchFrom(ctx, other, Filter{Prefix: prefix}, false); err != nil {
		t.Errorf("watch from %d, another resource's revision after the last event let go (%d): %v", other, trimmed, err)
	}
	if _, _, err := c.WatchFrom(ctx, trimmed-1, Filter{Prefix: prefix}, false); err == nil {
		t.Errorf("watch from %d, before the last event let go: no error, want ErrExpired", trimmed-1)
	}
}

// TestSelectedPageHasANextOneIfAnythingFollows: as kube-apiserver's
// cache, a full page of a filtered list carries a continue token when
// any object follows it, matching or not; the next page may be empty.
func TestSelectedPageHasANextOneIfAnythingFollows(t *testing.T) {
	c, s := newCache(t, Options{})
	ctx := context.Background()
	for _, name := range []string{"a1", "b1", "b2"} {
		s.Create(ctx, []byte(prefix+"ns/"+name), configMapValue(name, nil, ""))
	}
	startsWithA := Filter{Prefix: prefix, Match: func(obj runtime.Object) bool {
		return strings.HasPrefix(obj.(*corev1.ConfigMap).Name, "a")
	}}
	first, err := c.List(ctx, ListRequest{Filter: startsWithA, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Items) != 1 || first.Continue == "" {
		t.Fatalf("first page: %d items, continue %q", len(first.Items), first.Continue)
	}
	tok, err := DecodeToken(first.Continue)
	if err != nil {
		t.Fatal(err)
	}
	next, err := c.List(ctx, ListRequest{Filter: startsWithA, Limit: 1, Continue: tok})
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Items) != 0 || next.Continue != "" {
		t.Fatalf("next page: %d items, continue %q", len(next.Items), next.Continue)
	}
}

// TestContinuingAfterCompactionGetsWhatWasCreatedBetweenPages: the token
// of a 410 for a compacted continuation goes on at the latest revision
// from just after the last key listed, as kube-apiserver's: an object
// created since between the pages is in the next page.
func TestContinuingAfterCompactionGetsWhatWasCreatedBetweenPages(t *testing.T) {
	c, s := newCache(t, Options{})
	ctx := context.Background()
	for _, name := range []string{"a", "b", "c", "d"} {
		s.Create(ctx, []byte(prefix+"ns/"+name), configMapValue(name, nil, ""))
	}
	first, err := c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	rev, _ := s.Create(ctx, []byte(prefix+"ns/bb"), configMapValue("bb", nil, ""))
	if err := s.Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	tok, err := DecodeToken(first.Continue)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Limit: 2, Continue: tok})
	var gone *ErrGone
	if !errors.As(err, &gone) || gone.Continue == "" {
		t.Fatalf("a continuation of a compacted list: %v, want ErrGone with a token", err)
	}
	if tok, err = DecodeToken(gone.Continue); err != nil {
		t.Fatal(err)
	}
	c.WaitNotOlderThan(ctx, rev)
	next, err := c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Limit: 2, Continue: tok})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range next.Items {
		names = append(names, o.(*corev1.ConfigMap).Name)
	}
	if fmt.Sprint(names) != "[bb c]" {
		t.Fatalf("the page after the 410 = %v, want [bb c]", names)
	}
}

// TestPagesReadFromStorageCountWhatFollows: a page at a revision the cache
// holds no snapshot of is read from storage, and tells, as a page from the
// cache does, how many objects follow it.
func TestPagesReadFromStorageCountWhatFollows(t *testing.T) {
	c, s := newCache(t, Options{})
	ctx := context.Background()
	var rev int64
	for i := 0; i < 5; i++ {
		rev, _ = s.Create(ctx, []byte(fmt.Sprintf("%sns/%d", prefix, i)), configMapValue(fmt.Sprint(i), nil, ""))
	}
	s.Create(ctx, []byte(prefix+"ns/later"), configMapValue("later", nil, ""))
	c.WaitNotOlderThan(ctx, rev+1)
	page, err := c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}, Consistency: Exact, Revision: rev, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 2 || page.Continue == "" || page.Remaining == nil || *page.Remaining != 3 {
		t.Fatalf("a page from storage: %d items, continue %q, remaining %v; want 2, a token and 3", len(page.Items), page.Continue, page.Remaining)
	}
}

// TestDecodeTokenAsKube: continue tokens are read by kube's own decoder:
// any negative revision continues at the latest, a start key that a
// path's cleaning would change is refused, each with kube's words.
func TestDecodeTokenAsKube(t *testing.T) {
	token := func(raw string) string { return base64.RawURLEncoding.EncodeToString([]byte(raw)) }
	if tok, err := DecodeToken(token(`{"v":"meta.k8s.io/v1","rv":-5,"start":"ns/a\u0000"}`)); err != nil || tok.Revision != -5 || tok.Start != "ns/a\x00" {
		t.Errorf("a token at revision -5: %+v %v", tok, err)
	}
	for raw, want := range map[string]error{
		`{"v":"meta.k8s.io/v1","rv":7,"start":"//x"}`:  kstorage.ErrGenericInvalidKey,
		`{"v":"meta.k8s.io/v1","rv":7,"start":"../x"}`: kstorage.ErrGenericInvalidKey,
		`{"v":"meta.k8s.io/v1","rv":0,"start":"x"}`:    kstorage.ErrInvalidStartRV,
		`{"v":"meta.k8s.io/v1","rv":7,"start":""}`:     kstorage.ErrEmptyStartKey,
		`{"v":"v2","rv":7,"start":"x"}`:                kstorage.ErrUnrecognizedEncodedVersion,
		`{"v":"meta.k8s.io/v1","rv":"7"}`:              kstorage.ErrGenericInvalidKey,
	} {
		if _, err := DecodeToken(token(raw)); !errors.Is(err, want) {
			t.Errorf("token %s: %v, want %v", raw, err, want)
		}
	}
}
