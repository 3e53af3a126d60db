package builtin

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNoLogYet: a simulated container has a log once it ran, and the
// kubelet's words otherwise.
func TestNoLogYet(t *testing.T) {
	withStatus := func(s corev1.ContainerStatus) *corev1.Pod {
		s.Name = "c"
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{s}}}
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	ended := &corev1.ContainerStateTerminated{ContainerID: "containerd://1"}
	for _, tc := range []struct {
		name      string
		pod       *corev1.Pod
		container string
		previous  bool
		want      string
	}{
		{"running", withStatus(corev1.ContainerStatus{State: running}), "c", false, ""},
		{"no status", withStatus(corev1.ContainerStatus{State: running}), "other", false, `container "other" in pod "p" is not available`},
		{"waiting", withStatus(corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}), "c", false,
			`container "c" in pod "p" is waiting to start: ContainerCreating`},
		{"no state", withStatus(corev1.ContainerStatus{}), "c", false, `container "c" in pod "p" is waiting to start - no logs yet`},
		{"ended", withStatus(corev1.ContainerStatus{State: corev1.ContainerState{Terminated: ended}}), "c", false, ""},
		{"no previous", withStatus(corev1.ContainerStatus{State: running}), "c", true, `previous terminated container "c" in pod "p" not found`},
		{"previous", withStatus(corev1.ContainerStatus{State: running, LastTerminationState: corev1.ContainerState{Terminated: ended}}), "c", true, ""},
	} {
		err := noLogYet(tc.pod, tc.container, tc.previous)
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.want {
				t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("%s: a log, want %q", tc.name, tc.want)
		}
	}
}
