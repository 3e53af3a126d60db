package builtin

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kstorage "k8s.io/apiserver/pkg/storage"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	apipod "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	kubefeatures "k8s.io/kubernetes/pkg/features"

	"github.com/kapi-dev/kapi/internal/pipeline"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// binder assigns pods to nodes through the write pipeline.
type binder struct{ p *pipeline.Pipeline }

// bindPod assigns a pod to a node, as the scheduler does through
// POST .../bindings: the pod gets spec.nodeName and a PodScheduled
// condition. As kube's binding storage: the binding is validated (a bare
// 500, as kube answers its errors), its UID and resourceVersion are
// preconditions on the pod, and a pod being deleted, already bound or
// still gated is a conflict.
func (b *binder) bindPod(ctx context.Context, namespace string, obj runtime.Object, dry bool) error {
	binding := obj.(*corev1.Binding)
	if err := validateBinding(binding); err != nil {
		return err
	}
	if binding.Name == "" { // kube's storage makes no key of it, after validation
		return apierrors.NewBadRequest("Name parameter required.")
	}
	store := b.p.Registry().Snapshot().Lookup(podsGVR)
	gr := schema.GroupResource{Resource: "pods/binding"}
	preconditions := &kstorage.Preconditions{}
	if binding.UID != "" {
		preconditions.UID = &binding.UID
	}
	if binding.ResourceVersion != "" {
		preconditions.ResourceVersion = &binding.ResourceVersion
	}
	bind := func(current runtime.Object) (runtime.Object, error) {
		pod := current.(*corev1.Pod)
		if err := preconditions.Check(store.PreconditionKey(pod.Namespace, pod.Name, dry), pod); err != nil {
			return nil, apierrors.NewConflict(store.GroupResource(), pod.Name, err)
		}
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(gr, binding.Name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(gr, binding.Name, fmt.Errorf("pod %s is already assigned to node %q", pod.Name, pod.Spec.NodeName))
		}
		if len(pod.Spec.SchedulingGates) != 0 {
			return nil, apierrors.NewConflict(gr, binding.Name, fmt.Errorf("pod %s has non-empty .spec.schedulingGates", pod.Name))
		}
		pod.Spec.NodeName = binding.Target.Name
		if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.ClearingNominatedNodeNameAfterBinding) {
			pod.Status.NominatedNodeName = "" // a stale hint once bound
		}
		copyBindingMetadata(pod, binding)
		setPodScheduled(pod)
		return pod, nil
	}
	_, err := b.p.Update(ctx, store, namespace, binding.Name, pipeline.Options{DryRun: dry, Subresource: "binding", Unadmitted: true}, bind)
	return err
}

// copyBindingMetadata copies the binding's annotations onto the pod, as
// kube's binding storage does (which then drops the legacy init container
// annotations the pod strategy would), and its labels over the pod's (the
// topology labels PodTopologyLabels admission puts on a binding).
func copyBindingMetadata(pod *corev1.Pod, binding *corev1.Binding) {
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	maps.Copy(pod.Annotations, binding.Annotations)
	apipod.DropInitContainerAnnotations(pod.Annotations)
	if len(binding.Labels) > 0 && utilfeature.DefaultFeatureGate.Enabled(kubefeatures.PodTopologyLabelsAdmission) {
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		maps.Copy(pod.Labels, binding.Labels)
	}
}

// bindPodIgnoringUID is the binding of the legacy bindings resource,
// whose binding's UID kube-apiserver does not hold the pod to.
func (b *binder) bindPodIgnoringUID(ctx context.Context, namespace string, obj runtime.Object, dry bool) error {
	obj.(*corev1.Binding).UID = ""
	return b.bindPod(ctx, namespace, obj, dry)
}

// validateBinding is kube's validation of a binding, on its internal form.
func validateBinding(binding *corev1.Binding) error {
	internal := &core.Binding{}
	if err := legacyscheme.Scheme.Convert(binding, internal, nil); err != nil {
		return apierrors.NewInternalError(err)
	}
	if errs := corevalidation.ValidatePodBinding(internal); len(errs) > 0 {
		return errs.ToAggregate()
	}
	return nil
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
