package controllers

import (
	"context"
	"sync"
	"time"

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
// (see runsOfEvents).
const (
	gcWorkers    = 20
	gcSyncPeriod = 30 * time.Second
	gcEventRun   = 50 * time.Millisecond
)

// runGarbageCollector starts kube-controller-manager's garbage collector:
// it watches the metadata of every deletable resource, deletes objects
// whose owners are gone, and carries out foreground and orphan deletion
// (the foregroundDeletion and orphan finalizers).
func runGarbageCollector(ctx context.Context, start func(func()), client kubernetes.Interface, metadataClient metadata.Interface,
	factory informers.SharedInformerFactory, metadataFactory metadatainformer.SharedInformerFactory, informersStarted <-chan struct{},
	discoveryClient discovery.DiscoveryInterface) error {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discoveryClient))
	gc, err := garbagecollector.NewGarbageCollector(ctx, client, metadataClient, mapper,
		garbagecollector.DefaultIgnoredResources(), runsOfEvents{informerfactory.NewInformerFactory(factory, metadataFactory)}, informersStarted)
	if err != nil {
		return err
	}
	start(func() { gc.Run(ctx, gcWorkers, gcSyncPeriod) })
	// Sync takes its own discovery client: it resets the mapper's.
	start(func() { gc.Sync(ctx, client.Discovery(), gcSyncPeriod) })
	start(func() { wait.Until(mapper.Reset, gcSyncPeriod, ctx.Done()) })
	return nil
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
	return i.SharedIndexInformer.AddEventHandlerWithResyncPeriod(&eventRun{next: h, window: gcEventRun}, resync)
}

// eventRun passes an informer's events to next, in order: at once after
// a quiet window, else gathered and handed over window after the first
// one held.
type eventRun struct {
	next   cache.ResourceEventHandler
	window time.Duration

	// handing is held while events go to next, so that a run and an
	// event after it cannot overtake each other.
	handing sync.Mutex

	mu   sync.Mutex
	held []func(cache.ResourceEventHandler)
	last time.Time // when the latest event came
}

func (r *eventRun) OnAdd(obj any, initial bool) {
	r.add(func(h cache.ResourceEventHandler) { h.OnAdd(obj, initial) })
}

func (r *eventRun) OnUpdate(old, obj any) {
	r.add(func(h cache.ResourceEventHandler) { h.OnUpdate(old, obj) })
}

func (r *eventRun) OnDelete(obj any) {
	r.add(func(h cache.ResourceEventHandler) { h.OnDelete(obj) })
}

func (r *eventRun) add(event func(cache.ResourceEventHandler)) {
	r.mu.Lock()
	now := time.Now()
	quiet := r.held == nil && now.Sub(r.last) > r.window
	r.last = now
	if quiet {
		r.mu.Unlock()
		r.handing.Lock()
		defer r.handing.Unlock()
		event(r.next)
		return
	}
	r.held = append(r.held, event)
	first := len(r.held) == 1
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
	for _, event := range run {
		event(r.next)
	}
}
