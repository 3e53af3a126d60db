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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
