package cacheinformers

import (
	"sync"
	"sync/atomic"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/cache/synctrack"
)

// keepQueue is the largest queue a handler keeps once it has caught up,
// so that its memory follows its lag, not the largest it ever had.
const keepQueue = 256

type notificationKind uint8

const (
	added notificationKind = iota
	updated
	deleted
)

type notification struct {
	kind     notificationKind
	old, new any
	// initial marks an add of the initial list (or of a late handler's
	// synthetic list).
	initial bool
}

// handler is one registration's queue of notifications, taken in order
// by a goroutine that runs only while there are some: it starts when a
// notification comes to an empty queue and ends when it has emptied it.
type handler struct {
	h       toolscache.ResourceEventHandler
	tracker *synctrack.SingleFileTracker

	// The handler's resync (resync.go), under the informer's lock:
	// the period asked for and the one given, when it is next due, and
	// whether it is resyncing.
	requested, resync time.Duration
	nextResync        time.Time
	syncing           bool

	// delivering is the informer's count of handlers' goroutines.
	delivering *sync.WaitGroup

	mu       sync.Mutex
	queue    []notification
	spare    []notification // the queue last taken, to reuse
	running  bool           // a goroutine is taking the queue
	removed  atomic.Bool
	finished chan struct{} // closed once removed and no longer delivering
}

func newHandler(h toolscache.ResourceEventHandler, requested, resync time.Duration, upstream toolscache.DoneChecker, delivering *sync.WaitGroup) *handler {
	return &handler{
		h:          h,
		tracker:    synctrack.NewSingleFileTracker(upstream.Name() + " + event handler"),
		requested:  requested,
		resync:     resync,
		nextResync: time.Now().Add(resync),
		syncing:    true,
		delivering: delivering,
		finished:   make(chan struct{}),
	}
}

// notify queues n without blocking, starting the queue's taker if it is
// not running.
func (h *handler) notify(n notification) {
	if n.initial {
		h.tracker.Start()
	}
	h.mu.Lock()
	if h.removed.Load() {
		h.mu.Unlock()
		return
	}
	h.queue = append(h.queue, n)
	start := !h.running
	if start {
		h.running = true
		h.delivering.Add(1)
	}
	h.mu.Unlock()
	if start {
		go h.deliver()
	}
}

// deliver hands the queued notifications to the handler until none is
// left or the handler is removed.
func (h *handler) deliver() {
	defer h.delivering.Done()
	for {
		batch := h.take()
		if batch == nil {
			return
		}
		for i := range batch {
			if h.removed.Load() {
				break
			}
			h.call(batch[i])
		}
		clear(batch)
		h.mu.Lock()
		if cap(batch) <= keepQueue {
			h.spare = batch[:0]
		}
		h.mu.Unlock()
	}
}

// take empties the queue into the batch returned, or, when it is empty
// or the handler removed, stops the taker and returns nil.
func (h *handler) take() []notification {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.queue) == 0 || h.removed.Load() {
		h.running = false
		if cap(h.queue) > keepQueue {
			h.queue = nil
		}
		if h.removed.Load() {
			h.queue = nil
			h.finish()
		}
		return nil
	}
	batch := h.queue
	h.queue, h.spare = h.spare, nil
	return batch
}

// call hands n to the handler. A handler's panic is client-go's: it
// crashes the process unless the process says otherwise.
func (h *handler) call(n notification) {
	defer utilruntime.HandleCrash()
	switch n.kind {
	case added:
		h.h.OnAdd(n.new, n.initial)
		if n.initial {
			h.tracker.Finished()
		}
	case updated:
		h.h.OnUpdate(n.old, n.new)
	case deleted:
		h.h.OnDelete(n.old)
	}
}

// remove ends deliveries: what is queued is dropped.
func (h *handler) remove() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.removed.Swap(true) {
		return
	}
	if !h.running {
		h.queue = nil
		h.finish()
	}
}

// finish closes finished; h.mu is held and the handler removed.
func (h *handler) finish() {
	select {
	case <-h.finished:
	default:
		close(h.finished)
	}
}

func (h *handler) HasSynced() bool { return h.tracker.HasSynced() }

func (h *handler) HasSyncedChecker() toolscache.DoneChecker { return h.tracker }

// ShutdownChan is closed once the handler is removed and no longer
// called: client-go's ShutDownEventHandler waits for it.
func (h *handler) ShutdownChan() <-chan struct{} { return h.finished }
