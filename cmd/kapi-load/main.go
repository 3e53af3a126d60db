// Command kapi-load drives a running API server (kapi or kube-apiserver)
// with a bounded load through client-go and prints throughput and latency
// figures: concurrent creates, full and paged lists, and updates fanned out
// to many watchers. Every phase stops by itself.
//
//	kapi-load --kubeconfig ./kapi-data/kubeconfig --objects 2000 --clients 32 --watchers 200
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "./kapi-data/kubeconfig", "kubeconfig of the server to load")
	objects := flag.Int("objects", 2000, "configmaps to create (at most 100000)")
	clients := flag.Int("clients", 32, "concurrent clients (at most 512)")
	watchers := flag.Int("watchers", 100, "watchers during the update phase (at most 5000)")
	updates := flag.Int("updates", 200, "updates watched by every watcher (at most 10000)")
	protobuf := flag.Bool("protobuf", true, "use protobuf, as client-go does by default")
	limit := flag.Duration("timeout", 5*time.Minute, "stop every phase after this long")
	flag.Parse()
	*objects, *clients, *watchers, *updates = min(*objects, 100000), min(max(*clients, 1), 512), min(*watchers, 5000), min(*updates, 10000)

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail(err)
	}
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit
	if !*protobuf {
		cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *limit)
	defer cancel()
	ns := fmt.Sprintf("kapi-load-%d", time.Now().Unix())
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		fail(err)
	}
	defer cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	cms := cs.CoreV1().ConfigMaps(ns)

	run("create", parallel(ctx, *clients, *objects, func(i int) error {
		_, err := cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%06d", i), Labels: map[string]string{"load": "yes"}},
			Data:       map[string]string{"payload": fmt.Sprintf("%0256d", i)},
		}, metav1.CreateOptions{})
		return err
	}))
	run("list (one page)", parallel(ctx, 1, 20, func(int) error {
		_, err := cms.List(ctx, metav1.ListOptions{})
		return err
	}))
	run("list (pages of 500)", parallel(ctx, 1, 20, func(int) error {
		opts := metav1.ListOptions{Limit: 500}
		for {
			page, err := cms.List(ctx, opts)
			if err != nil || page.Continue == "" {
				return err
			}
			opts.Continue = page.Continue
		}
	}))
	watchUpdates(ctx, cms, *watchers, *updates)
}

// watchUpdates updates one object repeatedly while watchers watch it, and
// reports how long each update took to reach each watcher.
func watchUpdates(ctx context.Context, cms corev1client.ConfigMapInterface, watchers, updates int) {
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hot"}, Data: map[string]string{"i": "-1"}}, metav1.CreateOptions{})
	if err != nil {
		fail(err)
	}
	sent := make([]atomic.Int64, updates) // UnixNano when update i was sent
	latencies := make([][]time.Duration, watchers)
	var ready, done sync.WaitGroup
	for w := 0; w < watchers; w++ {
		ready.Add(1)
		done.Add(1)
		go func(w int) {
			defer done.Done()
			watcher, err := cms.Watch(ctx, metav1.ListOptions{
				FieldSelector: "metadata.name=hot", ResourceVersion: cm.ResourceVersion,
			})
			ready.Done()
			if err != nil {
				fmt.Fprintln(os.Stderr, "watch:", err)
				return
			}
			defer watcher.Stop()
			for ev := range watcher.ResultChan() {
				got, ok := ev.Object.(*corev1.ConfigMap)
				if !ok {
					continue
				}
				var i int
				fmt.Sscan(got.Data["i"], &i)
				if i >= 0 && i < updates {
					latencies[w] = append(latencies[w], time.Duration(time.Now().UnixNano()-sent[i].Load()))
				}
				if i == updates-1 {
					return
				}
			}
		}(w)
	}
	ready.Wait()
	start := time.Now()
	for i := 0; i < updates && ctx.Err() == nil; i++ {
		cm.Data["i"] = fmt.Sprint(i)
		sent[i].Store(time.Now().UnixNano())
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			fail(err)
		}
	}
	done.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range latencies {
		all = append(all, l...)
	}
	if len(all) == 0 {
		fail(fmt.Errorf("no watch events arrived"))
	}
	report(fmt.Sprintf("update→%d watchers", watchers), all, fmt.Sprintf("%.0f events/s", float64(len(all))/elapsed.Seconds()))
}

// parallel runs fn for 0..n-1 on workers goroutines and returns each call's
// latency.
func parallel(ctx context.Context, workers, n int, fn func(i int) error) phase {
	return func() []time.Duration { return runParallel(ctx, workers, n, fn) }
}

func runParallel(ctx context.Context, workers, n int, fn func(i int) error) []time.Duration {
	latencies := make([]time.Duration, n)
	var next atomic.Int64
	var failures atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				start := time.Now()
				if err := fn(i); err != nil {
					failures.Add(1)
				}
				latencies[i] = time.Since(start)
			}
		}()
	}
	wg.Wait()
	if f := failures.Load(); f > 0 {
		fmt.Fprintf(os.Stderr, "%d calls failed\n", f)
	}
	return latencies
}

// phase is a parallel run of a load phase, timed as a whole.
type phase func() []time.Duration

// run times a phase and reports its latencies and throughput.
func run(name string, p phase) {
	start := time.Now()
	latencies := p()
	report(name, latencies, fmt.Sprintf("%.0f calls/s", float64(len(latencies))/time.Since(start).Seconds()))
}

func report(phase string, latencies []time.Duration, rate string) {
	sorted := append([]time.Duration(nil), latencies...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	pct := func(p float64) time.Duration { return sorted[int(float64(len(sorted)-1)*p)] }
	fmt.Printf("%-22s n=%-6d p50=%-10v p99=%-10v max=%-10v %s\n", phase, len(latencies), pct(0.5).Round(time.Microsecond),
		pct(0.99).Round(time.Microsecond), sorted[len(sorted)-1].Round(time.Microsecond), rate)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kapi-load:", err)
	os.Exit(1)
}
