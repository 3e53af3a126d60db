package simnodes

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/kubelet/util/format"
	"k8s.io/utils/ptr"
)

// A container of a pod that restarts on failure and exits with an error
// is restarted in place, as the kubelet restarts it: at once the first
// time, then after a back-off that starts at 10 s and doubles up to 5
// minutes (the kubelet's defaults), waiting in CrashLoopBackOff meanwhile.
// The pod stays Running; its containers count their restarts and keep
// their last exit.
const (
	crashLoopBackOff = "CrashLoopBackOff"
	initialBackOff   = 10 * time.Second
	maxBackOff       = 5 * time.Minute
	reasonBackOff    = "BackOff"
)

// backOff is how long the kubelet waits before the restart that would
// be a container's restarts+1st.
func backOff(restarts int32) time.Duration {
	if restarts == 0 {
		return 0
	}
	wait := initialBackOff
	for i := int32(1); i < restarts && wait < maxBackOff; i++ {
		wait *= 2
	}
	return min(wait, maxBackOff)
}

// runStart is when the pod's containers started their current run.
func runStart(pod *corev1.Pod) time.Time {
	for _, st := range pod.Status.ContainerStatuses {
		if st.State.Running != nil {
			return st.State.Running.StartedAt.Time
		}
	}
	return pod.Status.StartTime.Time
}

// backingOff reports whether a container of the pod waits to be restarted.
func backingOff(pod *corev1.Pod) bool {
	for _, st := range pod.Status.ContainerStatuses {
		if st.State.Waiting != nil && st.State.Waiting.Reason == crashLoopBackOff {
			return true
		}
	}
	return false
}

// crash posts the status of a pod whose containers have exited with
// exitCode and are restarted: at once, or after their back-off.
func (s *simulator) crash(ctx context.Context, pod *corev1.Pod, exitCode int32) error {
	now := metav1.Now()
	next := pod.DeepCopy()
	var restarted, waiting []string
	var later time.Duration
	for i := range next.Status.ContainerStatuses {
		st := &next.Status.ContainerStatuses[i]
		if st.State.Running == nil {
			continue
		}
		exited := *st
		terminate(&exited, exitCode, now)
		st.LastTerminationState = exited.State
		wait := backOff(st.RestartCount)
		if wait == 0 {
			restart(pod, st, now)
			restarted = append(restarted, st.Name)
			continue
		}
		st.State = waitingState(crashLoopBackOff, fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", wait, st.Name, format.Pod(pod)))
		st.Ready, st.Started, st.ContainerID = false, ptr.To(false), ""
		waiting = append(waiting, st.Name)
		later = max(later, wait)
	}
	setConditions(pod, &next.Status, "", now)
	if _, err := s.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{}); err != nil {
		return err
	}
	s.events.restarted(pod, restarted)
	s.events.backingOff(pod, waiting)
	if later > 0 {
		s.podQueue.AddAfter(keyOf(pod), later)
	}
	return nil
}

// restartAfterBackOff restarts the containers of the pod whose back-off
// has passed, and comes back for the others when theirs will have.
func (s *simulator) restartAfterBackOff(ctx context.Context, pod *corev1.Pod) error {
	now := metav1.Now()
	next := pod.DeepCopy()
	var restarted []string
	var later time.Duration
	for i := range next.Status.ContainerStatuses {
		st := &next.Status.ContainerStatuses[i]
		if st.State.Waiting == nil || st.State.Waiting.Reason != crashLoopBackOff || st.LastTerminationState.Terminated == nil {
			continue
		}
		due := st.LastTerminationState.Terminated.FinishedAt.Add(backOff(st.RestartCount))
		if left := due.Sub(now.Time); left > 0 {
			later = max(later, left)
			continue
		}
		restart(pod, st, now)
		restarted = append(restarted, st.Name)
	}
	if later > 0 {
		s.podQueue.AddAfter(keyOf(pod), later)
	}
	if len(restarted) == 0 {
		return nil
	}
	setConditions(pod, &next.Status, "", now)
	if _, err := s.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{}); err != nil {
		return err
	}
	s.events.restarted(pod, restarted)
	return nil
}

// restart starts a container again at now: a new container, one restart
// more.
func restart(pod *corev1.Pod, st *corev1.ContainerStatus, now metav1.Time) {
	st.RestartCount++
	st.ContainerID = containerID(pod, fmt.Sprintf("%s/%d", st.Name, st.RestartCount))
	st.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
	st.Ready, st.Started = true, ptr.To(true)
}
