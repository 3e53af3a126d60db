package pipeline_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
)

// BenchmarkCreate measures a create through the whole pipeline (storage
// included) of a ConfigMap and a Pod, with kube's strategy (defaulting,
// conversion to the internal type and back, validation) and with the
// generic one, to show what exact validation costs per write.
func BenchmarkCreate(b *testing.B) {
	objects := map[string]func(i int) runtime.Object{
		"configmap": func(i int) runtime.Object {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", i), Namespace: "default"}, Data: map[string]string{"k": "v"}}
		},
		"pod": func(i int) runtime.Object {
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "default", Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}}}
		},
	}
	resources := map[string]schema.GroupVersionResource{"configmap": {Version: "v1", Resource: "configmaps"}, "pod": {Version: "v1", Resource: "pods"}}
	for _, kind := range []string{"configmap", "pod"} {
		for _, rules := range []string{"kube", "generic"} {
			b.Run(kind+"/"+rules, func(b *testing.B) {
				p := newPipeline(b, nil)
				store := p.Registry().Snapshot().Lookup(resources[kind])
				if rules == "generic" {
					backend := store.Backend()
					spec := registry.Spec{StorageVersion: backend.StorageVersion, Hooks: backend.Hooks}
					for _, s := range backend.Stores {
						spec.Versions = append(spec.Versions, s.Info)
					}
					if err := p.Registry().Put(spec); err != nil {
						b.Fatal(err)
					}
					if err := p.Registry().WaitReady(context.Background()); err != nil {
						b.Fatal(err)
					}
					store = p.Registry().Snapshot().Lookup(resources[kind])
				}
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					if _, err := p.Create(ctx, store, objects[kind](i), pipeline.Options{Manager: "bench"}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkUpdate measures an update of a Pod through the whole pipeline
// (storage included): a label changed each time, as a controller's update
// does.
func BenchmarkUpdate(b *testing.B) {
	p := newPipeline(b, nil)
	store := p.Registry().Snapshot().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}}}
	if _, err := p.Create(ctx, store, pod, pipeline.Options{Manager: "bench"}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		_, err := p.Update(ctx, store, "default", "p", pipeline.Options{Manager: "bench"}, func(current runtime.Object) (runtime.Object, error) {
			next := current.DeepCopyObject().(*corev1.Pod)
			next.Labels["round"] = fmt.Sprint(i)
			return next, nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
