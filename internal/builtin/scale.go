package builtin

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/internal/registry"
)

// The scale sub-resources of the built-in workloads
// (Deployments, ReplicaSets, StatefulSets, ReplicationControllers): their
// spec.replicas as an autoscaling/v1 Scale, with status.replicas and the
// selector rendered as a string.
var (
	deploymentScale  = workloadScale("apps/v1beta1", "apps/v1beta2", "apps/v1")
	replicaSetScale  = workloadScale("apps/v1beta2", "apps/v1")
	statefulSetScale = workloadScale("apps/v1beta1", "apps/v1beta2", "apps/v1")
	controllerScale  = workloadScale("v1")
)

// workloadScale is a workload's scale, whose replicas are spec.replicas
// in every version listed (kube's mappings of each workload's storage).
func workloadScale(versions ...string) *registry.Scale {
	paths := managedfields.ResourcePathMappings{}
	for _, v := range versions {
		paths[v] = fieldpath.MakePathOrDie("spec", "replicas")
	}
	return &registry.Scale{Of: scaleOf, WithReplicas: withReplicas, ReplicasPaths: paths}
}

// scaleOf describes a workload's replicas as a Scale.
func scaleOf(obj runtime.Object) (*autoscalingv1.Scale, error) {
	var m metav1.ObjectMeta
	var spec *int32
	var status int32
	var selector string
	switch o := obj.(type) {
	case *appsv1.Deployment:
		m, spec, status, selector = o.ObjectMeta, o.Spec.Replicas, o.Status.Replicas, labelSelector(o.Spec.Selector)
	case *appsv1.ReplicaSet:
		m, spec, status, selector = o.ObjectMeta, o.Spec.Replicas, o.Status.Replicas, labelSelector(o.Spec.Selector)
	case *appsv1.StatefulSet:
		m, spec, status, selector = o.ObjectMeta, o.Spec.Replicas, o.Status.Replicas, labelSelector(o.Spec.Selector)
	case *corev1.ReplicationController:
		m, spec, status, selector = o.ObjectMeta, o.Spec.Replicas, o.Status.Replicas, labels.SelectorFromSet(o.Spec.Selector).String()
	default:
		return nil, fmt.Errorf("%T has no scale", obj)
	}
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name: m.Name, Namespace: m.Namespace, UID: m.UID,
			ResourceVersion: m.ResourceVersion, CreationTimestamp: m.CreationTimestamp,
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: ptr.Deref(spec, 1)}, // 1: the default
		Status: autoscalingv1.ScaleStatus{Replicas: status, Selector: selector},
	}, nil
}

// labelSelector renders a workload's selector as a Scale's status does; a
// selector that does not parse renders as nothing.
func labelSelector(s *metav1.LabelSelector) string {
	if s == nil {
		return ""
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return ""
	}
	return sel.String()
}

// withReplicas returns a copy of a workload that asks for replicas.
func withReplicas(obj runtime.Object, replicas int32) (runtime.Object, error) {
	out := obj.DeepCopyObject()
	switch o := out.(type) {
	case *appsv1.Deployment:
		o.Spec.Replicas = &replicas
	case *appsv1.ReplicaSet:
		o.Spec.Replicas = &replicas
	case *appsv1.StatefulSet:
		o.Spec.Replicas = &replicas
	case *corev1.ReplicationController:
		o.Spec.Replicas = &replicas
	default:
		return nil, fmt.Errorf("%T has no scale", obj)
	}
	return out, nil
}
