package server

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
)

// TestInformersShareCachedObjects: an informer made with the server's
// transform holds the watch cache's own objects, not copies; an object
// the cache has moved past is kept without its managed fields.
func TestInformersShareCachedObjects(t *testing.T) {
	s := startServer(t, onlyLifecycle...)
	ctx, cancel := context.WithCancel(context.Background())
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	created, err := client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Data: map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(informerTransform(s.reg)))
	lister := factory.Core().V1().ConfigMaps().Lister()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer cancel() // first: it stops the informers Shutdown waits for
	factory.WaitForCacheSync(ctx.Done())

	cached := func() runtime.Object {
		backend := s.reg.Snapshot().Backend(schema.GroupResource{Resource: "configmaps"})
		return backend.Cache.Get(backend.Storage().Key("default", "shared"))
	}
	var held *corev1.ConfigMap
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if held, err = lister.ConfigMaps("default").Get("shared"); err == nil {
			break
		}
	}
	if held == nil || runtime.Object(held) != cached() {
		t.Fatalf("the informer holds %p, not the watch cache's object %p", held, cached())
	}

	// A copy at an older version than the cache's is kept, trimmed.
	updated := created.DeepCopy()
	updated.Data["k"] = "w"
	if _, err := client.CoreV1().ConfigMaps("default").Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cm, _ := cached().(*corev1.ConfigMap); cm != nil && cm.Data["k"] == "w" {
			break
		}
	}
	stale := created.DeepCopy()
	out, err := informerTransform(s.reg)(stale)
	if err != nil {
		t.Fatal(err)
	}
	if out != any(stale) || stale.ManagedFields != nil {
		t.Fatalf("an older version came back as %p (the copy was %p) with managed fields %v", out, stale, stale.ManagedFields)
	}
}
