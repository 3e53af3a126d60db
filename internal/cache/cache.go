// Package cache is the watch cache: per resource, the current objects in a
// sorted in-memory index and a window of recent events, fed by one storage
// watch. It serves lists, watches, bookmarks and streaming lists without
// touching storage, and answers consistent reads by waiting until it has
// caught up with the storage revision read when the request began. It never
// writes to storage.
package cache

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"time"

	"github.com/google/btree"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/kapi-dev/kapi/internal/memory"
	"github.com/kapi-dev/kapi/internal/storage"
)

// Decoder turns a stored version into an object carrying its resource
// version (the version's mod revision).
type Decoder func(kv *storage.KeyValue) (runtime.Object, error)

// Options tune a cache.
type Options struct {
	// Window is how long events are kept for watches that resume.
	Window time.Duration
	// MaxEvents bounds the events kept, whatever their age.
	MaxEvents int
	// DecodedEvents is how many of the newest events in the window keep
	// their objects (1,000 by default). Older events keep only their type,
	// key and revision: a watch resuming from one reads its objects back
	// from storage, which keeps every revision of the window until it is
	// compacted. So the superseded states the window holds are bounded by
	// this count, not by the write rate, while a watch resuming from a
	// recent revision (an informer's, after its timeout) reads nothing.
	DecodedEvents int
	// SnapshotIdle is how long a paged list's snapshot of the index is
	// kept after its last page was served (10 seconds by default). A
	// snapshot holds every object as it was, so once the objects change it
	// holds their superseded states and encodings; clients ask for the next
	// page at once, and a later continuation reads the same revision from
	// storage instead, which keeps it until compaction.
	SnapshotIdle time.Duration
	// BookmarkInterval is how long after its start, and then after each
	// bookmark, a watcher that asked for bookmarks gets one (1 minute by
	// default, kube-apiserver's). It also gets one two seconds before its
	// deadline, its context's: see bookmarks.go.
	BookmarkInterval time.Duration
	// KeepEncodings is how long an object's encoding made for a reader
	// (a list's or a watch's) is kept without another reader taking it
	// (10 s by default; it goes between one and two such periods after
	// the last reader). Encoded once, an object is served to any number
	// of readers without encoding it again; but each encoding is larger
	// than the decoded object (a pod with its managed fields: 6.4 KB of
	// JSON and 4.6 of protobuf, 3.5 KB decoded), so a few lists in two
	// representations hold three times the memory of the objects for as
	// long as the encodings are kept. The readers that come in bursts
	// (a client's pages, many watchers of one event, lists one after
	// another) share them; a repeated gzipped list of unchanged objects
	// is sent from its compressed section (package handlers) without
	// them.
	KeepEncodings time.Duration
	Logger        *slog.Logger
	// LetGo is told the bytes of the encodings the cache stops
	// referring to (memory.LetGo by default): garbage that a quiet
	// process would collect only minutes later.
	LetGo func(bytes int)
	// Prepare, when set, runs on every object before it is shared with
	// readers. Typed objects hold lazily filled caches (a Quantity's
	// string form) that encoding or printing would otherwise write while
	// other readers use the object; Prepare fills them, and may record the
	// encoding it made in enc.
	Prepare func(obj runtime.Object, enc *Encodings)
	// Clock is the time the cache goes by: event and snapshot ages, the
	// bookmark interval, the wait for a future revision and the pause
	// before a restart all follow it. Nil means the real clock.
	Clock clock.Clock
	// Resource names the cached resource in errors.
	Resource schema.GroupResource
	// ReplayHistory starts the window, on the cache's first start, with
	// the history storage still keeps (since its last compaction) instead
	// of empty, so that a watch resuming from before the cache started
	// finds its events: one moved from another server sharing the
	// storage, say. The cache is ready once it has caught up with the
	// revision storage was at when it started.
	ReplayHistory bool
	// FreshGets answers GetFresh from the index: for storage whose
	// current revision is read in process. Over shared storage that read
	// is a round trip, as long as reading the object itself.
	FreshGets bool
}

// entry is one object in the index. Entries are immutable: a change
// replaces the entry, so snapshots and events can share them.
type entry struct {
	key string
	obj runtime.Object
	enc *Encodings // &own; nil for a corrupt entry
	own Encodings
	sum uint64 // StoredSum of the bytes obj was decoded from
	// corrupt, when set, is why the stored version cannot be decoded: the
	// object is in storage but cannot be served. obj is then the last state
	// that could be decoded (nil if there was none), which watchers that
	// saw it get in a DELETED event when the corrupt object is deleted.
	corrupt error
}

func lessEntry(a, b *entry) bool { return a.key < b.key }

// Event is one change, shared by every watcher that receives it.
type Event struct {
	Type watch.EventType // Added, Modified or Deleted
	Rev  int64
	Key  string
	// Obj is the new state; for a deletion, the last state with the
	// revision of the deletion.
	Obj runtime.Object
	// Prev is the state before the change (nil for an addition).
	Prev runtime.Object
	// ObjEncodings caches Obj's encodings, shared with the index.
	ObjEncodings *Encodings
}

// windowEvent is an event of the window as a watch resuming from before it
// needs it, and the decoded Event while it is among the newest
// DecodedEvents. The window holds them by value, so that cooling an event
// allocates nothing: a copy made for each event, amid the writes' garbage,
// was the one long-lived allocation of each in its span.
type windowEvent struct {
	typ     watch.EventType
	rev     int64
	key     string
	at      time.Time
	decoded *Event // nil once cooled
}

// event is e as a watch's backlog takes it: a cooled one without objects,
// for backlog to read back from storage.
func (e *windowEvent) event() *Event {
	if e.decoded != nil {
		return e.decoded
	}
	return &Event{Type: e.typ, Rev: e.rev, Key: e.key}
}

// Cache is the watch cache of one resource.
type Cache struct {
	store  storage.Store
	prefix []byte
	decode Decoder
	opts   Options

	mu   sync.RWMutex
	tree *btree.BTreeG[*entry]
	// rev is the revision the index is current at; revAdvanced is closed
	// (and replaced) whenever it moves.
	rev         int64
	revAdvanced chan struct{}
	// startRev is the revision the index was first built at; events are
	// known only after it.
	startRev int64
	// lastChange is the revision of the newest event applied (or startRev):
	// the index is the exact state at every revision from it to rev.
	lastChange int64
	events     []windowEvent // oldest first
	// trimmedThrough is the revision of the newest event trimmed from the
	// window (0: none since startRev): the window holds every event after
	// it, whichever revision its first one has.
	trimmedThrough int64
	// cooled counts the leading events that keep no objects.
	cooled   int
	watchers map[*Watcher]struct{}
	// bookmarks schedules the bookmarks of the watchers that allowed
	// them; dueBookmarks is where those due are gathered, kept between
	// rounds.
	bookmarks    *bookmarkQueue
	dueBookmarks []*Watcher
	stopped      bool          // Run has returned: new watches end at once
	done         chan struct{} // closed when stopped is set
	// snapshots keep the index as of a revision for paged lists.
	snapshots map[int64]*snapshot
	// dropped are the indexes of snapshots dropped since the last check,
	// whose superseded objects' encodings are to be let go.
	dropped []*btree.BTreeG[*entry]
	// unapplied holds, for each key written through this server (Wrote)
	// whose write the index has not applied yet, the revision of that
	// write: the index's copy of the key is older.
	unapplied map[string]int64
	// ready is closed once the index has been built and is current at
	// readyAt (or later).
	ready   chan struct{}
	readyAt int64
	err     error

	progress func() // asks the storage watch for a progress event
	metrics  metrics
}

type snapshot struct {
	tree    *btree.BTreeG[*entry]
	created time.Time
	// served is when a page was last served from it.
	served time.Time
	// remaining counts the objects from the next page's first key on, for
	// the unfiltered pages served from it whose next page is still to come.
	remaining map[pageKey]int64
}

// pageKey names where a page of a list under prefix starts.
type pageKey struct{ prefix, start string }

// expired says whether the snapshot is to be dropped at now: it is older
// than the window, or no page was served from it for opts.SnapshotIdle.
func (s *snapshot) expired(now time.Time, opts Options) bool {
	return now.Sub(s.created) > opts.Window || now.Sub(s.served) > opts.SnapshotIdle
}

// New returns a cache of the keys under prefix; Run fills it.
func New(store storage.Store, prefix string, decode Decoder, opts Options) *Cache {
	if opts.Window <= 0 {
		opts.Window = 5 * time.Minute
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = 100000
	}
	if opts.DecodedEvents <= 0 {
		opts.DecodedEvents = 1000
	}
	if opts.LetGo == nil {
		opts.LetGo = memory.LetGo
	}
	if opts.SnapshotIdle <= 0 {
		opts.SnapshotIdle = 10 * time.Second
	}
	if opts.BookmarkInterval <= 0 {
		opts.BookmarkInterval = time.Minute
	}
	if opts.KeepEncodings <= 0 {
		opts.KeepEncodings = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Cache{
		store: store, prefix: []byte(prefix), decode: decode, opts: opts,
		tree:        btree.NewG[*entry](32, lessEntry),
		revAdvanced: make(chan struct{}),
		watchers:    map[*Watcher]struct{}{},
		bookmarks:   newBookmarkQueue(opts.Clock.Now()),
		snapshots:   map[int64]*snapshot{},
		ready:       make(chan struct{}),
		done:        make(chan struct{}),
		progress:    func() {},
		metrics:     newMetrics(opts.Resource),
	}
}

// Run builds the index and keeps it current until ctx ends. When the
// storage watch fails (a watcher that fell behind, say), it rebuilds the
// index from a fresh list and ends every watch, whose clients resume or
// relist as they would against kube-apiserver.
func (c *Cache) Run(ctx context.Context) {
	defer c.endWatches()
	for ctx.Err() == nil {
		err := c.sync(ctx)
		if ctx.Err() != nil {
			return
		}
		c.opts.Logger.Warn("watch cache restarting", "prefix", string(c.prefix), "err", err)
		select {
		case <-c.opts.Clock.After(100 * time.Millisecond):
		case <-ctx.Done():
			return
		}
	}
}

// sync lists the prefix, then applies the storage watch from there.
func (c *Cache) sync(ctx context.Context) error {
	start := time.Now()
	from, readyAt, err := c.startingPoint(ctx)
	if err != nil {
		return err
	}
	res, err := c.store.Range(ctx, storage.RangeOptions{Prefix: c.prefix, Revision: from})
	if from != 0 && errors.Is(err, storage.ErrCompacted) {
		// Compacted meanwhile: start at the current revision instead.
		res, err = c.store.Range(ctx, storage.RangeOptions{Prefix: c.prefix})
	}
	if err != nil {
		return err
	}
	tree := btree.NewG[*entry](32, lessEntry)
	for i := range res.KVs {
		key := string(res.KVs[i].Key)
		obj, err := c.decode(&res.KVs[i])
		if err != nil {
			c.opts.Logger.Error("watch cache cannot decode a stored object", "key", key, "err", err)
			tree.ReplaceOrInsert(&entry{key: key, corrupt: err})
			continue
		}
		tree.ReplaceOrInsert(c.newEntry(key, obj, StoredSum(res.KVs[i].Value)))
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := c.store.Watch(wctx, c.prefix, res.Revision)
	if err != nil {
		return err
	}
	// The bookmark timer is set only while a bookmark is to come, for the
	// first one (see armBookmarks). It is made stopped before the index is
	// installed, so that whoever sees the cache ready (a test stepping a
	// fake clock, say) sees the timers it runs.
	bookmarks := c.opts.Clock.NewTimer(c.opts.BookmarkInterval)
	bookmarks.Stop()
	defer bookmarks.Stop()
	sweeps := c.opts.Clock.NewTimer(c.opts.KeepEncodings)
	defer sweeps.Stop()
	snapshotChecks := c.opts.Clock.NewTimer(c.opts.SnapshotIdle)
	defer snapshotChecks.Stop()
	c.reset(tree, res.Revision, w.RequestProgress, readyAt)
	c.metrics.initialized(start, len(res.KVs))
	if res.Revision < readyAt {
		w.RequestProgress() // to learn when the replay is done, if no event says so
	}

	// bookmarkDue says that bookmarks are due: they go with the next
	// progress event, so that they carry the current revision.
	bookmarkDue := false
	dueBookmarks := func() {
		bookmarkDue = true
		w.RequestProgress()
	}
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				if w.Err() == nil {
					return errors.New("storage watch closed")
				}
				return w.Err()
			}
			if ev.Type == storage.EventProgress {
				c.advance(ev.KV.ModRevision, bookmarkDue)
				if bookmarkDue {
					bookmarkDue = false
					if c.armBookmarks(bookmarks) {
						dueBookmarks()
					}
				}
				continue
			}
			if err := c.apply(ev); err != nil {
				return err
			}
		case <-sweeps.C():
			sweeps.Reset(c.opts.KeepEncodings)
			c.dropUnreadEncodings()
		case <-snapshotChecks.C():
			// Re-armed after the check: whoever steps a fake clock and
			// sees the timer armed again sees the check done.
			c.expire()
			snapshotChecks.Reset(c.opts.SnapshotIdle)
		case <-bookmarks.C():
			dueBookmarks()
		case <-c.bookmarks.wake:
			// A watcher is due before the timer: set it again.
			if !bookmarkDue && c.armBookmarks(bookmarks) {
				dueBookmarks()
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// dropUnreadEncodings drops the current objects' encodings no reader took
// since the last sweep. It walks a clone of the index, so that writes go
// on meanwhile.
func (c *Cache) dropUnreadEncodings() {
	c.mu.Lock()
	tree := c.tree.Clone()
	c.mu.Unlock()
	dropped := 0
	tree.Ascend(func(e *entry) bool {
		if e.enc != nil {
			dropped += e.enc.dropUnread()
		}
		return true
	})
	if dropped > 0 {
		c.opts.Logger.Debug("watch cache dropped encodings no reader took", "resource", c.opts.Resource.String(), "bytes", dropped)
		c.opts.LetGo(dropped)
	}
}

// startingPoint is the revision to build the index at (0: the current
// one) and the revision the cache is ready at. Only a first start with
// ReplayHistory builds it at storage's oldest revision, to replay the
// history since; a restart after a failed watch starts current, as
// readers are already served.
func (c *Cache) startingPoint(ctx context.Context) (from, readyAt int64, err error) {
	if !c.opts.ReplayHistory || c.Ready() {
		return 0, 0, nil
	}
	current, err := c.store.CurrentRevision(ctx)
	if err != nil {
		return 0, 0, err
	}
	from = max(c.store.CompactedRevision(), 1)
	if from >= current {
		return 0, 0, nil
	}
	return from, current, nil
}

// prepare readies a decoded object for sharing and returns its encodings.
func (c *Cache) prepare(obj runtime.Object) *Encodings {
	enc := &Encodings{}
	if c.opts.Prepare != nil {
		c.opts.Prepare(obj, enc)
	}
	return enc
}

// newEntry is the entry of obj, whose encodings are its own: one
// allocation, not two, of what lives as long as the object.
func (c *Cache) newEntry(key string, obj runtime.Object, sum uint64) *entry {
	e := &entry{key: key, obj: obj, sum: sum}
	e.enc = &e.own
	if c.opts.Prepare != nil {
		c.opts.Prepare(obj, e.enc)
	}
	return e
}

// endWatches ends every watch for good once the cache stops (its
// resource is no longer served, or is served by a new cache, as when a
// CRD changes): clients see the watch end, as kube-apiserver ends the
// watches of a custom resource whose definition changed, and watch again.
func (c *Cache) endWatches() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		close(c.done)
	}
	c.stopped = true
	for w := range c.watchers {
		w.stop(nil)
	}
	c.watchers = map[*Watcher]struct{}{}
}

// reset installs a freshly listed index and ends every watch made on the
// previous one. The cache is ready once the index is current at readyAt.
func (c *Cache) reset(tree *btree.BTreeG[*entry], rev int64, progress func(), readyAt int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for w := range c.watchers {
		w.stop(nil)
	}
	c.watchers = map[*Watcher]struct{}{}
	c.bookmarks.clear()
	c.tree = tree
	c.startRev = rev
	c.lastChange = rev
	c.events, c.cooled, c.trimmedThrough = nil, 0, 0
	c.snapshots = map[int64]*snapshot{}
	for key, wrote := range c.unapplied {
		if wrote <= rev {
			delete(c.unapplied, key)
		}
	}
	c.progress = progress
	c.readyAt = readyAt
	c.setRev(rev)
	c.markReady()
}

// markReady closes ready once the index is current at readyAt; c.mu is
// held.
func (c *Cache) markReady() {
	if c.rev < c.readyAt {
		return
	}
	select {
	case <-c.ready:
	default:
		close(c.ready)
	}
}

// setRev moves the index's revision; c.mu is held.
func (c *Cache) setRev(rev int64) {
	if rev <= c.rev {
		return
	}
	c.rev = rev
	close(c.revAdvanced)
	c.revAdvanced = make(chan struct{})
	c.markReady()
}

// advance records that the index is current at rev, and sends the
// bookmarks due if they are.
func (c *Cache) advance(rev int64, bookmarks bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setRev(rev)
	if bookmarks {
		c.sendBookmarks(c.rev)
	}
}

// apply changes the index by one storage event and fans it out.
func (c *Cache) apply(ev storage.Event) error {
	obj, err := c.decode(&ev.KV)
	key := string(ev.KV.Key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if wrote, ok := c.unapplied[key]; ok && wrote <= ev.KV.ModRevision {
		delete(c.unapplied, key)
	}
	old, _ := c.tree.Get(&entry{key: key})
	if old != nil {
		// The entry's key, not this event's copy: every event of the
		// window and the entry then share one string per object.
		key = old.key
	}
	if err != nil {
		obj = c.applyCorrupt(ev, old, err)
		if obj == nil {
			return nil
		}
	}
	e := &Event{Rev: ev.KV.ModRevision, Key: key, Obj: obj}
	var current *entry
	if ev.Type == storage.EventDelete {
		e.ObjEncodings = c.prepare(obj)
	} else {
		current = c.newEntry(key, obj, StoredSum(ev.KV.Value))
		e.ObjEncodings = current.enc
	}
	if old != nil {
		e.Prev = old.obj
		// The replaced or deleted object's encodings go with it (once no
		// event of the window holds it): after a namespace's objects are
		// deleted, most of what the lists before made of them.
		c.opts.LetGo(old.enc.size())
	}
	switch {
	case ev.Type == storage.EventDelete:
		e.Type = watch.Deleted
		c.tree.Delete(&entry{key: key})
	case e.Prev == nil:
		e.Type = watch.Added
		c.tree.ReplaceOrInsert(current)
	default:
		e.Type = watch.Modified
		c.tree.ReplaceOrInsert(current)
	}
	now := c.opts.Clock.Now()
	c.events = append(c.events, windowEvent{typ: e.Type, rev: e.Rev, key: key, at: now, decoded: e})
	c.lastChange = e.Rev
	c.trim(now)
	c.cool()
	c.setRev(e.Rev)
	c.metrics.receivedEvent()
	if len(c.watchers) > 0 {
		c.metrics.dispatched.Inc()
	}
	for w := range c.watchers {
		w.offer(e)
	}
	return nil
}

// applyCorrupt applies a storage event whose value cannot be decoded; c.mu
// is held. A corrupt version replaces the entry without an event (there is
// nothing to send); the deletion of a corrupt object removes it, and
// returns the last decodable state, at the deletion's revision, when
// watchers may have seen it: they get it as a DELETED event.
func (c *Cache) applyCorrupt(ev storage.Event, old *entry, err error) runtime.Object {
	var last runtime.Object
	if old != nil {
		last = old.obj
	}
	if ev.Type == storage.EventDelete {
		c.tree.Delete(&entry{key: string(ev.KV.Key)})
	} else {
		c.opts.Logger.Error("watch cache cannot decode a stored object", "key", string(ev.KV.Key), "err", err)
		c.tree.ReplaceOrInsert(&entry{key: string(ev.KV.Key), obj: last, corrupt: err})
		last = nil
	}
	if last != nil {
		return withRevision(last, ev.KV.ModRevision)
	}
	c.lastChange = ev.KV.ModRevision
	c.setRev(ev.KV.ModRevision)
	return nil
}

// trim drops the events older than the window and the expired snapshots;
// c.mu is held.
func (c *Cache) trim(now time.Time) {
	drop := 0
	for drop < len(c.events) && (len(c.events)-drop > c.opts.MaxEvents || now.Sub(c.events[drop].at) > c.opts.Window) {
		drop++
	}
	if drop > 0 {
		c.trimmedThrough = c.events[drop-1].rev
	}
	switch {
	case drop == len(c.events) && drop > 0:
		c.events = nil // the array goes, and the dropped events with it
	case drop > 0:
		// Cleared and sliced past rather than copied: a window that ages
		// out as fast as events come would copy itself for every event.
		// The next append that outgrows the array copies only the rest.
		clear(c.events[:drop])
		c.events = c.events[drop:]
	}
	c.cooled = max(c.cooled-drop, 0)
	c.dropSnapshotsExpiredAt(now)
}

// expire trims the window and the snapshots of a cache that no event
// trims: once a resource is quiet (its objects deleted, say), the events
// that held its last states go when the window passes them, not at the
// next change, which may never come.
func (c *Cache) expire() {
	c.mu.Lock()
	c.trim(c.opts.Clock.Now())
	dropped := c.dropped
	c.dropped = nil
	var current *btree.BTreeG[*entry]
	if len(dropped) > 0 {
		// Cloned only then: a clone makes the next writes copy the
		// nodes they change.
		current = c.tree.Clone()
	}
	c.mu.Unlock()
	c.letGoSuperseded(dropped, current)
}

// dropSnapshotsExpiredAt drops the snapshots expired at now; c.mu is held.
func (c *Cache) dropSnapshotsExpiredAt(now time.Time) {
	for rev, s := range c.snapshots {
		if s.expired(now, c.opts) {
			delete(c.snapshots, rev)
			c.dropped = append(c.dropped, s.tree)
		}
	}
}

// letGoSuperseded tells LetGo of the encodings of the objects the dropped
// snapshots held and the index no longer does: a paged list through a
// namespace's objects, then their deletion, leaves a snapshot holding all
// of them for 10-20 s, and a release before it goes frees none of them.
func (c *Cache) letGoSuperseded(dropped []*btree.BTreeG[*entry], current *btree.BTreeG[*entry]) {
	n := 0
	for _, tree := range dropped {
		tree.Ascend(func(e *entry) bool {
			if now, ok := current.Get(e); !ok || now.obj != e.obj {
				n += e.enc.size()
			}
			return true
		})
	}
	if n > 0 {
		c.opts.LetGo(n)
	}
}

// cool lets go of the decoded events older than the newest
// DecodedEvents; c.mu is held. Watchers already offered one keep it.
func (c *Cache) cool() {
	for ; c.cooled < len(c.events)-c.opts.DecodedEvents; c.cooled++ {
		c.events[c.cooled].decoded = nil
	}
}

// oldestWatchable is the oldest revision a watch can resume after; c.mu is
// held.
func (c *Cache) oldestWatchable() int64 {
	if len(c.events) == 0 {
		// Every event so far has left the window, or none came.
		return c.lastChange
	}
	// Not the first event's revision: revisions between the last one
	// trimmed and it changed other resources, and a watch from one of
	// them misses nothing.
	return max(c.trimmedThrough, c.startRev)
}

// Revision is the revision the index is current at.
func (c *Cache) Revision() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rev
}

// WaitReady blocks until the index has been built once, or the cache
// stops before it is (an ErrUnready), or ctx ends: what the server's
// start waits for.
func (c *Cache) WaitReady(ctx context.Context) error {
	if c.Ready() {
		// Whatever ctx says: a watch whose deadline passed while it waited
		// for a revision still starts, and ends at once, as kube-apiserver's.
		return nil
	}
	return c.waitReady(ctx, nil)
}

// readyWait is how long a request waits for an index still being built
// (a new custom resource's, built in milliseconds) before it is told to
// come back.
const readyWait = 3 * time.Second

// WaitServing is WaitReady for a request: kube-apiserver answers a
// request to a cache not yet built with 429 at once (KEP-4568), so that
// it holds no seat of priority and fairness; kapi's caches of a new
// resource are built within milliseconds, so a request waits for up to
// readyWait first. A cache that stops unbuilt (its resource changed
// again, or went) ends the wait too: its requests come back to its
// successor.
func (c *Cache) WaitServing(ctx context.Context) error {
	if c.Ready() {
		return nil
	}
	timer := c.opts.Clock.NewTimer(readyWait)
	defer timer.Stop()
	return c.waitReady(ctx, timer.C())
}

func (c *Cache) waitReady(ctx context.Context, deadline <-chan time.Time) error {
	select {
	case <-c.ready:
		return nil
	case <-c.done:
		if c.Ready() {
			return nil
		}
		return &ErrUnready{Stopped: true}
	case <-deadline:
		return &ErrUnready{}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrUnready means a request found the cache not yet built, or stopped
// before it was: kube-apiserver's answer is 429 with Retry-After, which
// clients retry.
type ErrUnready struct{ Stopped bool }

func (e *ErrUnready) Error() string {
	if e.Stopped {
		return "apiserver cacher is stopped"
	}
	return "storage is (re)initializing"
}

// Ready reports whether the index has been built once.
func (c *Cache) Ready() bool {
	select {
	case <-c.ready:
		return true
	default:
		return false
	}
}

// ErrTooLarge means the index did not reach a revision in time.
type ErrTooLarge struct{ Requested, Current int64 }

func (e *ErrTooLarge) Error() string {
	return fmt.Sprintf("Too large resource version: %d, current: %d", e.Requested, e.Current)
}

// waitFor blocks until the index is current at rev or later, asking the
// storage watch for progress so that a quiet resource catches up too.
func (c *Cache) waitFor(ctx context.Context, rev int64, timeout time.Duration) error {
	if err := c.WaitServing(ctx); err != nil {
		return err
	}
	deadline := c.opts.Clock.NewTimer(timeout)
	defer deadline.Stop()
	return c.waitUntil(ctx, rev, deadline.C(), nil)
}

// errStopped is what waitUntil returns once the cache stops, when asked to.
var errStopped = errors.New("the watch cache stopped")

// waitUntil is waitFor once the index is ready, until deadline, or until
// the cache stops if stop is c.done (a nil stop never fires).
func (c *Cache) waitUntil(ctx context.Context, rev int64, deadline <-chan time.Time, stop <-chan struct{}) error {
	asked := false
	for {
		c.mu.RLock()
		current, advanced, progress := c.rev, c.revAdvanced, c.progress
		c.mu.RUnlock()
		if current >= rev {
			return nil
		}
		if !asked {
			progress()
			asked = true
		}
		select {
		case <-advanced:
			asked = false // a new revision: ask again if still short
		case <-deadline:
			return &ErrTooLarge{Requested: rev, Current: current}
		case <-stop:
			return errStopped
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitFresh waits until the index reflects every write committed before
// the call: what a consistent read needs.
func (c *Cache) WaitFresh(ctx context.Context) error {
	rev, err := c.store.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	return c.waitFor(ctx, rev, 3*time.Second)
}

// WaitNotOlderThan waits until the index is current at rev, for up to the
// three seconds kube-apiserver waits before answering "Too large resource
// version".
func (c *Cache) WaitNotOlderThan(ctx context.Context, rev int64) error {
	return c.waitFor(ctx, rev, 3*time.Second)
}

// Get returns the object under key as the index holds it, or nil.
func (c *Cache) Get(key string) runtime.Object {
	obj, _ := c.GetEncoded(key)
	return obj
}

// GetEncoded returns the object under key as Get does, and its
// encodings, which every reader of the object shares.
func (c *Cache) GetEncoded(key string) (runtime.Object, *Encodings) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if e, ok := c.tree.Get(&entry{key: key}); ok && e.corrupt == nil {
		return e.obj, e.enc
	}
	return nil, nil
}

// GetForWrite returns the object under key as Get does, and the
// StoredSum of the stored bytes it was decoded from, for a write to start
// from: nil when the index knows that it has not applied a later write of
// key (see Wrote).
func (c *Cache) GetForWrite(key string) (runtime.Object, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if _, old := c.unapplied[key]; old {
		return nil, 0
	}
	if e, ok := c.tree.Get(&entry{key: key}); ok && e.corrupt == nil {
		return e.obj, e.sum
	}
	return nil, 0
}

// maxUnapplied bounds the writes Wrote remembers: a cache further behind
// forgets them, and its writers' guards catch the copies that are old.
const maxUnapplied = 4096

// Wrote tells the index that key was written at rev, so that GetForWrite
// does not offer its older copy until it has applied that write: a client
// writing the same object twice in a row would otherwise have its second
// write start from the first one's predecessor, conflict and start again.
func (c *Cache) Wrote(key string, rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev <= c.rev {
		return // applied already
	}
	if c.unapplied == nil || len(c.unapplied) >= maxUnapplied {
		c.unapplied = map[string]int64{}
	}
	c.unapplied[key] = max(c.unapplied[key], rev)
}

var storedSeed = maphash.MakeSeed()

// StoredSum is the checksum the index keeps of an object's stored bytes.
// Equal bytes have equal sums within a process; equal sums do not prove
// equal bytes.
func StoredSum(stored []byte) uint64 { return maphash.Bytes(storedSeed, stored) }

// freshGetWait bounds how long GetFresh waits for the index to catch up:
// one that lags further is left to storage.
var freshGetWait = 100 * time.Millisecond

// GetFresh returns the object under key as of every write committed
// before the call, with its encodings, as GetEncoded does once WaitFresh
// returns; nil when the index cannot answer that soon or at all
// (FreshGets is off, it is not running, it lags behind, the object is not
// there or its stored version cannot be decoded), for the caller to read
// storage, which also says why.
func (c *Cache) GetFresh(ctx context.Context, key string) (runtime.Object, *Encodings) {
	if !c.opts.FreshGets || !c.Ready() {
		return nil, nil
	}
	rev, err := c.store.CurrentRevision(ctx)
	if err != nil {
		return nil, nil
	}
	// Real time, whatever the cache's clock: the wait is only worth it
	// while it is shorter than a storage read, and a test's fake clock
	// must not hold a read up. A stopped cache (its server stopping, its
	// resource replaced) answers no progress request: no wait for it.
	if c.Revision() < rev { // most GETs find the index current: no timer
		deadline := time.NewTimer(freshGetWait)
		defer deadline.Stop()
		if c.waitUntil(ctx, rev, deadline.C, c.done) != nil {
			return nil, nil
		}
	}
	return c.GetEncoded(key)
}

// Len is the number of objects the cache holds.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.tree == nil {
		return 0
	}
	return c.tree.Len()
}
