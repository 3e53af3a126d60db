package cache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/btree"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/internal/storage"
)

// watcherBuffer bounds how many live events a watcher may lag behind
// before it is ended; its client resumes from the last revision it saw.
const watcherBuffer = 512

// watcherKeep is the largest queue a watcher keeps once it has caught up:
// a burst's longer queue goes, so that the memory of many watchers
// follows their lag, not the largest they ever had.
const watcherKeep = 64

// ErrTooSlow ends a watcher that could not keep up.
var ErrTooSlow = errors.New("watcher could not keep up")

// ErrExpired means a watch asked to resume from before the window.
type ErrExpired struct{ Requested, Oldest int64 }

func (e *ErrExpired) Error() string {
	return fmt.Sprintf("too old resource version: %d (%d)", e.Requested, e.Oldest)
}

// Filter selects what a list or watch sees.
type Filter struct {
	// Prefix restricts keys (a namespace's keys, say).
	Prefix string
	// Match tests an object; nil matches everything.
	Match func(runtime.Object) bool
}

func (f Filter) matches(obj runtime.Object) bool { return f.Match == nil || f.Match(obj) }

// Delivery is one event as one watcher sees it.
type Delivery struct {
	Event *Event
	// Type is the event's type for this watcher: with a filter, an object
	// that starts matching is Added and one that stops is Deleted.
	Type watch.EventType
	// Bookmark, when non-zero, makes this a bookmark at that revision.
	Bookmark int64
}

// Object is what the delivery sends: for an object that stopped matching,
// its previous state at the event's revision. The Encodings, when not
// nil, cache the object's encoded bytes.
func (d Delivery) Object() (runtime.Object, *Encodings) {
	if d.Type == watch.Deleted && d.Event.Type == watch.Modified {
		return withRevision(d.Event.Prev, d.Event.Rev), nil
	}
	return d.Event.Obj, d.Event.ObjEncodings
}

// Watcher receives the events of one watch.
type Watcher struct {
	cache     *Cache
	filter    Filter
	after     int64 // events at or before this revision are not sent
	bookmarks bool
	// deadline is when the watch ends, on the cache's clock (zero: not
	// known); its last bookmark comes shortly before.
	deadline time.Time
	mu       sync.Mutex
	queue    []Delivery    // waiting to be taken, in revision order
	ready    chan struct{} // given a token when deliveries start waiting, and when the watch ends
	done     chan struct{}
	// ended is set as done is closed. A watch asks twice per batch it
	// sends; a receive from done would lock the channel each time (3% of
	// delivering an event to 1,000 watches), a flag is one load.
	ended   atomic.Bool
	once    sync.Once // ends the watch
	release sync.Once // Stop
	err     error
}

// Ready receives when live events are waiting, and once when the watch
// ends (the cache ended it, or Stop): Take them then, and check Ended. One
// channel to wait on keeps a watch's select short: a select locks every
// channel it names, on each wakeup, for each of possibly thousands of
// watches.
func (w *Watcher) Ready() <-chan struct{} { return w.ready }

// Ended tells whether the watch has ended: the cache ended it (too slow,
// or the cache stopped; Err says which), or Stop.
func (w *Watcher) Ended() bool { return w.ended.Load() }

// Take hands over the waiting live events in revision order, however
// many a burst brought, and empties the queue. Passing back the previous
// Take's slice lets the queue reuse it; its deliveries are cleared.
func (w *Watcher) Take(previous []Delivery) []Delivery {
	if cap(previous) > watcherKeep {
		previous = nil
	}
	clear(previous)
	w.mu.Lock()
	taken := w.queue
	w.queue = previous[:0]
	w.mu.Unlock()
	return taken
}

// Done is closed when the watch ends from the cache's side.
func (w *Watcher) Done() <-chan struct{} { return w.done }

// Err tells why Done was closed (nil when the cache was rebuilt).
func (w *Watcher) Err() error { return w.err }

// Stop ends the watch and releases it. Calls after the first do nothing:
// a watch handler stops its watcher when its request ends and again on
// its way out, and the cache's lock is for its writes.
func (w *Watcher) Stop() {
	w.release.Do(func() {
		w.cache.mu.Lock()
		delete(w.cache.watchers, w)
		w.cache.mu.Unlock()
		w.stop(nil)
	})
}

func (w *Watcher) stop(err error) {
	w.once.Do(func() {
		w.err = err
		w.ended.Store(true)
		close(w.done)
		w.signal()
	})
}

// classify says how the watcher sees e, and whether it sees it at all.
func (w *Watcher) classify(e *Event) (watch.EventType, bool) {
	if e.Rev <= w.after || !strings.HasPrefix(e.Key, w.filter.Prefix) {
		return "", false
	}
	return w.filter.classify(e)
}

// classify says how a watch with the filter sees e, whose key it
// concerns, and whether it sees it at all.
func (f Filter) classify(e *Event) (watch.EventType, bool) {
	if f.Match == nil {
		return e.Type, true
	}
	switch e.Type {
	case watch.Added, watch.Deleted:
		return e.Type, f.Match(e.Obj)
	}
	now, before := f.Match(e.Obj), f.Match(e.Prev)
	switch {
	case now && before:
		return watch.Modified, true
	case now:
		return watch.Added, true
	case before:
		return watch.Deleted, true
	}
	return "", false
}

// offer queues e if it concerns the watcher; c.mu is held.
func (w *Watcher) offer(e *Event) {
	if typ, ok := w.classify(e); ok {
		w.push(Delivery{Event: e, Type: typ})
	}
}

// signal leaves a token in ready unless one is there already.
func (w *Watcher) signal() {
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// push queues d without blocking; a watcher with a full queue is ended.
// c.mu is held.
func (w *Watcher) push(d Delivery) {
	w.mu.Lock()
	waiting := len(w.queue)
	if waiting < watcherBuffer {
		w.queue = append(w.queue, d)
	}
	w.mu.Unlock()
	switch waiting {
	case 0:
		w.signal()
	case watcherBuffer:
		delete(w.cache.watchers, w)
		w.cache.metrics.terminated.Inc()
		w.stop(ErrTooSlow)
	}
}

// WatchFrom starts a watch of every change after rev. The changes already
// in the window come back as the backlog, to send before Deliveries. With
// bookmarks, ctx's deadline is taken as the watch's, for the bookmark that
// comes before it.
func (c *Cache) WatchFrom(ctx context.Context, rev int64, filter Filter, bookmarks bool) (*Watcher, []Delivery, error) {
	if err := c.WaitServing(ctx); err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	if oldest := c.oldestWatchable(); rev < oldest {
		c.mu.Unlock()
		return nil, nil, &ErrExpired{Requested: rev, Oldest: oldest}
	}
	var missed []*Event
	for i := range c.events {
		if e := &c.events[i]; e.rev > rev && strings.HasPrefix(e.key, filter.Prefix) {
			missed = append(missed, e.event())
		}
	}
	w := c.newWatcher(ctx, filter, max(rev, c.rev), bookmarks)
	c.register(w)
	c.mu.Unlock()
	backlog, err := c.backlog(ctx, missed, filter)
	if err != nil {
		w.Stop()
		return nil, nil, err
	}
	return w, backlog, nil
}

// backlog is how a watch with the filter sees the window's events it
// missed, outside the cache's lock: the objects of cooled events are read
// back from storage first.
func (c *Cache) backlog(ctx context.Context, missed []*Event, filter Filter) ([]Delivery, error) {
	var backlog []Delivery
	for _, e := range missed {
		if e.Obj == nil {
			var err error
			if e, err = c.reload(ctx, e, filter.Match != nil); err != nil {
				return nil, err
			}
		}
		if typ, ok := filter.classify(e); ok {
			backlog = append(backlog, Delivery{Event: e, Type: typ})
		}
	}
	return backlog, nil
}

// reload reads a cooled event's objects back from storage: the object as
// of the event (for a deletion, its last state at the deletion's revision)
// and, for an update when a filter needs it, the state before.
func (c *Cache) reload(ctx context.Context, cooled *Event, withPrev bool) (*Event, error) {
	e := *cooled
	var err error
	switch e.Type {
	case watch.Deleted:
		e.Obj, err = c.readAt(ctx, e.Key, e.Rev-1, e.Rev)
	case watch.Modified:
		if e.Obj, err = c.readAt(ctx, e.Key, e.Rev, e.Rev); err == nil && withPrev {
			e.Prev, err = c.readAt(ctx, e.Key, e.Rev-1, 0)
		}
	default:
		e.Obj, err = c.readAt(ctx, e.Key, e.Rev, e.Rev)
	}
	return &e, err
}

// readAt decodes key as stored at revision rev, giving it the resource
// version asRev when that is not 0. A revision compacted since the watch
// began makes the watch expire, as one from before the window would.
func (c *Cache) readAt(ctx context.Context, key string, rev, asRev int64) (runtime.Object, error) {
	kv, _, err := c.store.Get(ctx, []byte(key), rev)
	if errors.Is(err, storage.ErrCompacted) {
		return nil, &ErrExpired{Requested: rev, Oldest: c.store.CompactedRevision()}
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s at revision %d for a watch: %w", key, rev, err)
	}
	if asRev != 0 {
		kv.ModRevision = asRev
	}
	return c.decode(kv)
}

// WatchWithState starts a watch at the index's current revision and
// returns the objects that match at that revision, in key order, for the
// synthetic ADDED events that start it. Its deadline is ctx's, as for
// WatchFrom.
func (c *Cache) WatchWithState(ctx context.Context, filter Filter, bookmarks bool) (*Watcher, []runtime.Object, []*Encodings, int64, error) {
	if err := c.WaitServing(ctx); err != nil {
		return nil, nil, nil, 0, err
	}
	c.mu.Lock()
	tree, rev := c.tree.Clone(), c.rev
	w := c.newWatcher(ctx, filter, rev, bookmarks)
	c.register(w)
	c.mu.Unlock()
	p := collect(tree, filter, "", 0)
	return w, p.items, p.encodings, rev, nil
}

// register adds w to the watchers and schedules its first bookmark, or
// ends it at once if the cache has stopped; callers hold c.mu.
func (c *Cache) register(w *Watcher) {
	if c.stopped {
		w.stop(nil)
		return
	}
	c.watchers[w] = struct{}{}
	c.scheduleBookmark(w, c.opts.Clock.Now())
}

func (c *Cache) newWatcher(ctx context.Context, filter Filter, after int64, bookmarks bool) *Watcher {
	w := &Watcher{
		cache: c, filter: filter, after: after, bookmarks: bookmarks,
		ready: make(chan struct{}, 1), done: make(chan struct{}),
	}
	if bookmarks {
		w.deadline = c.watchDeadline(ctx)
	}
	return w
}

// page is a run of matching objects from an index.
type page struct {
	items     []runtime.Object
	encodings []*Encodings // parallel to items
	// next is the key to continue from, empty when the range is done:
	// just after the last key looked at, as kube-apiserver's tokens, so
	// that a list going on at a later revision (after a 410) gets what was
	// created since between the pages.
	next string
	// remaining counts the keys after the page, when asked.
	remaining int64
	// fetched counts the objects looked at.
	fetched int
	// corrupt holds why each object in the range that cannot be decoded
	// cannot.
	corrupt []error
}

// keyAfter is the first key that sorts after key.
func keyAfter(key string) string {
	return key + "\x00"
}

// collect gathers up to limit (0: all) matching objects with keys under
// filter.Prefix, starting at start.
func collect(tree *btree.BTreeG[*entry], filter Filter, start string, limit int) page {
	var p page
	from := &entry{key: filter.Prefix}
	if start > filter.Prefix {
		from.key = start
	}
	var last string
	tree.AscendGreaterOrEqual(from, func(e *entry) bool {
		if !strings.HasPrefix(e.key, filter.Prefix) {
			return false
		}
		if limit > 0 && len(p.items) == limit {
			// As kube-apiserver's cache: a full page has a next one if
			// anything follows, matching or not (which may be empty).
			p.next = keyAfter(last)
			return false
		}
		last = e.key
		p.fetched++
		if e.corrupt != nil {
			p.corrupt = append(p.corrupt, e.corrupt)
			return true
		}
		if !filter.matches(e.obj) {
			return true
		}
		p.items = append(p.items, e.obj)
		p.encodings = append(p.encodings, e.enc)
		return true
	})
	return p
}
