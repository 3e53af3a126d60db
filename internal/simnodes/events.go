package simnodes

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// The kubelet's event reasons and messages for what the simulation does
// to containers (its image manager's and runtime manager's, with the
// KubeletEnsureSecretPulledImages feature on as in 1.37).
const (
	reasonPulled  = "Pulled"
	reasonCreated = "Created"
	reasonStarted = "Started"
	reasonKilling = "Killing"
)

// kubeletEvents records events as the nodes' kubelets do: core/v1
// Events from the component kubelet on the node's host.
type kubeletEvents struct {
	broadcaster record.EventBroadcaster
}

func newKubeletEvents(events typedcorev1.EventsGetter) *kubeletEvents {
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: events.Events("")})
	return &kubeletEvents{broadcaster: b}
}

func (e *kubeletEvents) shutdown() { e.broadcaster.Shutdown() }

// started records a pod's containers being started.
func (e *kubeletEvents) started(pod *corev1.Pod) {
	recorder := e.recorderFor(pod.Spec.NodeName)
	each := func(containers []corev1.Container, field string) {
		for _, c := range containers {
			ref := containerRef(pod, field, c.Name)
			recorder.Eventf(ref, corev1.EventTypeNormal, reasonPulled, "Container image %q already present on machine and can be accessed by the pod", c.Image)
			recorder.Event(ref, corev1.EventTypeNormal, reasonCreated, "Container created")
			recorder.Event(ref, corev1.EventTypeNormal, reasonStarted, "Container started")
		}
	}
	each(pod.Spec.InitContainers, "initContainers")
	each(pod.Spec.Containers, "containers")
}

// stopping records a deleted pod's running containers being stopped.
func (e *kubeletEvents) stopping(pod *corev1.Pod) {
	if pod.Status.Phase != corev1.PodRunning {
		return
	}
	recorder := e.recorderFor(pod.Spec.NodeName)
	for _, c := range pod.Spec.Containers {
		recorder.Eventf(containerRef(pod, "containers", c.Name), corev1.EventTypeNormal, reasonKilling, "Stopping container %s", c.Name)
	}
}

func (e *kubeletEvents) recorderFor(node string) record.EventRecorder {
	return e.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: node})
}

// containerRef is how the kubelet names a container in its events.
func containerRef(pod *corev1.Pod, field, container string) *corev1.ObjectReference {
	return &corev1.ObjectReference{
		Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
		ResourceVersion: pod.ResourceVersion, FieldPath: fmt.Sprintf("spec.%s{%s}", field, container),
	}
}
