package cacheinformers_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/cacheinformers"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/pipeline/pipelinetest"
)

var configmaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// startFactory starts f's informers and waits for them to sync.
func startFactory(t *testing.T, f informers.SharedInformerFactory) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(f.Shutdown)
	t.Cleanup(cancel) // first: it stops the informers Shutdown waits for
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("the %v informer did not sync", typ)
		}
	}
}

func cachedObject(p *pipeline.Pipeline, gr schema.GroupResource, namespace, name string) runtime.Object {
	b := p.Registry().Snapshot().Backend(gr)
	return b.Cache.Get(b.Storage().Key(namespace, name))
}

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestTypedInformersHoldTheCachesObjects: a typed informer of a type a
// watch cache holds lists and watches that cache and holds its objects
// themselves, through creates, updates and deletes; ForResource gives the
// same informer.
func TestTypedInformersHoldTheCachesObjects(t *testing.T) {
	p := pipelinetest.New(t, cache.Options{})
	ctx := context.Background()
	if _, err := p.CreateObject(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before", Namespace: "default"}}, "test"); err != nil {
		t.Fatal(err)
	}
	f := cacheinformers.New(informers.NewSharedInformerFactory(fake.NewClientset(), 0), p.Registry())
	typed := f.Core().V1().ConfigMaps()
	generic, err := f.ForResource(configmaps)
	if err != nil {
		t.Fatal(err)
	}
	if generic.Informer().GetIndexer() != typed.Informer().GetIndexer() {
		t.Fatal("ForResource made a second informer of configmaps")
	}
	startFactory(t, f)

	gr := configmaps.GroupResource()
	holds := func(name string) bool {
		held, err := typed.Lister().ConfigMaps("default").Get(name)
		return err == nil && runtime.Object(held) == cachedObject(p, gr, "default", name)
	}
	if !holds("before") {
		t.Fatal("the informer's first list did not hand over the cache's object")
	}
	store := p.Registry().Snapshot().Lookup(configmaps)
	created, err := p.CreateObject(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after", Namespace: "default"}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the created object", func() bool { return holds("after") })
	updated := created.(*corev1.ConfigMap).DeepCopy()
	updated.Data = map[string]string{"k": "v"}
	if _, err := p.UpdateObject(ctx, store, updated, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the updated object", func() bool {
		held, err := typed.Lister().ConfigMaps("default").Get("after")
		return err == nil && held.Data["k"] == "v" && holds("after")
	})
	if _, _, err := p.Delete(ctx, store, "default", "after", nil, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deletion", func() bool {
		_, err := typed.Lister().ConfigMaps("default").Get("after")
		return apierrors.IsNotFound(err)
	})
	if got, err := generic.Lister().ByNamespace("default").Get("before"); err != nil || got != cachedObject(p, gr, "default", "before") {
		t.Errorf("the generic lister gave %p, %v", got, err)
	}
}

// TestOtherInformersAreTheWrappedFactorys: an informer whose caller gives
// its own constructor, and one of a type no cache holds on its own (an
// events.k8s.io Event is stored as a core Event), come from the wrapped
// factory's client.
func TestOtherInformersAreTheWrappedFactorys(t *testing.T) {
	p := pipelinetest.New(t, cache.Options{})
	client := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "from-client", Namespace: "default"}},
		&eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "from-client", Namespace: "default"}},
	)
	f := cacheinformers.New(informers.NewSharedInformerFactory(client, 0), p.Registry())
	called := false
	secrets := f.InformerFor(&corev1.Secret{}, func(c kubernetes.Interface, resync time.Duration) toolscache.SharedIndexInformer {
		called = true
		return informers.NewSharedInformerFactory(c, resync).Core().V1().Secrets().Informer()
	})
	if !called {
		t.Fatal("InformerFor did not use its caller's constructor")
	}
	events := f.Events().V1().Events()
	events.Informer() // registered before the factory starts
	startFactory(t, f)
	if _, ok, _ := secrets.GetIndexer().GetByKey("default/from-client"); !ok {
		t.Error("the secrets informer does not hold the client's secret")
	}
	if _, err := events.Lister().Events("default").Get("from-client"); err != nil {
		t.Errorf("the events.k8s.io informer does not hold the client's event: %v", err)
	}
}

// TestWatchSemantics: the informers' list and watch answer as a list and
// a watch over the API: a streaming list ends with the initial-events-end
// bookmark at the state's revision, a watch from a revision replays what
// came after it, and one from before the window ends with 410 Expired.
func TestWatchSemantics(t *testing.T) {
	p := pipelinetest.New(t, cache.Options{Window: time.Nanosecond})
	ctx := context.Background()
	first, err := p.CreateObject(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	lw := cacheinformers.ListerWatcher(p.Registry(), &corev1.ConfigMap{}, nil)
	if lw == nil {
		t.Fatal("no lister-watcher of configmaps")
	}

	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{SendInitialEvents: ptrTo(true), AllowWatchBookmarks: true, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if err != nil {
		t.Fatal(err)
	}
	added := next(t, w)
	if added.Type != watch.Added || added.Object != cachedObject(p, configmaps.GroupResource(), "default", "a") {
		t.Fatalf("first event %s %T, want ADDED of the cache's object", added.Type, added.Object)
	}
	end := next(t, w)
	m, _ := meta.Accessor(end.Object)
	if end.Type != watch.Bookmark || m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" || m.GetResourceVersion() != first.(metav1.Object).GetResourceVersion() {
		t.Fatalf("after the initial events: %s with %v at %s", end.Type, m.GetAnnotations(), m.GetResourceVersion())
	}
	second, err := p.CreateObject(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default"}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != watch.Added || ev.Object != cachedObject(p, configmaps.GroupResource(), "default", "b") {
		t.Fatalf("live event %s %v, want ADDED of b", ev.Type, ev.Object)
	}
	w.Stop()
	if _, open := <-w.ResultChan(); open {
		t.Error("the result channel stayed open after Stop")
	}

	list, err := lw.ListWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if items := list.(*corev1.ConfigMapList).Items; len(items) != 2 || list.(*corev1.ConfigMapList).ResourceVersion != second.(metav1.Object).GetResourceVersion() {
		t.Errorf("list: %d items at %s", len(items), list.(*corev1.ConfigMapList).ResourceVersion)
	}

	// The window is a nanosecond: the first revision has left it.
	time.Sleep(10 * time.Millisecond)
	if _, err := p.CreateObject(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"}}, "test"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the cache to trim its window", func() bool {
		w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "1"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ev := next(t, w)
		if ev.Type != watch.Error {
			return false
		}
		if status := apierrors.FromObject(ev.Object); apierrors.IsResourceExpired(status) || apierrors.IsGone(status) {
			return true
		}
		t.Fatalf("a watch from before the window got %v", apierrors.FromObject(ev.Object))
		return false
	})
}

func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("the watch ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event in 10 s")
	}
	return watch.Event{}
}

func ptrTo[T any](v T) *T { return &v }

// TestInformerWithOptionsSelects: an informer registered with a selector
// holds the objects it selects, drops one that stops matching, and is the
// one the typed accessor then finds.
func TestInformerWithOptionsSelects(t *testing.T) {
	p := pipelinetest.New(t, cache.Options{})
	ctx := context.Background()
	store := p.Registry().Snapshot().Lookup(configmaps)
	for _, name := range []string{"kept", "left-out"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"keep": strconv.FormatBool(name == "kept")}}}
		if _, err := p.CreateObject(ctx, cm, "test"); err != nil {
			t.Fatal(err)
		}
	}
	f := cacheinformers.New(informers.NewSharedInformerFactory(fake.NewClientset(), 0), p.Registry())
	selected := f.InformerWithOptions(&corev1.ConfigMap{}, internalinterfaces.InformerOptions{
		Indexers:         toolscache.Indexers{},
		TweakListOptions: func(opts *metav1.ListOptions) { opts.LabelSelector = "keep=true" },
	})
	if f.Core().V1().ConfigMaps().Informer().GetIndexer() != selected.GetIndexer() {
		t.Fatal("the typed accessor made a second informer")
	}
	startFactory(t, f)
	if keys := selected.GetStore().ListKeys(); !slices.Equal(keys, []string{"default/kept"}) {
		t.Fatalf("the informer holds %v", keys)
	}
	kept, _, _ := selected.GetIndexer().GetByKey("default/kept")
	changed := kept.(*corev1.ConfigMap).DeepCopy()
	changed.Labels["keep"] = "false"
	if _, err := p.UpdateObject(ctx, store, changed, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the object that stopped matching to go", func() bool { return len(selected.GetStore().ListKeys()) == 0 })
	if f.InformerWithOptions(&eventsv1.Event{}, internalinterfaces.InformerOptions{}) != nil {
		t.Error("an informer of a type no cache holds on its own came back")
	}
}

// TestWatchFromNowhereStartsWithTheState: a watch from "" or "0" that
// says nothing of initial events starts with the current objects, as
// kube-apiserver defaults it.
func TestWatchFromNowhereStartsWithTheState(t *testing.T) {
	p := pipelinetest.New(t, cache.Options{})
	ctx := context.Background()
	if _, err := p.CreateObject(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"}}, "test"); err != nil {
		t.Fatal(err)
	}
	lw := cacheinformers.ListerWatcher(p.Registry(), &corev1.ConfigMap{}, nil)
	for _, rv := range []string{"", "0"} {
		w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			t.Fatal(err)
		}
		if ev := next(t, w); ev.Type != watch.Added || ev.Object != cachedObject(p, configmaps.GroupResource(), "default", "a") {
			t.Errorf("a watch from %q began with %s %T", rv, ev.Type, ev.Object)
		}
		w.Stop()
	}
}
