package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// typedClient is what kapi-load uses of a client-go typed client of one
// namespaced resource (T the object, L its list).
type typedClient[T, L any] interface {
	Create(context.Context, *T, metav1.CreateOptions) (*T, error)
	Get(context.Context, string, metav1.GetOptions) (*T, error)
	Update(context.Context, *T, metav1.UpdateOptions) (*T, error)
	List(context.Context, metav1.ListOptions) (*L, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
	DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error
}

// workload is one resource's objects and the operations on them, through
// a protobuf client (writes, gets, informers) or either content type
// (lists, watches).
type workload struct {
	resource string
	create   func(ctx context.Context, i int) error
	get      func(ctx context.Context, i int) error
	update   func(ctx context.Context, i int) error
	// list reads one page and returns its continue token.
	list      func(ctx context.Context, cs kubernetes.Interface, opts metav1.ListOptions) (next string, err error)
	watch     func(ctx context.Context, cs kubernetes.Interface, opts metav1.ListOptions) (watch.Interface, error)
	deleteAll func(ctx context.Context) error
	informer  func(informers.SharedInformerFactory) cache.SharedIndexInformer
}

// newWorkload makes a workload of n objects built by build; touch changes
// an object for an update, given a number no update used before (an
// update that changes nothing writes nothing and makes no event); next
// reads a list's continue token. Every object gets the label
// selected=true or false (one in ten true), for selected lists.
func newWorkload[T, L any](resource string, n int, client func(kubernetes.Interface) typedClient[T, L], cs kubernetes.Interface,
	build func(i int) *T, touch func(obj *T, i int), meta func(*T) metav1.Object, next func(*L) string,
	informer func(informers.SharedInformerFactory) cache.SharedIndexInformer) *workload {
	objects := make([]*T, n)
	var updates atomic.Int64
	var mu sync.Mutex
	at := func(i int) *T {
		mu.Lock()
		defer mu.Unlock()
		return objects[i]
	}
	set := func(i int, obj *T) {
		mu.Lock()
		defer mu.Unlock()
		objects[i] = obj
	}
	return &workload{
		resource: resource,
		create: func(ctx context.Context, i int) error {
			obj := build(i)
			labels := meta(obj).GetLabels()
			labels["selected"] = fmt.Sprint(i%10 == 0)
			meta(obj).SetLabels(labels)
			created, err := client(cs).Create(ctx, obj, metav1.CreateOptions{})
			if err == nil {
				set(i, created)
			}
			return err
		},
		get: func(ctx context.Context, i int) error {
			_, err := client(cs).Get(ctx, objectName(i), metav1.GetOptions{})
			return err
		},
		update: func(ctx context.Context, i int) error {
			obj := at(i)
			if obj == nil {
				return fmt.Errorf("%s %d was not created", resource, i)
			}
			// Another writer (a controller) may have changed the object:
			// then the update starts again from the current state, as
			// clients' retry.RetryOnConflict does.
			for attempt := 0; ; attempt++ {
				touch(obj, int(updates.Add(1)))
				updated, err := client(cs).Update(ctx, obj, metav1.UpdateOptions{})
				if err == nil {
					set(i, updated)
					return nil
				}
				if !apierrors.IsConflict(err) || attempt == 4 {
					return err
				}
				if obj, err = client(cs).Get(ctx, objectName(i), metav1.GetOptions{}); err != nil {
					return err
				}
			}
		},
		list: func(ctx context.Context, cs kubernetes.Interface, opts metav1.ListOptions) (string, error) {
			l, err := client(cs).List(ctx, opts)
			if err != nil {
				return "", err
			}
			return next(l), nil
		},
		watch: func(ctx context.Context, cs kubernetes.Interface, opts metav1.ListOptions) (watch.Interface, error) {
			return client(cs).Watch(ctx, opts)
		},
		deleteAll: func(ctx context.Context) error {
			return client(cs).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		},
		informer: informer,
	}
}

func objectName(i int) string { return fmt.Sprintf("obj-%06d", i) }

// configMaps are ConfigMaps of about 1.1 KB in JSON.
func configMaps(ns string, n int, cs kubernetes.Interface) *workload {
	return newWorkload("configmaps", n,
		func(cs kubernetes.Interface) typedClient[corev1.ConfigMap, corev1.ConfigMapList] {
			return cs.CoreV1().ConfigMaps(ns)
		}, cs,
		func(i int) *corev1.ConfigMap {
			return &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: objectName(i), Labels: map[string]string{"app": "kapi-load"}},
				Data:       map[string]string{"payload": strings.Repeat(fmt.Sprintf("%08d", i), 112)},
			}
		},
		func(cm *corev1.ConfigMap, i int) { cm.Data["generation"] = fmt.Sprint(i) },
		func(cm *corev1.ConfigMap) metav1.Object { return cm },
		func(l *corev1.ConfigMapList) string { return l.Continue },
		func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ConfigMaps().Informer()
		},
	)
}

// pods are Pods of about 2.3 KB in JSON, as a Deployment's: two
// containers with ports, environment, resources, probes and mounts.
func pods(ns string, n int, cs kubernetes.Interface) *workload {
	return newWorkload("pods", n,
		func(cs kubernetes.Interface) typedClient[corev1.Pod, corev1.PodList] { return cs.CoreV1().Pods(ns) }, cs,
		buildPod,
		func(p *corev1.Pod, i int) {
			if p.Annotations == nil {
				p.Annotations = map[string]string{}
			}
			p.Annotations["kapi-load/generation"] = fmt.Sprint(i)
		},
		func(p *corev1.Pod) metav1.Object { return p },
		func(l *corev1.PodList) string { return l.Continue },
		func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Pods().Informer()
		},
	)
}

func buildPod(i int) *corev1.Pod {
	container := func(name, image string, port int32) corev1.Container {
		return corev1.Container{
			Name: name, Image: image,
			Args:  []string{"--port", fmt.Sprint(port), "--log-level", "info"},
			Ports: []corev1.ContainerPort{{Name: name, ContainerPort: port, Protocol: corev1.ProtocolTCP}},
			Env: []corev1.EnvVar{
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
				{Name: "MODE", Value: "production"},
			},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(port)}}},
			VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/" + name}},
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        objectName(i),
			Labels:      map[string]string{"app": "kapi-load", "pod-template-hash": "5d8f7c9b6d", "tier": "backend"},
			Annotations: map[string]string{"kapi-load/description": strings.Repeat("x", 200)},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{container("server", "registry.example.com/team/server:v1.2.3", 8080), container("sidecar", "registry.example.com/team/sidecar:v0.9.1", 9090)},
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "server-config"}},
			}}},
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "load", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
}
