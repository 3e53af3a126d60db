package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
)

// writesAndReads creates every object (the first tenth, at most 1,000,
// through one client, the rest through --workers), then gets and updates
// them the same way; without all, it only creates them, unmeasured.
func (l *load) writesAndReads(w *workload, all bool) {
	if !all {
		l.parallel(l.workers, 0, l.objects, w.create)()
		return
	}
	serial := min(l.objects/10, 1000)
	for _, op := range []struct {
		name string
		fn   func(context.Context, int) error
	}{{"create", w.create}, {"get", w.get}, {"update", w.update}} {
		l.rec.measure(fmt.Sprintf("%s %s (1 client)", w.resource, op.name), l.parallel(1, 0, serial, op.fn))
		l.rec.measure(fmt.Sprintf("%s %s (%d clients)", w.resource, op.name, l.workers), l.parallel(l.workers, serial, l.objects, op.fn))
	}
}

// lists reads everything in one page, in pages of 500, and the tenth
// selected by a label, in JSON and in protobuf; each list is one operation.
func (l *load) lists(w *workload) {
	for _, ct := range []struct {
		name string
		cs   kubernetes.Interface
	}{{"json", l.json}, {"protobuf", l.protobuf}} {
		listAll := func(first metav1.ListOptions) func(context.Context, int) error {
			return func(ctx context.Context, _ int) error {
				opts := first
				for {
					next, err := w.list(ctx, ct.cs, opts)
					if err != nil || next == "" {
						return err
					}
					opts.Continue = next
				}
			}
		}
		l.rec.measure(fmt.Sprintf("%s list %s", w.resource, ct.name), l.parallel(1, 0, 5, listAll(metav1.ListOptions{})))
		l.rec.measure(fmt.Sprintf("%s list %s paged 500", w.resource, ct.name), l.parallel(1, 0, 5, listAll(metav1.ListOptions{Limit: 500})))
		l.rec.measure(fmt.Sprintf("%s list %s selected", w.resource, ct.name), l.parallel(1, 0, 10, listAll(metav1.ListOptions{LabelSelector: "selected=true"})))
	}
}

// informerSync starts an informer of the namespace (in protobuf, as
// controllers run them) and times its sync: a list and the start of a
// watch.
func (l *load) informerSync(w *workload, ns string) {
	l.rec.measure(w.resource+" informer sync", l.parallel(1, 0, 3, func(ctx context.Context, _ int) error {
		factory := informers.NewSharedInformerFactoryWithOptions(l.protobuf, 0, informers.WithNamespace(ns))
		informer := w.informer(factory)
		stop := make(chan struct{})
		defer func() {
			close(stop)
			factory.Shutdown()
		}()
		factory.Start(stop)
		deadline := time.Now().Add(l.limit)
		for !informer.HasSynced() {
			if time.Now().After(deadline) {
				return fmt.Errorf("informer not synced within %v", l.limit)
			}
			time.Sleep(time.Millisecond)
		}
		// The namespace may hold objects of the server's own (kube-root-ca.crt).
		if got := len(informer.GetStore().List()); got < l.objects {
			return fmt.Errorf("informer synced %d objects, want at least %d", got, l.objects)
		}
		return nil
	}))
}

// watches updates the first object --updates times while n watchers watch
// it, in two phases. The setup starts the n watches at once (an operation
// is one watch, timed until its response started); client-go dials a
// connection for each request that finds none free, so most of the
// watches bring a TLS handshake of their own. The watch phase is what
// follows: an operation is one event delivered to one watcher, timed
// from the start of the update that made it, and the server's CPU is
// that of the updates and the deliveries, not of the handshakes.
func (l *load) watches(w *workload, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), l.limit)
	defer cancel()
	streams := make([]watch.Interface, n)
	l.rec.measure(fmt.Sprintf("%s watch setup (%d watchers)", w.resource, n), func() ([]time.Duration, int) {
		if err := w.update(ctx, 0); err != nil { // a current resource version to start from
			return nil, 1
		}
		return startWatches(ctx, w, l.protobuf, streams)
	})
	defer func() {
		for _, stream := range streams {
			if stream != nil {
				stream.Stop()
			}
		}
	}()
	l.rec.measure(fmt.Sprintf("%s watch (%d watchers)", w.resource, n), func() ([]time.Duration, int) {
		sent := make([]atomic.Int64, l.updates)
		latencies := make([][]time.Duration, n)
		var failed atomic.Int64
		var done sync.WaitGroup
		for i, stream := range streams {
			if stream == nil {
				continue
			}
			done.Go(func() { latencies[i] = receive(stream, sent) })
		}
		for k := range l.updates {
			sent[k].Store(time.Now().UnixNano())
			if err := w.update(ctx, 0); err != nil {
				fmt.Fprintln(os.Stderr, "kapi-load: update:", err)
				failed.Add(1)
				cancel() // the watchers would wait for events that never come
				break
			}
		}
		done.Wait()
		var all []time.Duration
		for _, lat := range latencies {
			all = append(all, lat...)
		}
		return all, int(failed.Load())
	})
}

// startWatches starts a watch of the workload's first object for each of
// streams, all at once, and returns how long each took to start.
func startWatches(ctx context.Context, w *workload, cs kubernetes.Interface, streams []watch.Interface) ([]time.Duration, int) {
	latencies := make([]time.Duration, len(streams))
	var failed atomic.Int64
	var started sync.WaitGroup
	for i := range streams {
		started.Go(func() {
			begin := time.Now()
			stream, err := w.watch(ctx, cs, metav1.ListOptions{
				FieldSelector:   fields.OneTermEqualSelector("metadata.name", objectName(0)).String(),
				ResourceVersion: "", // from now: the updates of the watch phase
			})
			latencies[i] = time.Since(begin)
			if err != nil {
				failed.Add(1)
				return
			}
			streams[i] = stream
		})
	}
	started.Wait()
	time.Sleep(100 * time.Millisecond) // the watches are registered once their responses started
	return latencies, int(failed.Load())
}

// receive reads events until it has one per update sent, and returns the
// time each took from its update's start.
func receive(stream watch.Interface, sent []atomic.Int64) []time.Duration {
	var latencies []time.Duration
	for ev := range stream.ResultChan() {
		if ev.Type != watch.Modified {
			continue
		}
		k := len(latencies)
		latencies = append(latencies, time.Duration(time.Now().UnixNano()-sent[k].Load()))
		if len(latencies) == len(sent) {
			break
		}
	}
	return latencies
}

// deleteCollection deletes every object of the workload in one request.
func (l *load) deleteCollection(w *workload) {
	l.rec.measure(w.resource+" deletecollection", l.parallel(1, 0, 1, func(ctx context.Context, _ int) error {
		return w.deleteAll(ctx)
	}))
}

// parallel is a phase that runs fn for from..to-1 on workers goroutines,
// each call one operation.
func (l *load) parallel(workers, from, to int, fn func(context.Context, int) error) func() ([]time.Duration, int) {
	return func() ([]time.Duration, int) {
		ctx, cancel := context.WithTimeout(context.Background(), l.limit)
		defer cancel()
		latencies := make([]time.Duration, to-from)
		var next, failed atomic.Int64
		next.Store(int64(from))
		var wg sync.WaitGroup
		var firstErr sync.Once
		for range workers {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < to && ctx.Err() == nil; i = int(next.Add(1) - 1) {
					start := time.Now()
					if err := fn(ctx, i); err != nil {
						failed.Add(1)
						firstErr.Do(func() { fmt.Fprintln(os.Stderr, "kapi-load:", err) })
					}
					latencies[i-from] = time.Since(start)
				}
			})
		}
		wg.Wait()
		// Calls the deadline left undone have no latency.
		return slices.DeleteFunc(latencies, func(d time.Duration) bool { return d == 0 }), int(failed.Load())
	}
}
