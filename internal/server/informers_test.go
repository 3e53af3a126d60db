package server

import (
	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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

// TestCachedPodsShareResourceLists: the pods' watch cache holds one map of
// equal resource lists (the pods' Share hook); a pod changed to ask for
// other resources gets its own, and the other pod keeps what it asked for.
func TestCachedPodsShareResourceLists(t *testing.T) {
	s := startServer(t, onlyLifecycle...)
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	requests := func(cpu string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("64Mi")}
	}
	for _, name := range []string{"a", "b"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "app", Resources: corev1.ResourceRequirements{Requests: requests("100m")},
		}}}}
		if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cachedRequests := func(name string, cpu string) corev1.ResourceList {
		t.Helper()
		backend := s.reg.Snapshot().Backend(schema.GroupResource{Resource: "pods"})
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			pod, _ := backend.Cache.Get(backend.Storage().Key("default", name)).(*corev1.Pod)
			if pod != nil {
				if got := pod.Spec.Containers[0].Resources.Requests; got.Cpu().Equal(resource.MustParse(cpu)) {
					return got
				}
			}
		}
		t.Fatalf("the cache has no pod %s asking for %s CPU", name, cpu)
		return nil
	}
	mapOf := func(l corev1.ResourceList) uintptr { return reflect.ValueOf(l).Pointer() }
	if a, b := cachedRequests("a", "100m"), cachedRequests("b", "100m"); mapOf(a) != mapOf(b) {
		t.Errorf("the cached pods hold two maps of one resource list")
	}
	// Resizing a running pod's resources goes through the resize
	// sub-resource; a pod's own spec cannot change them. Delete and create
	// one that asks for more instead.
	if err := client.CoreV1().Pods("default").Delete(ctx, "b", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	bigger := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: "app", Resources: corev1.ResourceRequirements{Requests: requests("200m")},
	}}}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, bigger, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if a, c := cachedRequests("a", "100m"), cachedRequests("c", "200m"); mapOf(a) == mapOf(c) {
		t.Errorf("pods asking for different resources share a map")
	}
	got, err := client.CoreV1().Pods("default").Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cpu := got.Spec.Containers[0].Resources.Requests.Cpu(); cpu.String() != "100m" {
		t.Errorf("pod a asks for %s CPU, want 100m", cpu)
	}
}

// The watch cache holds the equal parts of sibling pods (one template's)
// once, and an updated pod shares the parts its update left alone with
// its siblings; what clients read is each pod's own.
func TestCachedSiblingsShareTheirParts(t *testing.T) {
	s := startServer(t, onlyLifecycle...)
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	pods := client.CoreV1().Pods("default")
	for _, name := range []string{"a", "b"} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "server"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "app", Image: "app", Args: []string{"--port", "8080"},
				Env: []corev1.EnvVar{{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			}}},
		}
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	backend := s.reg.Snapshot().Backend(schema.GroupResource{Resource: "pods"})
	cached := func(name string, annotated bool) *corev1.Pod {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			pod, _ := backend.Cache.Get(backend.Storage().Key("default", name)).(*corev1.Pod)
			if pod != nil && (pod.Annotations["note"] != "") == annotated {
				return pod
			}
		}
		t.Fatalf("the cache has no pod %s (annotated: %v)", name, annotated)
		return nil
	}
	samePart := func(a, b any) bool { return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() }
	a, b := cached("a", false), cached("b", false)
	if !samePart(a.Labels, b.Labels) || !samePart(a.Spec.Containers[0].Args, b.Spec.Containers[0].Args) ||
		!samePart(a.Spec.Containers[0].Env, b.Spec.Containers[0].Env) {
		t.Errorf("the cached sibling pods hold their equal labels, arguments or environment twice")
	}
	if _, err := pods.Patch(ctx, "b", types.MergePatchType, []byte(`{"metadata":{"annotations":{"note":"changed"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	updated := cached("b", true)
	if !samePart(a.Spec.Containers[0].Env, updated.Spec.Containers[0].Env) {
		t.Errorf("the updated pod does not share its unchanged environment")
	}
	for _, name := range []string{"a", "b"} {
		got, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != name || got.Spec.Containers[0].Args[1] != "8080" || (got.Annotations["note"] == "changed") != (name == "b") {
			t.Errorf("pod %s reads as %s with arguments %q and annotations %v", name, got.Name, got.Spec.Containers[0].Args, got.Annotations)
		}
	}
}
