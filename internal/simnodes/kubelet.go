package simnodes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	kubeletstatus "k8s.io/kubernetes/pkg/kubelet/status"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
	"k8s.io/utils/ptr"
)

// Annotations on a pod (or its template) that say how its simulated
// containers end: after how long (a Go duration) and with which exit
// code. A Job's pods end after jobPodRuntime with 0 when they say nothing;
// other pods end only when they say so, and pods that restart always
// never do.
const (
	RuntimeAnnotation  = "kapi.dev/simulated-runtime"
	ExitCodeAnnotation = "kapi.dev/simulated-exit-code"
	jobPodRuntime      = time.Second
)

// syncPod moves a pod bound to a simulated node through its life as the
// node's kubelet would: it starts, it runs (ready at once), it ends when
// its containers would, and it goes once deleted.
func (s *simulator) syncPod(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := s.pods.Pods(namespace).Get(name)
	if err != nil {
		return err
	}
	node, err := s.nodes.Get(pod.Spec.NodeName)
	if err != nil || !simulated(node) {
		return nil // not ours, or its node is gone: the pod GC's
	}
	switch {
	case pod.DeletionTimestamp != nil:
		return s.removePod(ctx, pod)
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		s.ips.release(pod)
		return nil
	case pod.Status.Phase != corev1.PodRunning:
		return s.startPod(ctx, pod, node)
	}
	if deadline, ok := activeDeadline(pod); ok {
		left := time.Until(deadline)
		if left <= 0 {
			// The kubelet kills the containers of a pod active past its
			// spec.activeDeadlineSeconds and fails it.
			s.events.deadlineExceeded(pod, deadlineExceeded.message)
			s.events.stopping(pod, false)
			return s.endPod(ctx, pod, killedExitCode, deadlineExceeded)
		}
		s.podQueue.AddAfter(key, left)
	}
	runtime, exitCode, ends := podEnd(pod)
	if !ends {
		return s.syncConditions(ctx, pod)
	}
	if backingOff(pod) {
		return s.restartAfterBackOff(ctx, pod)
	}
	if left := time.Until(runStart(pod).Add(runtime)); left > 0 {
		s.podQueue.AddAfter(key, left)
		return nil
	}
	if exitCode != 0 && pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure {
		return s.crash(ctx, pod, exitCode)
	}
	s.events.stopping(pod, true) // its containers have exited: the kubelet stops its sidecars
	return s.endPod(ctx, pod, exitCode, podEnding{})
}

// podEnding is why a pod ended, when the kubelet says (its status's reason
// and message).
type podEnding struct{ reason, message string }

// deadlineExceeded is the kubelet's word for a pod past its deadline.
var deadlineExceeded = podEnding{"DeadlineExceeded", "Pod was active on the node longer than the specified deadline"}

// killedExitCode is the exit code of a container the kubelet killed.
const killedExitCode = 137

// activeDeadline is when the pod's spec.activeDeadlineSeconds, counted
// from its start, runs out.
func activeDeadline(pod *corev1.Pod) (time.Time, bool) {
	if pod.Spec.ActiveDeadlineSeconds == nil || pod.Status.StartTime == nil {
		return time.Time{}, false
	}
	return pod.Status.StartTime.Add(time.Duration(*pod.Spec.ActiveDeadlineSeconds) * time.Second), true
}

// removePod: the containers of a deleted pod stop at once, and the
// kubelet deletes it for good, as it does once they have stopped.
func (s *simulator) removePod(ctx context.Context, pod *corev1.Pod) error {
	if ptr.Deref(pod.DeletionGracePeriodSeconds, 0) == 0 {
		return nil // done: what is left waits for its finalizers
	}
	s.ips.release(pod)
	if pod.Status.Phase == corev1.PodRunning {
		// As the kubelet's, the containers stop and the pod's last status
		// says how before it goes.
		s.events.stopping(pod, false)
		if err := s.endPod(ctx, pod, 0, podEnding{}); err != nil {
			return err
		}
	}
	return s.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      metav1.NewUIDPreconditions(string(pod.UID)),
	})
}

// startPod posts the status of a pod whose containers have started and
// are ready (there are no probes to wait for). A pod whose volumes cannot
// be mounted waits for them, its containers ContainerCreating; a
// container whose environment cannot be made waits in
// CreateContainerConfigError, and the init containers after it and, if it
// is one, the pod's containers wait for it.
func (s *simulator) startPod(ctx context.Context, pod *corev1.Pod, node *corev1.Node) error {
	key := keyOf(pod)
	if volume, err := s.unmountable(pod); err != nil {
		return s.awaitVolumes(ctx, pod, node, key, volume, err)
	}
	hostIP := nodeAddress(node)
	podIP := hostIP
	if !pod.Spec.HostNetwork {
		inUse, err := s.podsByNode.ByIndex(byNode, node.Name)
		if err != nil {
			return err
		}
		if podIP, err = s.ips.podIP(pod, node.Spec.PodCIDR, podsOf(inUse)); err != nil {
			return fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	now := metav1.Now()
	next := pod.DeepCopy()
	status := &next.Status
	onNode(status, node, now)
	status.PodIP, status.PodIPs = podIP, []corev1.PodIP{{IP: podIP}}
	blocked := map[string]error{}
	initBlocked := false
	// unlessWaiting gives a container the state started gives it, unless
	// an init container before it waits or its environment cannot be made.
	unlessWaiting := func(started containerState, init bool) containerState {
		return func(c corev1.Container, id string, now metav1.Time) (corev1.ContainerState, bool) {
			if initBlocked {
				return waitingState("PodInitializing", ""), false
			}
			if err := s.unconfigurable(pod.Namespace, c); err != nil {
				blocked[c.Name], initBlocked = err, init
				return waitingState(createContainerConfigError, err.Error()), false
			}
			return started(c, id, now)
		}
	}
	status.InitContainerStatuses = containerStatuses(pod, pod.Spec.InitContainers, now, unlessWaiting(initContainerState, true))
	status.ContainerStatuses = containerStatuses(pod, pod.Spec.Containers, now, unlessWaiting(runningState, false))
	status.Phase = corev1.PodRunning
	if len(blocked) > 0 {
		status.Phase = corev1.PodPending // as the kubelet's, while a container waits
	}
	setPodResources(pod, status)
	setConditions(pod, status, "", now)
	if changed(pod.Status, *status) {
		if _, err := s.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{}); err != nil {
			return err
		}
		s.events.started(pod, status)
	}
	if s.noteWaiting(pod.Namespace, key, blocked) {
		s.events.unconfigurable(pod, blocked)
	}
	return nil
}

// onNode sets what a kubelet's first status of a pod says: its node's
// address, and when it started handling it (now, the first time).
func onNode(status *corev1.PodStatus, node *corev1.Node, now metav1.Time) {
	hostIP := nodeAddress(node)
	status.HostIP, status.HostIPs = hostIP, []corev1.HostIP{{IP: hostIP}}
	if status.StartTime == nil {
		status.StartTime = &now
	}
}

// createContainerConfigError is the kubelet's reason for a container whose
// environment it cannot make.
const createContainerConfigError = "CreateContainerConfigError"

// awaitVolumes posts the status of a pod whose volumes cannot all be
// mounted, as the kubelet's: Pending on its node, no sandbox, its
// containers being created; and the kubelet's event for the volume
// (none for a claim not bound yet, which the kubelet reports only once
// its wait times out).
func (s *simulator) awaitVolumes(ctx context.Context, pod *corev1.Pod, node *corev1.Node, key, volume string, mountErr error) error {
	now := metav1.Now()
	next := pod.DeepCopy()
	status := &next.Status
	status.Phase = corev1.PodPending
	onNode(status, node, now)
	waiting := func(reason string) containerState {
		return func(corev1.Container, string, metav1.Time) (corev1.ContainerState, bool) {
			return waitingState(reason, ""), false
		}
	}
	// As the kubelet's, every container of a pod with init containers is
	// PodInitializing until they have run.
	creating := "ContainerCreating"
	if len(pod.Spec.InitContainers) > 0 {
		creating = "PodInitializing"
	}
	status.InitContainerStatuses = containerStatuses(pod, pod.Spec.InitContainers, now, waiting(creating))
	status.ContainerStatuses = containerStatuses(pod, pod.Spec.Containers, now, waiting(creating))
	setPodResources(pod, status)
	setConditions(pod, status, noSandbox, now)
	if changed(pod.Status, *status) {
		if _, err := s.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	if s.waiting.add(pod.Namespace, key, volume+": "+mountErr.Error()) && !errors.Is(mountErr, errUnboundClaim) {
		s.events.failedMount(pod, volume, mountErr)
	}
	return nil
}

// noteWaiting records whether the pod of key waits for its containers'
// environment, and reports whether what it waits for is new.
func (s *simulator) noteWaiting(namespace, key string, blocked map[string]error) bool {
	if len(blocked) == 0 {
		s.waiting.remove(namespace, key)
		return false
	}
	names := slices.Sorted(maps.Keys(blocked))
	what := ""
	for _, name := range names {
		what += name + ": " + blocked[name].Error() + "\n"
	}
	return s.waiting.add(namespace, key, what)
}

func waitingState(reason, message string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
}

// syncConditions posts the conditions of a running pod again when they
// change: its readiness gates' conditions, set by others, decide Ready.
// A resize (new resources in the spec) is carried out at once: the
// containers' statuses report the resources asked for.
func (s *simulator) syncConditions(ctx context.Context, pod *corev1.Pod) error {
	synced := pod.DeepCopy()
	now := metav1.Now()
	synced.Status.EphemeralContainerStatuses = ephemeralStatuses(pod, now)
	setConditions(pod, &synced.Status, "", now)
	reportResources(synced.Spec.Containers, synced.Status.ContainerStatuses)
	reportResources(synced.Spec.InitContainers, synced.Status.InitContainerStatuses)
	setPodResources(synced, &synced.Status)
	if !changed(pod.Status, synced.Status) {
		return nil
	}
	if _, err := s.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, synced, metav1.UpdateOptions{}); err != nil {
		return err
	}
	s.events.startedEphemeral(pod, &synced.Status)
	return nil
}

// ephemeralStatuses are the statuses of a running pod's ephemeral
// containers (kubectl debug's): those added since its last status start
// at now. As the kubelet's, they are never ready.
func ephemeralStatuses(pod *corev1.Pod, now metav1.Time) []corev1.ContainerStatus {
	var statuses []corev1.ContainerStatus
	for _, ec := range pod.Spec.EphemeralContainers {
		if i := slices.IndexFunc(pod.Status.EphemeralContainerStatuses, func(st corev1.ContainerStatus) bool { return st.Name == ec.Name }); i >= 0 {
			statuses = append(statuses, pod.Status.EphemeralContainerStatuses[i])
			continue
		}
		image, id := runtimeImage(ec.Image)
		statuses = append(statuses, corev1.ContainerStatus{
			Name: ec.Name, Image: image, ImageID: id, ContainerID: containerID(pod, ec.Name),
			State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			VolumeMounts: volumeMountStatuses(corev1.Container{VolumeMounts: ec.VolumeMounts}),
		})
	}
	return statuses
}

// endPod posts the status of a pod whose containers have exited with
// exitCode, its sidecars (init containers that restart always) stopped
// after them.
func (s *simulator) endPod(ctx context.Context, pod *corev1.Pod, exitCode int32, why podEnding) error {
	now := metav1.Now()
	ended := pod.DeepCopy()
	status := &ended.Status
	status.Phase = corev1.PodSucceeded
	if exitCode != 0 {
		status.Phase = corev1.PodFailed
	}
	status.Reason, status.Message = why.reason, why.message
	for i := range status.ContainerStatuses {
		terminate(&status.ContainerStatuses[i], exitCode, now)
	}
	for i := range status.InitContainerStatuses {
		if c := &status.InitContainerStatuses[i]; c.State.Running != nil {
			terminate(c, 0, now)
		}
	}
	setConditions(pod, status, sandboxNotReady, now)
	if _, err := s.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, ended, metav1.UpdateOptions{}); err != nil {
		return err
	}
	s.ips.release(pod)
	return nil
}

// terminate sets a container's status to exited with exitCode at now.
func terminate(c *corev1.ContainerStatus, exitCode int32, now metav1.Time) {
	reason := "Completed"
	if exitCode != 0 {
		reason = "Error"
	}
	started := now
	if c.State.Running != nil {
		started = c.State.Running.StartedAt
	}
	c.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: exitCode, Reason: reason, StartedAt: started, FinishedAt: now, ContainerID: c.ContainerID,
	}}
	c.Ready, c.Started = false, ptr.To(false)
}

// podEnd says whether the pod's containers end, after how long and with
// which exit code.
func podEnd(pod *corev1.Pod) (runtime time.Duration, exitCode int32, ends bool) {
	if pod.Spec.RestartPolicy == corev1.RestartPolicyAlways || pod.Status.StartTime == nil {
		return 0, 0, false
	}
	runtimeText, hasRuntime := pod.Annotations[RuntimeAnnotation]
	codeText, hasCode := pod.Annotations[ExitCodeAnnotation]
	ownedByJob := false
	if owner := metav1.GetControllerOf(pod); owner != nil && owner.Kind == "Job" {
		ownedByJob = true
	}
	if !ownedByJob && !hasRuntime && !hasCode {
		return 0, 0, false
	}
	runtime = jobPodRuntime
	if d, err := time.ParseDuration(runtimeText); hasRuntime && err == nil && d >= 0 {
		runtime = d
	}
	if n, err := strconv.ParseInt(codeText, 10, 32); hasCode && err == nil {
		exitCode = int32(n)
	}
	return runtime, exitCode, true
}

// containerState gives a container (with its ID) its state at a time,
// and whether it is ready.
type containerState func(c corev1.Container, id string, now metav1.Time) (corev1.ContainerState, bool)

// containerStatuses are the statuses of containers in the states state
// gives them at now. A container that was running or had ended keeps the
// times it had; one not created yet has no ID.
func containerStatuses(pod *corev1.Pod, containers []corev1.Container, now metav1.Time,
	state containerState) []corev1.ContainerStatus {
	var statuses []corev1.ContainerStatus
	for _, c := range containers {
		id := containerID(pod, c.Name)
		st, ready := state(c, id, now)
		keepTimes(&st, previousState(pod, c.Name))
		status := corev1.ContainerStatus{
			Name: c.Name, ContainerID: id,
			State: st, Ready: ready, Started: ptr.To(st.Running != nil),
			VolumeMounts: volumeMountStatuses(c),
		}
		status.Image, status.ImageID = runtimeImage(c.Image)
		if st.Waiting != nil { // not created: the runtime knows nothing of it
			status.Image, status.ImageID, status.ContainerID = c.Image, "", ""
		}
		statuses = append(statuses, status)
	}
	reportResources(containers, statuses)
	return statuses
}

// volumeMountStatuses are the kubelet's report of a container's mounts:
// a read-only one says whether it is recursively read-only (where the
// container asked for it, the runtime, containerd 2, can).
func volumeMountStatuses(c corev1.Container) []corev1.VolumeMountStatus {
	var mounts []corev1.VolumeMountStatus
	for _, m := range c.VolumeMounts {
		status := corev1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
		if m.ReadOnly {
			mode := corev1.RecursiveReadOnlyDisabled
			if rro := ptr.Deref(m.RecursiveReadOnly, corev1.RecursiveReadOnlyDisabled); rro != corev1.RecursiveReadOnlyDisabled {
				mode = corev1.RecursiveReadOnlyEnabled
			}
			status.RecursiveReadOnly = &mode
		}
		mounts = append(mounts, status)
	}
	return mounts
}

// setPodResources sets the pod-level resources the kubelet reports: what
// the pod's containers request and are limited to, as allocated.
func setPodResources(pod *corev1.Pod, status *corev1.PodStatus) {
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	status.AllocatedResources = requests
	status.Resources = &corev1.ResourceRequirements{Requests: requests, Limits: resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})}
}

// previousState is the state the pod's status gave its container name.
func previousState(pod *corev1.Pod, name string) corev1.ContainerState {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, st := range list {
			if st.Name == name {
				return st.State
			}
		}
	}
	return corev1.ContainerState{}
}

// keepTimes gives a container still running, or still ended, the times
// its earlier state had.
func keepTimes(st *corev1.ContainerState, before corev1.ContainerState) {
	switch {
	case st.Running != nil && before.Running != nil:
		st.Running.StartedAt = before.Running.StartedAt
	case st.Terminated != nil && before.Terminated != nil:
		st.Terminated.StartedAt, st.Terminated.FinishedAt = before.Terminated.StartedAt, before.Terminated.FinishedAt
	}
}

// reportResources sets the resources of created containers' statuses to
// their spec's, as a kubelet that resizes in place reports them once
// applied (kube's validation allows a resize only of a pod whose running
// containers report theirs), and the requests allocated to them.
func reportResources(containers []corev1.Container, statuses []corev1.ContainerStatus) {
	for i := range statuses {
		st := &statuses[i]
		if st.State.Waiting != nil {
			continue
		}
		for _, c := range containers {
			if c.Name == st.Name {
				st.Resources = &corev1.ResourceRequirements{Requests: c.Resources.Requests.DeepCopy(), Limits: c.Resources.Limits.DeepCopy()}
				st.AllocatedResources = c.Resources.Requests.DeepCopy()
			}
		}
	}
}

func runningState(_ corev1.Container, _ string, now metav1.Time) (corev1.ContainerState, bool) {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}, true
}

// initContainerState: init containers have run to completion, sidecars
// (init containers that restart always) keep running.
func initContainerState(c corev1.Container, id string, now metav1.Time) (corev1.ContainerState, bool) {
	if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
		return runningState(c, id, now)
	}
	// The kubelet's prober counts an init container that completed as
	// ready.
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		Reason: "Completed", StartedAt: now, FinishedAt: now, ContainerID: id,
	}}, true
}

// The kubelet's words for a pod whose sandbox is not ready: none made yet
// (its volumes are not mounted), or stopped (its containers have ended).
const (
	noSandbox       = kubetypes.PodSandboxNotReadyMsgNoPodSandbox
	sandboxNotReady = kubetypes.PodSandboxNotReadyMsgSandboxNotReady
)

// setConditions sets the kubelet's conditions of status, computed from
// its containers' statuses with the kubelet's own rules (readiness gates
// included), and the generation they and the status observe; a condition
// keeps its transition time while its status stays. sandboxDown says why
// the pod's sandbox is not up ("" when it is: PodReadyToStartContainers).
func setConditions(pod *corev1.Pod, status *corev1.PodStatus, sandboxDown string, now metav1.Time) {
	old := &pod.Status
	var conditions []corev1.PodCondition
	for _, c := range status.Conditions {
		if !kubetypes.PodConditionByKubelet(c.Type) {
			conditions = append(conditions, c)
		}
	}
	readyToStart := corev1.PodCondition{
		Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue,
		ObservedGeneration: podutil.CalculatePodConditionObservedGeneration(old, pod.Generation, corev1.PodReadyToStartContainers),
	}
	if sandboxDown != "" {
		readyToStart.Status, readyToStart.Reason, readyToStart.Message = corev1.ConditionFalse, kubetypes.PodSandboxNotReadyReason, sandboxDown
	}
	conditions = append(conditions, readyToStart)
	all := append(append([]corev1.ContainerStatus(nil), status.InitContainerStatuses...), status.ContainerStatuses...)
	conditions = append(conditions, kubeletstatus.GeneratePodInitializedCondition(pod, old, all, status.Phase))
	conditions = append(conditions, kubeletstatus.GeneratePodReadyCondition(pod, old, conditions, all, status.Phase))
	conditions = append(conditions, kubeletstatus.GenerateContainersReadyCondition(pod, old, all, status.Phase))
	conditions = append(conditions, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionTrue,
		ObservedGeneration: podutil.CalculatePodConditionObservedGeneration(old, pod.Generation, corev1.PodScheduled),
	})
	for i := range conditions {
		c := &conditions[i]
		c.LastTransitionTime = now
		if _, was := podutil.GetPodConditionFromList(old.Conditions, c.Type); was != nil && was.Status == c.Status {
			c.LastTransitionTime = was.LastTransitionTime
		}
	}
	status.Conditions = conditions
	status.ObservedGeneration = podutil.CalculatePodStatusObservedGeneration(pod)
}

// containerID names a simulated container as containerd would, stable
// for a pod's container.
func containerID(pod *corev1.Pod, container string) string {
	sum := sha256.Sum256([]byte(string(pod.UID) + "/" + container))
	return "containerd://" + hex.EncodeToString(sum[:])
}

// runtimeImage is how containerd reports a container's image: the
// reference normalized (docker.io/library/nginx:latest for nginx), and
// the image's repository digest, here a stable one made of the reference
// (or the digest the reference names).
func runtimeImage(image string) (ref, id string) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		sum := sha256.Sum256([]byte(image))
		return image, image + "@sha256:" + hex.EncodeToString(sum[:])
	}
	named = reference.TagNameOnly(named)
	if digested, ok := named.(reference.Digested); ok {
		return named.String(), named.Name() + "@" + digested.Digest().String()
	}
	sum := sha256.Sum256([]byte(named.String()))
	return named.String(), named.Name() + "@sha256:" + hex.EncodeToString(sum[:])
}

func nodeAddress(node *corev1.Node) string {
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

func podsOf(objs []any) []*corev1.Pod {
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, obj := range objs {
		if pod, ok := obj.(*corev1.Pod); ok {
			pods = append(pods, pod)
		}
	}
	return pods
}
