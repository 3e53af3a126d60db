package pebble

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kapi-dev/kapi/internal/storage"
)

// liveQueue bounds how many committed groups may wait in a watcher's queue
// before it is ended with ErrWatcherTooSlow; the writer never waits for a
// watcher. A watcher lags at most twice that: the groups it took off the
// queue and is sending, and a full queue behind them.
const liveQueue = 4096

// hub hands committed events to watchers. The writer publishes under mu and
// a new watcher registers under mu, so every event is either in the history
// the watcher replays from disk or in its live queue, never both or neither.
type hub struct {
	mu       sync.Mutex
	watchers map[*watcher]struct{}
	closed   bool
}

func (h *hub) init() { h.watchers = map[*watcher]struct{}{} }

// publish makes rev the current revision and queues events for the
// watchers they concern; the others are not woken (there is a watcher per
// watch cache, and most writes concern one of them). Watchers that cannot
// take them are ended.
func (h *hub) publish(current *atomic.Int64, rev int64, events []storage.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	current.Store(rev)
	batch := liveBatch{rev: rev, events: events}
	for w := range h.watchers {
		if !w.concerns(events) {
			continue
		}
		if !w.live.push(batch) {
			w.fail(storage.ErrWatcherTooSlow)
			delete(h.watchers, w)
		}
	}
}

// published reads the current revision under the lock publish holds:
// every group up to it is in the queues of the watchers it concerns.
func (h *hub) published(current *atomic.Int64) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return current.Load()
}

func (h *hub) remove(w *watcher) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.watchers, w)
}

func (h *hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for w := range h.watchers {
		w.fail(nil)
		delete(h.watchers, w)
	}
}

// liveBatch is one committed group as watchers receive it.
type liveBatch struct {
	rev    int64 // the group's last revision
	events []storage.Event
}

// liveBatches queues the committed groups a watcher has yet to send, at
// most liveQueue of them. It grows as they come: a channel of that
// capacity reserved room for the longest lag in every watcher, one per
// watch cache, whether it ever lagged or not.
type liveBatches struct {
	mu      sync.Mutex
	batches []liveBatch
	ready   chan struct{} // holds a signal while batches is not empty
}

func newLiveBatches() *liveBatches { return &liveBatches{ready: make(chan struct{}, 1)} }

// push queues b; false when the queue is full.
func (q *liveBatches) push(b liveBatch) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.batches) >= liveQueue {
		return false
	}
	q.batches = append(q.batches, b)
	select {
	case q.ready <- struct{}{}:
	default: // signalled already
	}
	return true
}

// take returns what is queued, in order, and empties the queue.
func (q *liveBatches) take() []liveBatch {
	q.mu.Lock()
	defer q.mu.Unlock()
	batches := q.batches
	q.batches = nil
	return batches
}

type watcher struct {
	prefix   []byte
	after    int64 // only events of later revisions are sent
	out      chan storage.Event
	live     *liveBatches
	ended    chan struct{}
	progress chan struct{} // progress requests, coalesced

	endOnce sync.Once
	err     error
}

func (w *watcher) Events() <-chan storage.Event { return w.out }

// RequestProgress implements storage.Watcher.
func (w *watcher) RequestProgress() {
	select {
	case w.progress <- struct{}{}:
	default: // one is pending already and will cover this one
	}
}

// Err is valid once Events is closed.
func (w *watcher) Err() error { return w.err }

// fail ends the watcher with err; the first reason wins.
func (w *watcher) fail(err error) {
	w.endOnce.Do(func() {
		w.err = err
		close(w.ended)
	})
}

// Watch implements storage.Store.
func (s *Store) Watch(ctx context.Context, prefix []byte, fromRev int64) (storage.Watcher, error) {
	w := &watcher{
		prefix:   append([]byte(nil), prefix...),
		after:    fromRev,
		out:      make(chan storage.Event, 128),
		live:     newLiveBatches(),
		ended:    make(chan struct{}),
		progress: make(chan struct{}, 1),
	}
	s.hub.mu.Lock()
	if s.hub.closed {
		s.hub.mu.Unlock()
		return nil, storage.ErrClosed
	}
	current := s.revision.Load()
	if fromRev+1 < s.compacted.Load() {
		s.hub.mu.Unlock()
		return nil, storage.ErrCompacted
	}
	var snap *pebble.Snapshot
	if fromRev < current {
		snap = s.db.NewSnapshot()
	}
	s.hub.watchers[w] = struct{}{}
	s.watching.Add(1) // under hub.mu, so that Close waits for it
	s.hub.mu.Unlock()

	go func() {
		defer s.watching.Done()
		s.runWatcher(ctx, w, snap, fromRev, current)
	}()
	return w, nil
}

// runWatcher replays history (fromRev, upTo] from the snapshot, then
// forwards live events until the watch ends.
func (s *Store) runWatcher(ctx context.Context, w *watcher, snap *pebble.Snapshot, fromRev, upTo int64) {
	defer close(w.out)
	defer s.hub.remove(w)
	if snap != nil {
		err := s.replay(ctx, w, snap, fromRev, upTo)
		snap.Close()
		if err != nil {
			w.fail(err)
			return
		}
	}
	// processed is the revision up to which every event has been sent.
	processed := max(fromRev, upTo)
	for {
		select {
		case <-w.live.ready:
			if !w.sendQueued(ctx, &processed) {
				return
			}
		case <-w.progress:
			// Groups of other prefixes never reach the queue: once what
			// is queued is sent, the watcher has sent everything up to
			// the revision published when the request came.
			target := s.hub.published(&s.revision)
			if !w.sendQueued(ctx, &processed) {
				return
			}
			processed = max(processed, target)
			if !w.deliver(ctx, storage.Event{Type: storage.EventProgress, KV: storage.KeyValue{ModRevision: processed}}) {
				return
			}
		case <-w.ended:
			return
		case <-ctx.Done():
			w.fail(nil)
			return
		}
	}
}

// sendQueued sends the queued groups in order, advancing processed; false
// when the watch ended.
func (w *watcher) sendQueued(ctx context.Context, processed *int64) bool {
	for _, batch := range w.live.take() {
		for _, ev := range batch.events {
			if !w.send(ctx, ev) {
				return false
			}
		}
		*processed = batch.rev
	}
	return true
}

// concerns reports whether any of events is under the watcher's prefix.
func (w *watcher) concerns(events []storage.Event) bool {
	for _, ev := range events {
		if bytes.HasPrefix(ev.KV.Key, w.prefix) {
			return true
		}
	}
	return false
}

// send delivers ev if it concerns the watcher; false when the watch ended.
func (w *watcher) send(ctx context.Context, ev storage.Event) bool {
	if ev.KV.ModRevision <= w.after || !bytes.HasPrefix(ev.KV.Key, w.prefix) {
		return true
	}
	return w.deliver(ctx, ev)
}

// deliver hands ev to the consumer; false when the watch ended.
func (w *watcher) deliver(ctx context.Context, ev storage.Event) bool {
	select {
	case w.out <- ev:
		return true
	case <-w.ended:
		return false
	case <-ctx.Done():
		w.fail(nil)
		return false
	}
}

// replay sends the events of revisions (fromRev, upTo] read from the log.
func (s *Store) replay(ctx context.Context, w *watcher, snap *pebble.Snapshot, fromRev, upTo int64) error {
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: logKey(fromRev + 1), UpperBound: logKey(upTo + 1)})
	if err != nil {
		return err
	}
	defer it.Close()
	for valid := it.First(); valid; valid = it.Next() {
		select {
		case <-w.ended: // Close waits for this: stop reading
			return w.err
		default:
		}
		if !bytes.HasPrefix(it.Value(), w.prefix) {
			continue
		}
		rev, err := decodeRevision(it.Key()[1:])
		if err != nil {
			return err
		}
		ev, err := eventAt(snap, append([]byte(nil), it.Value()...), rev)
		if err != nil {
			return err
		}
		if !w.send(ctx, ev) {
			return w.err
		}
	}
	return it.Error()
}

// eventAt rebuilds the event that revision rev wrote to key.
func eventAt(r pebble.Reader, key []byte, rev int64) (storage.Event, error) {
	v, closer, err := r.Get(versionKey(key, rev))
	if err != nil {
		return storage.Event{}, err
	}
	rec, err := decodeRecord(v)
	if err != nil {
		closer.Close()
		return storage.Event{}, err
	}
	kv := storage.KeyValue{Key: key, Value: append([]byte(nil), rec.value...), CreateRevision: rec.createRevision, ModRevision: rev}
	closer.Close()
	if !rec.tombstone {
		return storage.Event{Type: storage.EventPut, KV: kv}, nil
	}
	prev, err := versionAt(r, key, rev-1)
	if err != nil {
		return storage.Event{}, err
	}
	if prev != nil {
		kv.Value = prev.Value
	}
	return storage.Event{Type: storage.EventDelete, KV: kv}, nil
}
