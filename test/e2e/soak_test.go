package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// The soak test runs mixed load against one server for as long as
// KAPI_SOAK says, in rounds of a minute, and fails on memory that only
// grows, goroutines left behind, and watch streams that miss, repeat or
// reorder an event. It is not part of the default test run:
//
//	KAPI_SOAK=1h go test -run TestSoak -timeout 0 -v ./test/e2e/
//
// Each round works in a namespace of its own, deleted at the round's end:
// writers create, update and delete ConfigMaps (the objects whose history
// is checked), a Deployment is scaled up and down on simulated nodes,
// clients list in pages, and watchers come and go: one reference watcher
// sees the whole round, the others end after a few seconds (the server's
// timeout or their own) and resume from their last resource version, or
// join late.
func TestSoak(t *testing.T) {
	duration, err := time.ParseDuration(os.Getenv("KAPI_SOAK"))
	if err != nil {
		t.Skip("KAPI_SOAK (a duration) runs the soak test")
	}
	// Events expire after two minutes instead of an hour, so that the
	// data a run keeps does not grow for its first hour.
	k := startMeasuredKapi(t, "--simulated-nodes", "2", "--event-ttl", "2m")
	time.Sleep(10 * time.Second) // controllers and nodes settle
	baseline := sampleServer(t, k)
	t.Logf("baseline: %v", baseline)

	var samples []serverSample
	for round, start := 0, time.Now(); time.Since(start) < duration; round++ {
		length := min(time.Minute, duration-time.Since(start))
		soakRound(t, k, round, max(length, 10*time.Second))
		samples = append(samples, sampleServer(t, k))
		t.Logf("after round %d: %v", round, samples[len(samples)-1])
		if t.Failed() {
			return
		}
	}
	checkGoroutines(t, k, baseline)
	checkHeapTrend(t, samples)
}

// soakRound runs one round's load in namespace soak-ROUND and checks its
// watch streams.
func soakRound(t *testing.T, k *kapi, round int, length time.Duration) {
	config := rest.CopyConfig(k.config)
	config.QPS, config.Burst = -1, 0 // the load is bounded by its loops
	cs := kubernetes.NewForConfigOrDie(config)
	ns := fmt.Sprintf("soak-%d", round)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	configMaps := cs.CoreV1().ConfigMaps(ns)
	list, err := configMaps.List(ctx, metav1.ListOptions{LabelSelector: "soak=true"})
	if err != nil {
		t.Fatal(err)
	}
	startRV := list.ResourceVersion

	stop := make(chan struct{})
	var load sync.WaitGroup
	var mu sync.Mutex
	var acked []change
	var deleted []string
	for w := range 4 {
		load.Go(func() {
			writes, gone := writeConfigMaps(t, configMaps, w, stop)
			mu.Lock()
			acked, deleted = append(acked, writes...), append(deleted, gone...)
			mu.Unlock()
		})
	}
	load.Go(func() { scaleDeployment(t, cs, ns, stop) })
	load.Go(func() { listInPages(t, cs, stop) })

	reference := make(chan []change, 1)
	go func() { reference <- watchUntilEnd(t, cs, ns, startRV, false) }()
	churned := make(chan []change, 6)
	for range 4 {
		go func() { churned <- watchUntilEnd(t, cs, ns, startRV, true) }()
	}
	type late struct {
		from    int64
		changes []change
	}
	joined := make(chan late, 2)
	for i := range 2 {
		go func() {
			time.Sleep(length * time.Duration(i+1) / 3)
			l, err := configMaps.List(ctx, metav1.ListOptions{LabelSelector: "soak=true", Limit: 1})
			if err != nil {
				t.Error(err)
				joined <- late{}
				return
			}
			from, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
			joined <- late{from, watchUntilEnd(t, cs, ns, l.ResourceVersion, true)}
		}()
	}

	time.Sleep(length)
	close(stop)
	load.Wait()
	// The end marker tells every watcher that the writes are over.
	if _, err := configMaps.Create(ctx, soakConfigMap("end"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ref := <-reference
	checkReference(t, ns, ref, acked, deleted)
	for range 4 {
		if got := <-churned; !slices.Equal(got, ref) {
			t.Errorf("%s: a watcher that resumed its watch saw another history than the reference: %s", ns, firstDifference(got, ref))
		}
	}
	for range 2 {
		l := <-joined
		want := slices.DeleteFunc(slices.Clone(ref), func(c change) bool { return c.rv <= l.from })
		if !slices.Equal(l.changes, want) {
			t.Errorf("%s: a watcher that joined at %d saw another history than the reference: %s", ns, l.from, firstDifference(l.changes, want))
		}
	}

	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Minute, "namespace "+ns+" to go", func() bool {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

func soakConfigMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"soak": "true"}},
		Data:       map[string]string{"payload": strings.Repeat("soak", 64)},
	}
}

// writeConfigMaps creates, updates and deletes writer w's ConfigMaps until
// stop, and returns every acknowledged create and update, and the names it
// deleted.
func writeConfigMaps(t *testing.T, client corev1client.ConfigMapInterface, w int, stop chan struct{}) (acked []change, deleted []string) {
	record := func(typ watch.EventType, cm *corev1.ConfigMap) {
		rv, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64)
		acked = append(acked, change{typ, cm.Name, rv})
	}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return acked, deleted
		default:
		}
		cm, err := client.Create(ctx, soakConfigMap(fmt.Sprintf("w%d-%d", w, i)), metav1.CreateOptions{})
		if err != nil {
			t.Errorf("create: %v", err)
			return acked, deleted
		}
		record(watch.Added, cm)
		for u := range rand.IntN(4) {
			cm.Data["update"] = fmt.Sprint(u)
			if cm, err = client.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				t.Errorf("update: %v", err)
				return acked, deleted
			}
			record(watch.Modified, cm)
		}
		if i%3 != 0 { // a third of them stay until the namespace goes
			if err := client.Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("delete: %v", err)
				return acked, deleted
			}
			deleted = append(deleted, cm.Name)
		}
		time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
	}
}

// scaleDeployment runs a Deployment on the simulated nodes and scales it
// between 0 and 8 replicas until stop: the controllers, the scheduler and
// the simulated kubelets write pods, ReplicaSets, events and statuses.
func scaleDeployment(t *testing.T, cs *kubernetes.Clientset, ns string, stop chan struct{}) {
	labels := map[string]string{"app": "soak"}
	deployments := cs.AppsV1().Deployments(ns)
	_, err := deployments.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "soak"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "soak:v1"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Errorf("deployment: %v", err)
		return
	}
	for {
		select {
		case <-stop:
			return
		case <-time.After(3 * time.Second):
		}
		scale, err := deployments.GetScale(ctx, "soak", metav1.GetOptions{})
		if err == nil {
			scale.Spec.Replicas = rand.Int32N(9)
			_, err = deployments.UpdateScale(ctx, "soak", scale, metav1.UpdateOptions{})
		}
		if err != nil && !apierrors.IsConflict(err) {
			t.Errorf("scale: %v", err)
			return
		}
	}
}

// listInPages lists every pod and ConfigMap of the server in pages of 50,
// as clients resyncing do, until stop.
func listInPages(t *testing.T, cs *kubernetes.Clientset, stop chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(500 * time.Millisecond):
		}
		opts := metav1.ListOptions{Limit: 50}
		for {
			l, err := cs.CoreV1().ConfigMaps("").List(ctx, opts)
			if err != nil {
				t.Errorf("list: %v", err)
				return
			}
			if opts.Continue = l.Continue; opts.Continue == "" {
				break
			}
		}
		if _, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 50}); err != nil {
			t.Errorf("list pods: %v", err)
			return
		}
	}
}

// watchUntilEnd watches the round's ConfigMaps from rv until the end
// marker's ADDED event, and returns what it saw before it. A churning
// watcher ends each watch after a few seconds (asking the server to, or
// cancelling it itself) and starts the next from the last resource version
// it saw, bookmarks included.
func watchUntilEnd(t *testing.T, cs *kubernetes.Clientset, ns, rv string, churn bool) []change {
	var seen []change
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		opts := metav1.ListOptions{LabelSelector: "soak=true", ResourceVersion: rv, AllowWatchBookmarks: true}
		watchCtx, cancel := context.WithCancel(ctx)
		if churn {
			if rand.IntN(2) == 0 {
				opts.TimeoutSeconds = ptr.To(int64(1 + rand.IntN(4)))
			} else {
				time.AfterFunc(time.Duration(500+rand.IntN(4000))*time.Millisecond, cancel)
			}
		}
		w, err := cs.CoreV1().ConfigMaps(ns).Watch(watchCtx, opts)
		if err != nil {
			cancel()
			t.Errorf("watch from %s: %v", rv, err)
			return seen
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				if watchCtx.Err() != nil {
					break // the watcher ended the watch itself
				}
				t.Errorf("watch from %s: %v", rv, apierrors.FromObject(ev.Object))
				cancel()
				return seen
			}
			cm := ev.Object.(*corev1.ConfigMap)
			rv = cm.ResourceVersion
			if ev.Type == watch.Bookmark {
				continue
			}
			if cm.Name == "end" {
				w.Stop()
				cancel()
				return seen
			}
			n, _ := strconv.ParseInt(rv, 10, 64)
			seen = append(seen, change{ev.Type, cm.Name, n})
		}
		cancel()
	}
	t.Errorf("%s: a watcher did not see the end marker in 5 minutes", ns)
	return seen
}

// checkReference checks that the reference watcher's history is ordered,
// holds every acknowledged write once and nothing else, and ends each
// deleted object with its deletion.
func checkReference(t *testing.T, ns string, ref, acked []change, deleted []string) {
	t.Helper()
	for i := 1; i < len(ref); i++ {
		if ref[i].rv <= ref[i-1].rv {
			t.Errorf("%s: watch events out of order or repeated: %v after %v", ns, ref[i], ref[i-1])
		}
	}
	writes := map[change]bool{}
	for _, c := range acked {
		writes[c] = true
	}
	last := map[string]change{}
	for _, c := range ref {
		if c.typ != watch.Deleted && !writes[c] {
			t.Errorf("%s: the watch saw %v, which no writer made", ns, c)
		}
		delete(writes, c)
		last[c.name] = c
	}
	for c := range writes {
		t.Errorf("%s: the watch missed the acknowledged write %v", ns, c)
	}
	for _, name := range deleted {
		if last[name].typ != watch.Deleted {
			t.Errorf("%s: the watch saw no deletion of %s after its last write (last event %v)", ns, name, last[name])
		}
	}
}

// serverSample is what the soak test watches of the server's resources.
type serverSample struct {
	rssMiB, heapMiB float64 // resident memory; live heap after a collection
	goroutines      int
}

func (s serverSample) String() string {
	return fmt.Sprintf("rss %.0f MiB, live heap %.0f MiB, %d goroutines", s.rssMiB, s.heapMiB, s.goroutines)
}

// sampleServer reads the process's resident memory from /proc, and its
// live heap (after a forced collection) and goroutine count from
// /debug/pprof.
func sampleServer(t *testing.T, k *kapi) serverSample {
	t.Helper()
	var s serverSample
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", k.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if value, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 64)
			s.rssMiB = kb / 1024
		}
	}
	heap := pprofLine(t, k, "/debug/pprof/heap?gc=1&debug=1", "# HeapAlloc = ")
	bytes, _ := strconv.ParseFloat(heap, 64)
	s.heapMiB = bytes / (1 << 20)
	total := pprofLine(t, k, "/debug/pprof/goroutine?debug=1", "goroutine profile: total ")
	s.goroutines, _ = strconv.Atoi(total)
	return s
}

// pprofLine returns what follows prefix on the first line of a profile
// that starts with it.
func pprofLine(t *testing.T, k *kapi, path, prefix string) string {
	t.Helper()
	resp, err := k.rawClient().Get(k.config.Host + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		if value, ok := strings.CutPrefix(scanner.Text(), prefix); ok {
			io.Copy(io.Discard, resp.Body)
			return strings.TrimSpace(value)
		}
	}
	t.Fatalf("%s has no line %q", path, prefix)
	return ""
}

// checkGoroutines fails if, with every round's watches ended and
// namespaces gone, the server runs many more goroutines than before the
// first round.
func checkGoroutines(t *testing.T, k *kapi, baseline serverSample) {
	t.Helper()
	var now serverSample
	for range 30 { // connections and watches wind down
		if now = sampleServer(t, k); now.goroutines <= baseline.goroutines+baseline.goroutines/10+20 {
			return
		}
		time.Sleep(time.Second)
	}
	t.Errorf("goroutines left behind: %d after the soak, %d before", now.goroutines, baseline.goroutines)
}

// checkHeapTrend fails if the live heap only grows: every sample of the
// second half of the run above every sample of the first half by more
// than a quarter.
func checkHeapTrend(t *testing.T, samples []serverSample) {
	t.Helper()
	if len(samples) < 4 {
		return
	}
	half := len(samples) / 2
	firstMax, secondMin := 0.0, samples[half].heapMiB
	for _, s := range samples[:half] {
		firstMax = max(firstMax, s.heapMiB)
	}
	for _, s := range samples[half:] {
		secondMin = min(secondMin, s.heapMiB)
	}
	if secondMin > firstMax*1.25 {
		t.Errorf("the live heap only grows: at least %.0f MiB in the second half of the run, at most %.0f MiB in the first", secondMin, firstMax)
	}
}
