// Command kapi-load drives a running API server (kapi, or kube-apiserver
// with etcd) through client-go with a bounded load and prints, phase by
// phase, latencies, throughput and, given the server's process IDs, the
// server's CPU time per operation and resident memory, read from /proc.
// Every phase stops by itself (--timeout).
//
//	kapi-load --kubeconfig ./kapi-data/kubeconfig --pids $(pidof kapi) --objects 10000 --out kapi.json
//	kapi-load compare kapi.json kube.json
//
// For each workload (ConfigMaps of 1.1 KB and Pods of 2.3 KB): creates,
// gets and updates at 1 and --workers clients; full, paged (500) and
// label-selected lists in JSON and protobuf; an informer's sync; an
// update fanned out to 100 and --watchers watchers; and a DeleteCollection
// of everything. Only loopback servers are meant: the load is heavy.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == "compare" {
		if err := compare(os.Args[2], os.Args[3]); err != nil {
			fail(err)
		}
		return
	}
	kubeconfig := flag.String("kubeconfig", "./kapi-data/kubeconfig", "kubeconfig of the server to load")
	pidList := flag.String("pids", "", "comma-separated process IDs of the server (kapi; or kube-apiserver,etcd) whose CPU and memory to sample")
	objects := flag.Int("objects", 10000, "objects of each workload (at most 100000)")
	workers := flag.Int("workers", 16, "concurrent clients of the parallel phases (at most 512)")
	watchers := flag.Int("watchers", 1000, "watchers of the larger watch phase (at most 5000); the smaller has 100")
	updates := flag.Int("updates", 100, "updates each watcher receives (at most 10000)")
	workloads := flag.String("workloads", "configmaps,pods", "workloads to run: configmaps, pods")
	phaseList := flag.String("phases", "writes,lists,informer,watches,deletecollection", "phases to run; without deletecollection the objects and their namespace stay")
	out := flag.String("out", "", "write the results as JSON here, for kapi-load compare")
	limit := flag.Duration("timeout", 5*time.Minute, "stop any phase after this long")
	flag.Parse()
	*objects, *workers = min(max(*objects, 10), 100000), min(max(*workers, 1), 512)
	*watchers, *updates = min(max(*watchers, 1), 5000), min(max(*updates, 1), 10000)

	pids, err := parsePIDs(*pidList)
	if err != nil {
		fail(err)
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail(err)
	}
	l := &load{
		rec: &recorder{servers: pids}, protobuf: clientset(config, "application/vnd.kubernetes.protobuf"),
		json: clientset(config, "application/json"), objects: *objects, workers: *workers,
		watchers: *watchers, updates: *updates, limit: *limit, phases: map[string]bool{},
	}
	for _, p := range strings.Split(*phaseList, ",") {
		l.phases[strings.TrimSpace(p)] = true
	}
	printHeader(len(pids) > 0)
	// A workload that fails is reported; the others still run, and the
	// results so far are written.
	failed := false
	for _, name := range strings.Split(*workloads, ",") {
		if err := l.run(strings.TrimSpace(name)); err != nil {
			fmt.Fprintf(os.Stderr, "kapi-load: %s: %v\n", name, err)
			failed = true
		}
	}
	if len(pids) > 0 {
		fmt.Printf("peak server rss %.0f MiB\n", float64(l.rec.peakRSS)/(1<<20))
	}
	if *out != "" {
		if err := writeResults(*out, l.rec.results); err != nil {
			fail(err)
		}
	}
	if failed {
		os.Exit(1)
	}
}

// clientset is a client without client-side rate limits that speaks the
// content type given.
func clientset(config *rest.Config, contentType string) *kubernetes.Clientset {
	config = rest.CopyConfig(config)
	config.QPS, config.Burst = -1, 0
	config.ContentType = contentType
	config.AcceptContentTypes = contentType
	config.UserAgent = "kapi-load"
	cs, err := kubernetes.NewForConfig(config)
	if err != nil {
		fail(err)
	}
	return cs
}

// load is one run's settings and clients.
type load struct {
	rec               *recorder
	protobuf, json    *kubernetes.Clientset
	objects, workers  int
	watchers, updates int
	limit             time.Duration
	phases            map[string]bool
}

// run runs the phases asked for of one workload in a namespace of its
// own, which it deletes at the end with the deletecollection phase.
func (l *load) run(name string) error {
	ctx := context.Background()
	ns := fmt.Sprintf("kapi-load-%s-%d", name, time.Now().Unix())
	namespaces := l.protobuf.CoreV1().Namespaces()
	if _, err := namespaces.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	// Pods need the namespace's default service account, which a
	// kube-apiserver without a controller manager never makes.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := l.protobuf.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	var w *workload
	switch name {
	case "configmaps":
		w = configMaps(ns, l.objects, l.protobuf)
	case "pods":
		w = pods(ns, l.objects, l.protobuf)
	default:
		return fmt.Errorf("unknown workload %q: configmaps or pods", name)
	}
	// Every phase but the writes needs the objects.
	l.writesAndReads(w, l.phases["writes"])
	if l.phases["lists"] {
		l.lists(w)
	}
	if l.phases["informer"] {
		l.informerSync(w, ns)
	}
	if l.phases["watches"] {
		l.watches(w, 100)
		if l.watchers != 100 {
			l.watches(w, l.watchers)
		}
	}
	if l.phases["deletecollection"] {
		l.deleteCollection(w)
		return namespaces.Delete(ctx, ns, metav1.DeleteOptions{})
	}
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kapi-load:", err)
	os.Exit(1)
}
