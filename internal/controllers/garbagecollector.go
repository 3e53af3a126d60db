package controllers

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/controller-manager/pkg/informerfactory"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
)

// gcWorkers is kube-controller-manager's --concurrent-gc-syncs default;
// gcSyncPeriod how often it looks for new resources to watch.
// gcEventRun is how long the collector's informers hold a run of events
// (see runsOfEvents); gcListWait how long at most they hold an initial
// list for the rest of it (see eventRun).
const (
	gcWorkers    = 20
	gcSyncPeriod = 30 * time.Second
	gcEventRun   = 50 * time.Millisecond
	gcListWait   = time.Minute
)

// runGarbageCollector starts kube-controller-manager's garbage collector:
// it watches the metadata of every deletable resource, deletes objects
// whose owners are gone, and carries out foreground and orphan deletion
// (the foregroundDeletion and orphan finalizers). Its graph's monitors are
// what the storage version migrator reads objects from.
func runGarbageCollector(ctx context.Context, start func(func()), client kubernetes.Interface, metadataClient metadata.Interface,
	factory informers.SharedInformerFactory, metadataFactory metadatainformer.SharedInformerFactory, informersStarted <-chan struct{},
	discoveryClient discovery.DiscoveryInterface) (*garbagecollector.GraphBuilder, error) {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discoveryClient))
	gc, err := garbagecollector.NewGarbageCollector(ctx, client, metadataClient, mapper,
		garbagecollector.DefaultIgnoredResources(), runsOfEvents{informerfactory.NewInformerFactory(factory, metadataFactory)}, informersStarted)
	if err != nil {
		return nil, err
	}
	start(func() { gc.Run(ctx, gcWorkers, gcSyncPeriod) })
	// Sync takes its own discovery client: it resets the mapper's.
	start(func() { gc.Sync(ctx, client.Discovery(), gcSyncPeriod) })
	start(func() { wait.Until(mapper.Reset, gcSyncPeriod, ctx.Done()) })
	return gc.GetDependencyGraphBuilder(), nil
}

// runsOfEvents hands the garbage collector informers whose events come in
// runs. The collector's graph keeps a node (and an empty map of its
// dependents) for every object, as long as the object lives. Built one
// event at a time amid a burst of writes, each node lands in memory spans
// the requests' garbage fills, and pins such a span: holding 10,000 pods
// made through the API, the graph's 6 MB took 20 MiB of resident memory.
// Handed over in runs, the nodes of a run sit side by side. An event that
// follows a quiet moment goes through at once; during a burst the
// collector learns of an event at most gcEventRun later, as it would from
// a slower informer.
type runsOfEvents struct {
	informerfactory.InformerFactory
}

func (f runsOfEvents) ForResource(r schema.GroupVersionResource) (informers.GenericInformer, error) {
	i, err := f.InformerFactory.ForResource(r)
	if err != nil {
		return nil, err
	}
	return runsOfEventsInformer{i}, nil
}

type runsOfEventsInformer struct{ informers.GenericInformer }

func (i runsOfEventsInformer) Informer() cache.SharedIndexInformer {
	return runsOfEventsShared{i.GenericInformer.Informer()}
}

type runsOfEventsShared struct{ cache.SharedIndexInformer }

func (i runsOfEventsShared) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	run := &eventRun{next: h, window: gcEventRun, listing: true}
	reg, err := i.SharedIndexInformer.AddEventHandlerWithResyncPeriod(run, resync)
	if err != nil {
		return nil, err
	}
	go run.handOverListWhen(reg.HasSyncedChecker().Done(), gcListWait)
	return reg, nil
}

// eventRun passes an informer's events to next, in order: at once after
// a quiet window, else gathered and handed over window after the first
// one held.
//
// While listing, it holds the informer's initial list until the whole
// list has come, and hands it over with the objects being deleted last.
// The list comes in no particular order (client-go gathers a streamed
// list in a map), and the collector acts on an owner being deleted as
// soon as its graph has it: an owner with the orphan finalizer that came
// before its dependents would lose the finalizer with no dependent
// orphaned, and the dependents, their owner gone, would be deleted.
type eventRun struct {
	next   cache.ResourceEventHandler
	window time.Duration

	// handing is held while events go to next, so that a run and an
	// event after it cannot overtake each other.
	handing sync.Mutex

	mu      sync.Mutex
	held    []event
	listing bool      // the initial list is held until it is whole
	last    time.Time // when the latest event came
}

// event is an informer's event held for the handler.
type event struct {
	kind     eventKind
	old, obj any
	initial  bool // an add of the informer's initial list
}

type eventKind int

const (
	added eventKind = iota
	updated
	deleted
)

func (e event) handTo(h cache.ResourceEventHandler) {
	switch e.kind {
	case added:
		h.OnAdd(e.obj, e.initial)
	case updated:
		h.OnUpdate(e.old, e.obj)
	case deleted:
		h.OnDelete(e.obj)
	}
}

// beingDeleted tells an object with a deletion timestamp.
func (e event) beingDeleted() bool {
	o, err := meta.Accessor(e.obj)
	return err == nil && o.GetDeletionTimestamp() != nil
}

func (r *eventRun) OnAdd(obj any, initial bool) {
	r.add(event{kind: added, obj: obj, initial: initial})
}

func (r *eventRun) OnUpdate(old, obj any) {
	r.add(event{kind: updated, old: old, obj: obj})
}

func (r *eventRun) OnDelete(obj any) {
	r.add(event{kind: deleted, obj: obj})
}

func (r *eventRun) add(e event) {
	r.mu.Lock()
	now := time.Now()
	quiet := r.held == nil && !r.listing && now.Sub(r.last) > r.window
	r.last = now
	if quiet {
		r.mu.Unlock()
		r.handing.Lock()
		defer r.handing.Unlock()
		e.handTo(r.next)
		return
	}
	r.held = append(r.held, e)
	first := len(r.held) == 1 && !r.listing
	r.mu.Unlock()
	if first {
		time.AfterFunc(r.window, r.handOver)
	}
}

func (r *eventRun) handOver() {
	r.handing.Lock()
	defer r.handing.Unlock()
	r.mu.Lock()
	run := r.held
	r.held = nil
	r.mu.Unlock()
	for _, e := range run {
		e.handTo(r.next)
	}
}

// handOverListWhen hands over the initial list when listed is closed, or
// after wait if it never is (an informer stopped before its list came
// whole), the objects being deleted after the others, and the events
// that came after the list after it, in order.
func (r *eventRun) handOverListWhen(listed <-chan struct{}, wait time.Duration) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-listed:
	case <-timer.C:
	}
	r.handing.Lock()
	defer r.handing.Unlock()
	r.mu.Lock()
	run := r.held
	r.held, r.listing, r.last = nil, false, time.Now()
	r.mu.Unlock()
	slices.SortStableFunc(run, func(a, b event) int { return cmp.Compare(a.listRank(), b.listRank()) })
	for _, e := range run {
		e.handTo(r.next)
	}
}

// listRank orders the events held while listing: the initial list's
// objects that are not being deleted, then those that are, then what
// came after the list.
func (e event) listRank() int {
	switch {
	case !e.initial:
		return 2
	case e.beingDeleted():
		return 1
	}
	return 0
}
