package builtin

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/pipeline"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// binder assigns pods to nodes through the write pipeline.
type binder struct{ p *pipeline.Pipeline }

// bindPod assigns a pod to a node, as the scheduler does through
// POST .../bindings: the pod gets spec.nodeName and a PodScheduled
// condition, and a pod already bound is a conflict.
func (b *binder) bindPod(ctx context.Context, namespace string, obj runtime.Object, dry bool) error {
	binding := obj.(*corev1.Binding)
	gr := schema.GroupResource{Resource: "pods/binding"}
	if binding.Target.Kind != "" && binding.Target.Kind != "Node" {
		return apierrors.NewInvalid(schema.GroupKind{Kind: "Binding"}, binding.Name, nil)
	}
	if binding.Target.Name == "" {
		return apierrors.NewBadRequest("target.name is required")
	}
	bind := func(current runtime.Object) (runtime.Object, error) {
		pod := current.(*corev1.Pod)
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(gr, binding.Name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(gr, binding.Name, fmt.Errorf("pod %s is already assigned to node %q", pod.Name, pod.Spec.NodeName))
		}
		pod.Spec.NodeName = binding.Target.Name
		for k, v := range binding.Annotations {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[k] = v
		}
		setPodScheduled(pod)
		return pod, nil
	}
	store := b.p.Registry().Snapshot().Lookup(podsGVR)
	_, err := b.p.Update(ctx, store, namespace, binding.Name, pipeline.Options{DryRun: dry, Subresource: "binding", Unadmitted: true}, bind)
	return err
}

func setPodScheduled(pod *corev1.Pod) {
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodScheduled {
			pod.Status.Conditions[i] = cond
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, cond)
}
