package simnodes

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/kubernetes/pkg/kubelet/util/format"
)

// The kubelet's event reasons and messages for what the simulation does
// to containers (its image manager's and runtime manager's, with the
// KubeletEnsureSecretPulledImages feature on as in 1.37).
const (
	reasonPulled  = "Pulled"
	reasonCreated = "Created"
	reasonStarted = "Started"
	reasonKilling = "Killing"
	// reasonFailed and reasonFailedMount are the kubelet's warnings of a
	// container it cannot create and a volume it cannot mount.
	reasonFailed      = "Failed"
	reasonFailedMount = "FailedMount"
	// reasonDeadlineExceeded is the kubelet's note of a pod it ends past
	// its active deadline.
	reasonDeadlineExceeded = "DeadlineExceeded"
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

// started records the starting of the containers status has created
// that the pod's status had not: the kubelet pulls, creates and starts
// each.
func (e *kubeletEvents) started(pod *corev1.Pod, status *corev1.PodStatus) {
	recorder := e.recorderFor(pod.Spec.NodeName)
	each := func(containers []corev1.Container, statuses []corev1.ContainerStatus, field string) {
		for i, c := range containers {
			if i >= len(statuses) || statuses[i].State.Waiting != nil || created(previousState(pod, c.Name)) {
				continue
			}
			startedContainer(recorder, pod, field, c)
		}
	}
	each(pod.Spec.InitContainers, status.InitContainerStatuses, "initContainers")
	each(pod.Spec.Containers, status.ContainerStatuses, "containers")
}

// startedEphemeral records the starting of the ephemeral containers
// status has that the pod's status had not.
func (e *kubeletEvents) startedEphemeral(pod *corev1.Pod, status *corev1.PodStatus) {
	recorder := e.recorderFor(pod.Spec.NodeName)
	for _, ec := range pod.Spec.EphemeralContainers {
		had := slices.ContainsFunc(pod.Status.EphemeralContainerStatuses, func(st corev1.ContainerStatus) bool { return st.Name == ec.Name })
		has := slices.ContainsFunc(status.EphemeralContainerStatuses, func(st corev1.ContainerStatus) bool { return st.Name == ec.Name })
		if has && !had {
			startedContainer(recorder, pod, "ephemeralContainers", corev1.Container{Name: ec.Name, Image: ec.Image})
		}
	}
}

// startedContainer records the kubelet's start of one container.
func startedContainer(recorder record.EventRecorder, pod *corev1.Pod, field string, c corev1.Container) {
	ref := containerRef(pod, field, c.Name)
	pulled(recorder, ref, c.Image)
	recorder.Event(ref, corev1.EventTypeNormal, reasonCreated, "Container created")
	recorder.Event(ref, corev1.EventTypeNormal, reasonStarted, "Container started")
}

// pulled records the kubelet's finding a container's image on its node.
func pulled(recorder record.EventRecorder, ref *corev1.ObjectReference, image string) {
	recorder.Eventf(ref, corev1.EventTypeNormal, reasonPulled, "Container image %q already present on machine and can be accessed by the pod", image)
}

// restarted records the kubelet's restart of the pod's containers named.
func (e *kubeletEvents) restarted(pod *corev1.Pod, names []string) {
	recorder := e.recorderFor(pod.Spec.NodeName)
	for _, c := range pod.Spec.Containers {
		if slices.Contains(names, c.Name) {
			startedContainer(recorder, pod, "containers", c)
		}
	}
}

// backingOff records the kubelet's waiting to restart the pod's
// containers named.
func (e *kubeletEvents) backingOff(pod *corev1.Pod, names []string) {
	recorder := e.recorderFor(pod.Spec.NodeName)
	for _, name := range names {
		recorder.Eventf(containerRef(pod, "containers", name), corev1.EventTypeWarning, reasonBackOff,
			"Back-off restarting failed container %s in pod %s", name, format.Pod(pod))
	}
}

// created reports whether a container in state has been created.
func created(state corev1.ContainerState) bool {
	return state.Running != nil || state.Terminated != nil
}

// unconfigurable records, for each container whose environment cannot be
// made, the kubelet's pull of its image and its failure to create it.
func (e *kubeletEvents) unconfigurable(pod *corev1.Pod, blocked map[string]error) {
	recorder := e.recorderFor(pod.Spec.NodeName)
	each := func(containers []corev1.Container, field string) {
		for _, c := range containers {
			if err := blocked[c.Name]; err != nil {
				ref := containerRef(pod, field, c.Name)
				pulled(recorder, ref, c.Image)
				recorder.Eventf(ref, corev1.EventTypeWarning, reasonFailed, "Error: %v", err)
			}
		}
	}
	each(pod.Spec.InitContainers, "initContainers")
	each(pod.Spec.Containers, "containers")
}

// deadlineExceeded records the kubelet's ending of a pod active past its
// deadline.
func (e *kubeletEvents) deadlineExceeded(pod *corev1.Pod, message string) {
	e.recorderFor(pod.Spec.NodeName).Event(podRef(pod), corev1.EventTypeNormal, reasonDeadlineExceeded, message)
}

// failedMount records the kubelet's failure to set up a pod's volume.
func (e *kubeletEvents) failedMount(pod *corev1.Pod, volume string, err error) {
	e.recorderFor(pod.Spec.NodeName).Eventf(podRef(pod), corev1.EventTypeWarning, reasonFailedMount, "MountVolume.SetUp failed for volume %q : %v", volume, err)
}

// kubeletStarted records a node's kubelet starting, as the kubelet and its
// container manager do.
func (e *kubeletEvents) kubeletStarted(node *corev1.Node) {
	recorder := e.recorderFor(node.Name)
	recorder.Event(nodeRef(node), corev1.EventTypeNormal, "Starting", "Starting kubelet.")
	recorder.Event(nodeRef(node), corev1.EventTypeNormal, "NodeAllocatableEnforced", "Updated Node Allocatable limit across pods")
}

// nodeStatus records the kubelet's events of its node's conditions
// changing.
func (e *kubeletEvents) nodeStatus(node *corev1.Node, transitions []string) {
	recorder := e.recorderFor(node.Name)
	for _, event := range transitions {
		recorder.Eventf(nodeRef(node), corev1.EventTypeNormal, event, "Node %s status is now: %s", node.Name, event)
	}
}

// nodeRef is how the kubelet names its node in its events.
func nodeRef(node *corev1.Node) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}
}

// podRef is how the kubelet names a pod in its events.
func podRef(pod *corev1.Pod) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, ResourceVersion: pod.ResourceVersion}
}

// stopping records the kubelet's stopping of a pod's running containers,
// or of its running sidecars alone.
func (e *kubeletEvents) stopping(pod *corev1.Pod, sidecarsOnly bool) {
	recorder := e.recorderFor(pod.Spec.NodeName)
	kill := func(statuses []corev1.ContainerStatus, field string) {
		for _, st := range statuses {
			if st.State.Running != nil {
				recorder.Eventf(containerRef(pod, field, st.Name), corev1.EventTypeNormal, reasonKilling, "Stopping container %s", st.Name)
			}
		}
	}
	if !sidecarsOnly {
		kill(pod.Status.ContainerStatuses, "containers")
	}
	// Sidecars stop after the containers, the last started first.
	sidecars := slices.Clone(pod.Status.InitContainerStatuses)
	slices.Reverse(sidecars)
	kill(sidecars, "initContainers")
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
