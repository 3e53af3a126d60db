package cacheinformers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/internal/cache"
)

// retryAfter is how long an informer waits before it tries again to
// follow a cache it could not (no cache holds its type for a moment).
const retryAfter = time.Second

// informer is a SharedIndexInformer that follows a watch cache in
// process, with the behaviour client-go's shared informer gives its
// handlers (the indexer, notifications in order per handler, the initial
// list marked as such, a late handler's synthetic adds, resyncs, a relist's
// DeletedFinalStateUnknown) but without its machinery: client-go's runs
// five goroutines per informer and two per handler, idle most of the
// time (reflector, resync timer, FIFO, processor; a handler's buffer and
// its caller), where this one has Run's goroutine, which takes the
// cache's events and applies them, and a goroutine per handler only while
// that handler has notifications to take. Holding the server's hundred
// informers and two hundred handlers, that is some 900 goroutines and
// their stacks fewer, and an event reaches a handler in one handoff
// instead of four.
type informer struct {
	lw        *listWatch
	objType   runtime.Object
	indexer   toolscache.Indexer
	resync    time.Duration // the handlers' default
	mutations toolscache.MutationDetector
	synced    chan struct{} // closed once the first list is in the indexer
	// delivering counts the handlers' goroutines: Run returns once they
	// are done, as client-go's waits for its handlers.
	delivering sync.WaitGroup

	// mu orders every change of the indexer with the notifications it
	// makes, so that a handler that joins while events flow gets the
	// indexer's items as of one moment and every event after it.
	mu       sync.Mutex
	handlers []*handler
	// resyncCheck is how often the handlers' resyncs are looked at
	// (resync.go); fixed once the informer runs.
	resyncCheck       time.Duration
	started, stopped  bool
	transform         toolscache.TransformFunc
	watchErrorHandler toolscache.WatchErrorHandlerWithContext
	lastRV            string
}

func newInformer(lw *listWatch, objType runtime.Object, resync time.Duration, indexers toolscache.Indexers) *informer {
	return &informer{
		lw: lw, objType: objType, resync: resync, resyncCheck: resync,
		indexer:   toolscache.NewIndexer(toolscache.DeletionHandlingMetaNamespaceKeyFunc, indexers),
		mutations: toolscache.NewCacheMutationDetector(fmt.Sprintf("%T", objType)),
		synced:    make(chan struct{}),
	}
}

var _ toolscache.SharedIndexInformer = (*informer)(nil)

func (inf *informer) Run(stopCh <-chan struct{}) {
	inf.RunWithContext(wait.ContextForChannel(stopCh))
}

// RunWithContext follows the cache until ctx ends: the state, then its
// changes, resuming after an interrupted watch from the last revision
// applied, and listing again only when that revision has left the
// cache's window (or the cache was built anew).
func (inf *informer) RunWithContext(ctx context.Context) {
	defer utilruntime.HandleCrashWithContext(ctx)
	if !inf.start() {
		return
	}
	defer inf.stop()
	go inf.mutations.Run(ctx.Done())
	rev := int64(0) // the last revision applied; 0 before the first list
	for ctx.Err() == nil {
		began := time.Now()
		watcher, err := inf.follow(ctx, &rev)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			inf.watchFailed(ctx, err)
			pause(ctx, retryAfter)
			continue
		}
		inf.consume(ctx, watcher, &rev)
		// A watch the cache ends at once for another reason than the
		// informer's lag (a cache that has stopped) is not retried at
		// once, again and again.
		if !errors.Is(watcher.Err(), cache.ErrTooSlow) && time.Since(began) < retryAfter {
			pause(ctx, retryAfter)
		}
	}
}

func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (inf *informer) start() bool {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.started || inf.stopped {
		return false
	}
	inf.started = true
	return true
}

// stop takes no more handlers, ends the handlers' deliveries and waits
// for the calls under way.
func (inf *informer) stop() {
	inf.mu.Lock()
	inf.stopped = true
	for _, h := range inf.handlers {
		h.remove()
	}
	inf.handlers = nil
	inf.mu.Unlock()
	inf.delivering.Wait()
}

func (inf *informer) watchFailed(ctx context.Context, err error) {
	inf.mu.Lock()
	handle := inf.watchErrorHandler
	inf.mu.Unlock()
	if handle != nil {
		// Handlers expect the reflector that failed: one that never runs
		// names it.
		handle(ctx, toolscache.NewNamedReflector(fmt.Sprintf("%T", inf.objType), neverRuns{}, inf.objType, inf.indexer, 0), err)
		return
	}
	utilruntime.HandleErrorWithContext(ctx, err, "Following the watch cache failed", "type", fmt.Sprintf("%T", inf.objType))
}

// follow starts a watch of the cache after *rev, applying the changes the
// cache has after it; or, at the start or when *rev has left the window,
// a watch from the cache's current state, which replaces the indexer's.
func (inf *informer) follow(ctx context.Context, rev *int64) (*cache.Watcher, error) {
	b, err := inf.lw.backend()
	if err != nil {
		return nil, err
	}
	filter, err := inf.lw.filter(b.Storage(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	if *rev > 0 {
		watcher, backlog, err := b.Cache.WatchFrom(ctx, *rev, filter, true)
		var expired *cache.ErrExpired
		switch {
		case err == nil:
			inf.apply(backlog, rev)
			return watcher, nil
		case !errors.As(err, &expired):
			return nil, err
		}
	}
	if err := b.Cache.WaitFresh(ctx); err != nil {
		return nil, err
	}
	watcher, state, _, stateRev, err := b.Cache.WatchWithState(ctx, filter, true)
	if err != nil {
		return nil, err
	}
	inf.replace(state, stateRev)
	*rev = stateRev
	return watcher, nil
}

// consume applies the watcher's events until it ends (the cache ended it,
// or rebuilt itself) or ctx does, and checks the handlers' resyncs every
// resyncCheck.
func (inf *informer) consume(ctx context.Context, watcher *cache.Watcher, rev *int64) {
	defer watcher.Stop()
	var resync <-chan time.Time
	if period := inf.resyncCheckPeriod(); period > 0 {
		ticker := time.NewTicker(period)
		defer ticker.Stop()
		resync = ticker.C
	}
	var batch []cache.Delivery
	for {
		select {
		case <-watcher.Ready():
			batch = watcher.Take(batch)
			inf.apply(batch, rev)
			clear(batch)
			if watcher.Ended() {
				return
			}
		case <-resync:
			inf.resyncDue()
		case <-ctx.Done():
			return
		}
	}
}

// apply puts each delivery's change in the indexer and tells the
// handlers, in order, as client-go's informer handles a watch's deltas.
func (inf *informer) apply(deliveries []cache.Delivery, rev *int64) {
	if len(deliveries) == 0 {
		return
	}
	inf.mu.Lock()
	defer inf.mu.Unlock()
	for _, d := range deliveries {
		if d.Bookmark > 0 {
			// The store's version moves on with the cache's, as with a
			// reflector's bookmarks: the storage version migrator waits
			// for the garbage collector's informers to pass a version.
			*rev = d.Bookmark
			inf.indexer.Bookmark(strconv.FormatInt(*rev, 10))
			continue
		}
		*rev = d.Event.Rev
		obj, _ := d.Object()
		inf.applyOne(d.Type, obj)
	}
	inf.lastRV = strconv.FormatInt(*rev, 10)
}

func (inf *informer) applyOne(typ watch.EventType, obj runtime.Object) {
	item, ok := inf.transformed(obj)
	if !ok {
		return
	}
	if typ == watch.Deleted {
		if err := inf.indexer.Delete(item); err != nil {
			utilruntime.HandleError(err)
		}
		inf.notifyAll(notification{old: item, kind: deleted})
		return
	}
	old, exists, err := inf.indexer.Get(item)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	inf.mutations.AddObject(item)
	if exists {
		if err := inf.indexer.Update(item); err != nil {
			utilruntime.HandleError(err)
		}
		inf.notifyAll(notification{old: old, new: item, kind: updated})
		return
	}
	if err := inf.indexer.Add(item); err != nil {
		utilruntime.HandleError(err)
	}
	inf.notifyAll(notification{new: item, kind: added})
}

// replace makes the indexer hold state, as of rev, then tells the
// handlers, as client-go's informer handles a list: on the first, every
// object is an add in the initial list; on a later one, the objects gone
// first, as deletions whose final state is unknown, then each object in
// the list, new ones as adds, the others as updates (an unchanged one,
// as a resync's, only to the handlers resyncing).
func (inf *informer) replace(state []runtime.Object, rev int64) {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	first := !inf.hasSynced()
	items := make([]any, 0, len(state))
	changes := make([]notification, 0, len(state))
	seen := sets.New[string]()
	for _, obj := range state {
		item, ok := inf.transformed(obj)
		if !ok {
			continue
		}
		key, err := toolscache.MetaNamespaceKeyFunc(item)
		if err != nil {
			utilruntime.HandleError(err)
			continue
		}
		items = append(items, item)
		seen.Insert(key)
		inf.mutations.AddObject(item)
		if old, exists, _ := inf.indexer.GetByKey(key); exists {
			changes = append(changes, notification{old: old, new: item, kind: updated})
		} else {
			changes = append(changes, notification{new: item, kind: added, initial: first})
		}
	}
	var gone []notification
	for _, key := range inf.indexer.ListKeys() {
		if seen.Has(key) {
			continue
		}
		if old, exists, _ := inf.indexer.GetByKey(key); exists {
			gone = append(gone, notification{old: toolscache.DeletedFinalStateUnknown{Key: key, Obj: old}, kind: deleted})
		}
	}
	inf.lastRV = strconv.FormatInt(rev, 10)
	if err := inf.indexer.Replace(items, inf.lastRV); err != nil {
		utilruntime.HandleError(err)
	}
	for _, n := range gone {
		inf.notifyAll(n)
	}
	for _, n := range changes {
		if n.kind == updated && resourceVersion(n.old) == resourceVersion(n.new) {
			inf.notifySyncing(n)
			continue
		}
		inf.notifyAll(n)
	}
	if first {
		close(inf.synced)
		for _, h := range inf.handlers {
			h.tracker.UpstreamHasSynced()
		}
	}
}

func resourceVersion(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}

// transformed is obj as the transform, if any, makes it; inf.mu is held.
func (inf *informer) transformed(obj runtime.Object) (any, bool) {
	if inf.transform == nil {
		return obj, true
	}
	item, err := inf.transform(obj)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("transforming %T for its informer: %w", obj, err))
		return nil, false
	}
	return item, true
}

// notifyAll queues n for every handler; inf.mu is held.
func (inf *informer) notifyAll(n notification) {
	for _, h := range inf.handlers {
		h.notify(n)
	}
}

func (inf *informer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return inf.AddEventHandlerWithOptions(h, toolscache.HandlerOptions{})
}

func (inf *informer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, resync time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return inf.AddEventHandlerWithOptions(h, toolscache.HandlerOptions{ResyncPeriod: &resync})
}

// AddEventHandlerWithOptions registers h. Joining an informer that has
// listed, it gets the objects held as adds in the initial list first.
func (inf *informer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, opts toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.stopped {
		return nil, fmt.Errorf("handler %v was not added to shared informer because it has stopped already", h)
	}
	requested := inf.requestResync(ptr.Deref(opts.ResyncPeriod, inf.resync))
	reg := newHandler(h, requested, effectiveResync(requested, inf.resyncCheck), inf.HasSyncedChecker(), &inf.delivering)
	inf.handlers = append(inf.handlers, reg)
	if inf.hasSynced() {
		for _, item := range inf.indexer.List() {
			reg.notify(notification{new: item, kind: added, initial: true})
		}
		reg.tracker.UpstreamHasSynced()
	}
	return reg, nil
}

// RemoveEventHandler stops deliveries to the handler; what it had not
// taken yet is dropped, as client-go does.
func (inf *informer) RemoveEventHandler(reg toolscache.ResourceEventHandlerRegistration) error {
	h, ok := reg.(*handler)
	if !ok {
		return fmt.Errorf("invalid key type %T", reg)
	}
	inf.mu.Lock()
	defer inf.mu.Unlock()
	for i, held := range inf.handlers {
		if held == h {
			inf.handlers = append(inf.handlers[:i:i], inf.handlers[i+1:]...)
			h.remove()
			break
		}
	}
	return nil
}

func (inf *informer) hasSynced() bool {
	select {
	case <-inf.synced:
		return true
	default:
		return false
	}
}

func (inf *informer) HasSynced() bool { return inf.hasSynced() }

func (inf *informer) HasSyncedChecker() toolscache.DoneChecker {
	return doneChecker{name: fmt.Sprintf("SharedIndexInformer %T", inf.objType), done: inf.synced}
}

type doneChecker struct {
	name string
	done chan struct{}
}

func (d doneChecker) Name() string { return d.name }

func (d doneChecker) Done() <-chan struct{} { return d.done }

func (inf *informer) LastSyncResourceVersion() string {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return inf.lastRV
}

func (inf *informer) GetStore() toolscache.Store { return inf.indexer }

func (inf *informer) GetIndexer() toolscache.Indexer { return inf.indexer }

func (inf *informer) AddIndexers(indexers toolscache.Indexers) error {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.stopped {
		return fmt.Errorf("indexer was not added because it has stopped already")
	}
	return inf.indexer.AddIndexers(indexers)
}

func (inf *informer) GetController() toolscache.Controller { return controller{inf} }

func (inf *informer) SetWatchErrorHandler(handler toolscache.WatchErrorHandler) error {
	return inf.SetWatchErrorHandlerWithContext(func(_ context.Context, r *toolscache.Reflector, err error) {
		handler(r, err)
	})
}

func (inf *informer) SetWatchErrorHandlerWithContext(handler toolscache.WatchErrorHandlerWithContext) error {
	return inf.beforeStart(func() { inf.watchErrorHandler = handler })
}

func (inf *informer) SetTransform(transform toolscache.TransformFunc) error {
	return inf.beforeStart(func() { inf.transform = transform })
}

// beforeStart runs set, under the lock, unless the informer has started:
// client-go's informer takes its settings only before.
func (inf *informer) beforeStart(set func()) error {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.started {
		return fmt.Errorf("informer has already started")
	}
	set()
	return nil
}

func (inf *informer) IsStopped() bool {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return inf.stopped
}

// controller is what GetController returns: as with client-go's shared
// informers, running it does nothing, the informer runs itself.
type controller struct{ inf *informer }

func (controller) Run(<-chan struct{})                        {}
func (controller) RunWithContext(context.Context)             {}
func (c controller) HasSynced() bool                          { return c.inf.HasSynced() }
func (c controller) HasSyncedChecker() toolscache.DoneChecker { return c.inf.HasSyncedChecker() }
func (c controller) LastSyncResourceVersion() string          { return c.inf.LastSyncResourceVersion() }
