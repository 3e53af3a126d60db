package cacheinformers

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/pipeline/pipelinetest"
	"github.com/kapi-dev/kapi/internal/registry"
)

// recorder is a handler that writes down what it is told, as
// "add a initial", "update a 3->4", "delete a", "delete a unknown".
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) record(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf(format, args...))
}

func (r *recorder) OnAdd(obj any, initial bool) {
	m := obj.(metav1.Object)
	if initial {
		r.record("add %s initial", m.GetName())
		return
	}
	r.record("add %s", m.GetName())
}

func (r *recorder) OnUpdate(old, new any) {
	r.record("update %s %s->%s", new.(metav1.Object).GetName(), old.(metav1.Object).GetResourceVersion(), new.(metav1.Object).GetResourceVersion())
}

func (r *recorder) OnDelete(obj any) {
	if unknown, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		r.record("delete %s unknown", unknown.Obj.(metav1.Object).GetName())
		return
	}
	r.record("delete %s", obj.(metav1.Object).GetName())
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// waitFor waits up to 10 s for the recorder to have seen want, in order;
// the first unordered of them in any order (a late handler's initial
// adds come in the indexer's order, which is none).
func (r *recorder) waitFor(t *testing.T, unordered int, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := r.seen()
		if len(got) == len(want) {
			slices.Sort(got[:unordered])
			sorted := slices.Clone(want)
			slices.Sort(sorted[:unordered])
			if slices.Equal(got, sorted) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("handler saw\n%q\nwant\n%q", r.seen(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lookingRecorder is a recorder that also looks each object it is told
// of up in the indexer, noting what the indexer did not yet hold.
type lookingRecorder struct {
	recorder
	indexer toolscache.Indexer
	stale   []string
}

func (r *lookingRecorder) check(obj any, wantHeld bool) {
	if unknown, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = unknown.Obj
	}
	held, exists, _ := r.indexer.Get(obj)
	if exists != wantHeld || exists && rv(held.(runtime.Object)) != rv(obj.(runtime.Object)) {
		r.mu.Lock()
		r.stale = append(r.stale, obj.(metav1.Object).GetName())
		r.mu.Unlock()
	}
}

func (r *lookingRecorder) OnAdd(obj any, initial bool) {
	r.check(obj, true)
	r.recorder.OnAdd(obj, initial)
}

func (r *lookingRecorder) OnUpdate(old, new any) {
	r.check(new, true)
	r.recorder.OnUpdate(old, new)
}

func (r *lookingRecorder) OnDelete(obj any) {
	r.check(obj, false)
	r.recorder.OnDelete(obj)
}

func configMap(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: rv}}
}

func runInformer(t *testing.T, p *pipeline.Pipeline, resync time.Duration) *informer {
	t.Helper()
	inf := newInformer(newListWatch(p.Registry(), &corev1.ConfigMap{}, nil), &corev1.ConfigMap{}, resync,
		toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return inf
}

func create(t *testing.T, p *pipeline.Pipeline, name string) runtime.Object {
	t.Helper()
	obj, err := p.CreateObject(context.Background(), configMap(name, ""), "test")
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func configMaps(p *pipeline.Pipeline) *registry.Store {
	return p.Registry().Snapshot().Backend(corev1.Resource("configmaps")).Storage()
}

func update(t *testing.T, p *pipeline.Pipeline, name string) runtime.Object {
	t.Helper()
	obj, err := p.Update(context.Background(), configMaps(p), "default", name, pipeline.Options{}, func(obj runtime.Object) (runtime.Object, error) {
		cm := obj.(*corev1.ConfigMap).DeepCopy()
		cm.Data = map[string]string{"n": cm.ResourceVersion}
		return cm, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func remove(t *testing.T, p *pipeline.Pipeline, name string) {
	t.Helper()
	if _, _, err := p.Delete(context.Background(), configMaps(p), "default", name, &metav1.DeleteOptions{}, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
}

func rv(obj runtime.Object) string { return obj.(metav1.Object).GetResourceVersion() }

// TestHandlersSeeWhatClientGosSee: a handler registered before the
// informer runs gets the state as adds in the initial list, and its
// registration syncs once it has taken them; then the changes, in order;
// a handler joining later gets the objects held as initial adds first,
// then only what comes after.
func TestHandlersSeeWhatClientGosSee(t *testing.T) {
	p := pipelinetest.New(t, cache.Options{})
	a := create(t, p, "a")
	inf := newInformer(newListWatch(p.Registry(), &corev1.ConfigMap{}, nil), &corev1.ConfigMap{}, 0, nil)
	early := &recorder{}
	earlyReg, err := inf.AddEventHandler(early)
	if err != nil {
		t.Fatal(err)
	}
	if earlyReg.HasSynced() || inf.HasSynced() {
		t.Fatal("synced before running")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	select {
	case <-earlyReg.HasSyncedChecker().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the registration did not sync")
	}
	if got := early.seen(); !slices.Equal(got, []string{"add a initial"}) {
		t.Fatalf("synced having seen %q", got)
	}

	create(t, p, "b")
	a2 := update(t, p, "a")
	early.waitFor(t, 0, "add a initial", "add b", "update a "+rv(a)+"->"+rv(a2))
	late := &recorder{}
	lateReg, err := inf.AddEventHandler(late)
	if err != nil {
		t.Fatal(err)
	}
	remove(t, p, "b")
	late.waitFor(t, 2, "add a initial", "add b initial", "delete b")
	if !lateReg.HasSynced() {
		t.Error("the late registration has not synced after its initial adds")
	}

	if err := inf.RemoveEventHandler(earlyReg); err != nil {
		t.Fatal(err)
	}
	select {
	case <-earlyReg.(*handler).ShutdownChan():
	case <-time.After(10 * time.Second):
		t.Fatal("a removed handler did not shut down")
	}
	before := len(early.seen())
	create(t, p, "c")
	late.waitFor(t, 2, "add a initial", "add b initial", "delete b", "add c")
	if after := len(early.seen()); after != before {
		t.Errorf("a removed handler was told %q", early.seen()[before:])
	}
	cancel()
	<-done
	if !inf.IsStopped() {
		t.Error("the informer is not stopped after its context ended")
	}
	if _, err := inf.AddEventHandler(&recorder{}); err == nil {
		t.Error("a stopped informer took a handler")
	}
}

// TestResyncsFollowClientGosRules: a handler asking for a resync period
// shorter than the informer's default, before it runs, lowers the check
// period to its own and is told every object held as an update from
// itself to itself each period; a handler asking for none is not. With a
// default of 0 (kube-scheduler's factory's), no handler resyncs, whatever
// it asks for, as with client-go's informer.
func TestResyncsFollowClientGosRules(t *testing.T) {
	p := pipelinetest.New(t, cache.Options{})
	a := create(t, p, "a")
	inf := newInformer(newListWatch(p.Registry(), &corev1.ConfigMap{}, nil), &corev1.ConfigMap{}, time.Hour, nil)
	quiet, resyncing := &recorder{}, &recorder{}
	if _, err := inf.AddEventHandlerWithResyncPeriod(quiet, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := inf.AddEventHandlerWithResyncPeriod(resyncing, time.Second); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	same := "update a " + rv(a) + "->" + rv(a)
	resyncing.waitFor(t, 0, "add a initial", same)
	resyncing.waitFor(t, 0, "add a initial", same, same)
	if got := quiet.seen(); !slices.Equal(got, []string{"add a initial"}) {
		t.Errorf("a handler asking for no resync saw %q", got)
	}
	late := &recorder{}
	reg, err := inf.AddEventHandlerWithResyncPeriod(late, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if got := reg.(*handler).resync; got != time.Second {
		t.Errorf("a handler joining a running informer with a shorter period got %v, want the check period 1s", got)
	}

	never := newInformer(nil, &corev1.ConfigMap{}, 0, nil)
	reg, err = never.AddEventHandlerWithResyncPeriod(&recorder{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := reg.(*handler).resync; got != 0 || never.resyncCheckPeriod() != 0 {
		t.Errorf("with a default of 0 a handler got a resync of %v, the informer a check period of %v", got, never.resyncCheckPeriod())
	}
}

// TestRelistTellsWhatChanged: a list that replaces the indexer's objects
// (after the informer's revision left the cache's window) tells, once the
// indexer holds the list, an object gone as a deletion whose final state
// is unknown, first, then an object that changed as an update, a new one
// as an add (not in the initial list), and an unchanged one as an update
// to itself, as client-go's informer does for the handlers resyncing
// (every handler, while it has none due).
func TestRelistTellsWhatChanged(t *testing.T) {
	inf := newInformer(nil, &corev1.ConfigMap{}, 0, nil)
	h := &lookingRecorder{indexer: inf.GetIndexer()}
	if _, err := inf.AddEventHandler(h); err != nil {
		t.Fatal(err)
	}
	inf.replace([]runtime.Object{configMap("same", "1"), configMap("changed", "2"), configMap("gone", "3")}, 3)
	h.waitFor(t, 3, "add same initial", "add changed initial", "add gone initial")
	inf.replace([]runtime.Object{configMap("same", "1"), configMap("changed", "4"), configMap("new", "5")}, 5)
	h.waitFor(t, 3, "add same initial", "add changed initial", "add gone initial",
		"delete gone unknown", "update same 1->1", "update changed 2->4", "add new")
	if len(h.stale) > 0 {
		t.Errorf("handlers were told before the indexer held the list: %q", h.stale)
	}
	if keys := inf.GetStore().ListKeys(); len(keys) != 3 || inf.LastSyncResourceVersion() != "5" {
		t.Errorf("after the relist the indexer holds %q at %q", keys, inf.LastSyncResourceVersion())
	}
}

// TestAnInformerTooSlowForTheCacheResumes: while the informer cannot take
// the cache's events, the cache ends its watch as too slow; the informer
// resumes from the last revision it applied and misses nothing.
func TestAnInformerTooSlowForTheCacheResumes(t *testing.T) {
	p := pipelinetest.New(t, cache.Options{})
	inf := runInformer(t, p, 0)
	h := &recorder{}
	reg, err := inf.AddEventHandler(h)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-reg.HasSyncedChecker().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the registration did not sync")
	}
	const n = 600 // more than a cache watcher may lag behind
	var want []string
	inf.mu.Lock() // the informer cannot apply what it takes
	for i := range n {
		name := fmt.Sprintf("cm-%03d", i)
		create(t, p, name)
		want = append(want, "add "+name)
	}
	inf.mu.Unlock()
	h.waitFor(t, 0, want...)
	if got := len(inf.GetStore().ListKeys()); got != n {
		t.Errorf("the indexer holds %d objects, want %d", got, n)
	}
}

// TestAQuietInformersVersionMovesOn: an informer whose objects do not
// change still moves its resource version on with the cache's bookmarks,
// as a reflector does: the storage version migrator waits for the garbage
// collector's informers to pass the version of its list.
func TestAQuietInformersVersionMovesOn(t *testing.T) {
	p := pipelinetest.New(t, cache.Options{BookmarkInterval: 20 * time.Millisecond})
	create(t, p, "a")
	inf := runInformer(t, p, 0)
	eventually := time.Now().Add(10 * time.Second)
	for !inf.HasSynced() && time.Now().Before(eventually) {
		time.Sleep(5 * time.Millisecond)
	}
	secret, err := p.CreateObject(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := strconv.ParseInt(rv(secret), 10, 64)
	for got, _ := strconv.ParseInt(inf.LastSyncResourceVersion(), 10, 64); got < want; got, _ = strconv.ParseInt(inf.LastSyncResourceVersion(), 10, 64) {
		if time.Now().After(eventually) {
			t.Fatalf("the informer stayed at %s; the store is at %d", inf.LastSyncResourceVersion(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
