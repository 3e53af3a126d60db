package cacheinformers

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/registry"
)

// listWatch lists and watches, for a reflector, the watch cache that holds
// objects of one Go type, with the semantics of a list and a watch of the
// whole collection over the API (resource versions, streaming lists and
// their closing bookmark, expiry). What it hands out are the cache's own
// objects, which its users must not change.
type listWatch struct {
	reg *registry.Registry
	typ reflect.Type
	// tweak sets selectors, as a generated informer's TweakListOptions.
	tweak func(*metav1.ListOptions)
}

// ListerWatcher lists and watches the watch cache of reg that holds
// objects of obj's Go type, for a reflector; nil when no cache does.
// tweak, when not nil, sets the options' selectors.
func ListerWatcher(reg *registry.Registry, obj runtime.Object, tweak func(*metav1.ListOptions)) toolscache.ListerWatcherWithContext {
	if lw := newListWatch(reg, obj, tweak); lw != nil {
		return lw
	}
	return nil
}

func newListWatch(reg *registry.Registry, obj runtime.Object, tweak func(*metav1.ListOptions)) *listWatch {
	typ := reflect.TypeOf(obj)
	if reg.Snapshot().Holding(typ) == nil {
		return nil
	}
	return &listWatch{reg: reg, typ: typ, tweak: tweak}
}

// filter is the cache filter of the options, tweaked.
func (lw *listWatch) filter(store *registry.Store, opts metav1.ListOptions) (cache.Filter, error) {
	if lw.tweak != nil {
		lw.tweak(&opts)
	}
	return filterOf(store, opts)
}

// backend is the one whose cache holds the type now, looked up on every
// call as a reflector lists and watches for as long as the server runs.
func (lw *listWatch) backend() (*registry.Backend, error) {
	b := lw.reg.Snapshot().Holding(lw.typ)
	if b == nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no watch cache holds %v", lw.typ))
	}
	return b, nil
}

func (lw *listWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

func (lw *listWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

// ListWithContext answers with the whole collection in one list, the
// resource version read as a list over the API reads it.
func (lw *listWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	b, err := lw.backend()
	if err != nil {
		return nil, err
	}
	filter, err := lw.filter(b.Storage(), opts)
	if err != nil {
		return nil, err
	}
	req := cache.ListRequest{Filter: filter}
	switch {
	case opts.ResourceVersion == "":
		req.Consistency = cache.Consistent
	case opts.ResourceVersion == "0":
		req.Consistency = cache.Any
	default:
		if req.Revision, err = parseRevision(opts.ResourceVersion); err != nil {
			return nil, err
		}
		req.Consistency = cache.NotOlderThan
		if opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact {
			req.Consistency = cache.Exact
		}
	}
	res, err := b.Cache.List(ctx, req)
	if err != nil {
		return nil, cache.APIError(err)
	}
	list, err := b.Storage().NewListOf(res.Items)
	if err != nil {
		return nil, err
	}
	m, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	m.SetResourceVersion(strconv.FormatInt(res.Revision, 10))
	return list, nil
}

// WatchWithContext starts a watch of the collection: with initial events
// (a streaming list, or a watch from "" or "0"), the objects at a state at
// least as new as the resource version asked for, then the bookmark that
// ends them; otherwise the changes after the resource version. A
// resource version the cache no longer holds ends the watch with the
// Expired Status a watch over the API gets, so that the reflector relists.
func (lw *listWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	b, err := lw.backend()
	if err != nil {
		return nil, err
	}
	rev := int64(0)
	if opts.ResourceVersion != "" {
		if rev, err = parseRevision(opts.ResourceVersion); err != nil {
			return nil, err
		}
	}
	filter, err := lw.filter(b.Storage(), opts)
	if err != nil {
		return nil, err
	}
	c := b.Cache
	var cancel context.CancelFunc
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		ctx, cancel = context.WithTimeout(ctx, time.Duration(*opts.TimeoutSeconds)*time.Second)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	w := &cacheWatch{result: make(chan watch.Event), ctx: ctx, stop: cancel, bookmark: b.Storage().Bookmark}
	if sendsInitialEvents(opts) {
		switch {
		case opts.ResourceVersion == "":
			err = c.WaitFresh(ctx)
		case rev > 0:
			err = c.WaitNotOlderThan(ctx, rev)
		}
		if err != nil {
			cancel()
			return nil, cache.APIError(err)
		}
		watcher, initial, _, startRev, err := c.WatchWithState(ctx, filter, opts.AllowWatchBookmarks)
		if err != nil {
			cancel()
			return nil, cache.APIError(err)
		}
		go w.run(watcher, func() bool { return w.sendInitial(initial, startRev, opts.AllowWatchBookmarks) })
		return w, nil
	}
	if rev == 0 {
		rev = c.Revision()
	}
	watcher, backlog, err := c.WatchFrom(ctx, rev, filter, opts.AllowWatchBookmarks)
	if err != nil {
		go w.fail(cache.APIError(err))
		return w, nil
	}
	go w.run(watcher, func() bool { return w.sendAll(backlog) })
	return w, nil
}

// sendsInitialEvents tells whether a watch starts with the state it
// starts from, as kube-apiserver defaults it: asked for, or a watch from
// "" or "0" that says nothing of it.
func sendsInitialEvents(opts metav1.ListOptions) bool {
	if opts.SendInitialEvents != nil {
		return *opts.SendInitialEvents
	}
	return opts.ResourceVersionMatch == "" && (opts.ResourceVersion == "" || opts.ResourceVersion == "0")
}

// filterOf is the cache filter of the options' selectors, over every
// namespace.
func filterOf(store *registry.Store, opts metav1.ListOptions) (cache.Filter, error) {
	labelSel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return cache.Filter{}, apierrors.NewBadRequest(err.Error())
	}
	fieldSel, err := fields.ParseSelector(opts.FieldSelector)
	if err != nil {
		return cache.Filter{}, apierrors.NewBadRequest(err.Error())
	}
	if !fieldSel.Empty() {
		if fieldSel, err = store.Info.ConvertFieldSelector(fieldSel); err != nil {
			return cache.Filter{}, err
		}
	}
	return store.Filter("", labelSel, fieldSel), nil
}

func parseRevision(rv string) (int64, error) {
	rev, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || rev < 0 {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", rv))
	}
	return rev, nil
}

// cacheWatch passes a cache watcher's deliveries on as watch events.
type cacheWatch struct {
	result   chan watch.Event
	ctx      context.Context
	stop     context.CancelFunc
	bookmark func(rev int64) runtime.Object
}

func (w *cacheWatch) ResultChan() <-chan watch.Event { return w.result }

func (w *cacheWatch) Stop() { w.stop() }

// run sends what comes first (the initial events, or the backlog), then
// the watcher's live events, until the watch is stopped, times out, or
// the cache ends the watcher (too slow, or rebuilt: the reflector
// resumes from the last version it saw, as after a watch over the API).
func (w *cacheWatch) run(watcher *cache.Watcher, first func() bool) {
	defer close(w.result)
	defer w.stop()
	defer watcher.Stop()
	if !first() {
		return
	}
	var batch []cache.Delivery
	for {
		select {
		case <-watcher.Ready():
			batch = watcher.Take(batch)
			for _, d := range batch {
				if !w.sendDelivery(d) {
					return
				}
			}
		case <-w.ctx.Done():
			return
		}
		if watcher.Ended() {
			return
		}
	}
}

func (w *cacheWatch) sendInitial(initial []runtime.Object, rev int64, bookmarks bool) bool {
	for _, obj := range initial {
		if !w.send(watch.Added, obj) {
			return false
		}
	}
	if !bookmarks {
		return true
	}
	end := w.bookmark(rev)
	m, _ := meta.Accessor(end)
	m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	return w.send(watch.Bookmark, end)
}

func (w *cacheWatch) sendAll(backlog []cache.Delivery) bool {
	for _, d := range backlog {
		if !w.sendDelivery(d) {
			return false
		}
	}
	return true
}

func (w *cacheWatch) sendDelivery(d cache.Delivery) bool {
	if d.Bookmark > 0 {
		return w.send(watch.Bookmark, w.bookmark(d.Bookmark))
	}
	obj, _ := d.Object()
	return w.send(d.Type, obj)
}

func (w *cacheWatch) send(typ watch.EventType, obj runtime.Object) bool {
	select {
	case w.result <- watch.Event{Type: typ, Object: obj}:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// fail ends the watch with one ERROR event, as a watch over the API that
// cannot start from the resource version asked for.
func (w *cacheWatch) fail(err error) {
	defer close(w.result)
	defer w.stop()
	status := apierrors.NewInternalError(err).ErrStatus
	if s, ok := err.(apierrors.APIStatus); ok {
		status = s.Status()
	}
	w.send(watch.Error, &status)
}
