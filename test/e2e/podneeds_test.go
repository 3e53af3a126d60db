package e2e

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// TestPodsWaitForWhatTheyNeed: a simulated node starts a pod only once
// the ConfigMaps and Secrets it mounts or reads exist, as a kubelet does:
// until then a pod missing a volume's ConfigMap is Pending with its
// containers ContainerCreating and the kubelet's FailedMount event, and a
// container whose environment names a missing Secret or key waits in
// CreateContainerConfigError beside its running sibling. Optional ones
// hold nothing back.
func TestPodsWaitForWhatTheyNeed(t *testing.T) {
	k := startKapi(t, "--simulated-nodes=1")
	cs := k.clientset()
	apply(t, k, `apiVersion: v1
kind: Pod
metadata: {name: mounts}
spec:
  containers: [{name: app, image: nginx, volumeMounts: [{name: cfg, mountPath: /etc/cfg}]}]
  volumes: [{name: cfg, configMap: {name: settings}}]
---
apiVersion: v1
kind: Pod
metadata: {name: reads}
spec:
  containers:
  - name: app
    image: nginx
    env: [{name: PASSWORD, valueFrom: {secretKeyRef: {name: creds, key: password}}}]
  - {name: plain, image: nginx}
---
apiVersion: v1
kind: Pod
metadata: {name: optional}
spec:
  containers:
  - name: app
    image: nginx
    envFrom: [{secretRef: {name: nothing, optional: true}}]
    env: [{name: A, valueFrom: {configMapKeyRef: {name: nothing, key: a, optional: true}}}]
    volumeMounts: [{name: cfg, mountPath: /etc/cfg}]
  volumes: [{name: cfg, configMap: {name: nothing, optional: true}}]
`)
	simWaitRunning(t, cs, "optional")

	waitFor(t, 30*time.Second, "the pod missing its volume's ConfigMap to wait for it", func() bool {
		pod := simPod(t, cs, "mounts")
		return pod.Status.Phase == corev1.PodPending && pod.Status.HostIP != "" && pod.Status.PodIP == "" &&
			waitingReason(pod.Status.ContainerStatuses, "app") == "ContainerCreating"
	})
	waitEvent(t, cs, "mounts", "FailedMount", `MountVolume.SetUp failed for volume "cfg" : configmap "settings" not found`)

	waitFor(t, 30*time.Second, "the container reading a missing Secret to wait beside its sibling", func() bool {
		pod := simPod(t, cs, "reads")
		return pod.Status.Phase == corev1.PodPending && pod.Status.PodIP != "" &&
			waitingMessage(pod.Status.ContainerStatuses, "app") == `secret "creds" not found` &&
			waitingReason(pod.Status.ContainerStatuses, "app") == "CreateContainerConfigError" &&
			running(pod.Status.ContainerStatuses, "plain")
	})
	waitEvent(t, cs, "reads", "Failed", `Error: secret "creds" not found`)
	if c := simPodCondition(simPod(t, cs, "reads"), corev1.PodReady); c == nil || c.Status != corev1.ConditionFalse || c.Message != "containers with unready status: [app]" {
		t.Errorf("the waiting pod's Ready condition: %+v", c)
	}

	// The Secret without the key: the container waits for the key.
	k.mustKubectl("create", "secret", "generic", "creds", "--from-literal=user=u")
	waitFor(t, 30*time.Second, "the container to wait for the Secret's key", func() bool {
		pod := simPod(t, cs, "reads")
		return waitingMessage(pod.Status.ContainerStatuses, "app") == "couldn't find key password in Secret default/creds"
	})
	started := simPod(t, cs, "reads").Status.ContainerStatuses
	k.mustKubectl("patch", "secret", "creds", "-p", `{"stringData":{"password":"p"}}`)
	simWaitRunning(t, cs, "reads")
	// The sibling that ran all along keeps its start.
	now := simPod(t, cs, "reads").Status.ContainerStatuses
	if before, after := runningSince(started, "plain"), runningSince(now, "plain"); before == nil || after == nil || !before.Equal(after) {
		t.Errorf("the running container's start moved from %v to %v", before, after)
	}

	k.mustKubectl("create", "configmap", "settings", "--from-literal=a=b")
	simWaitRunning(t, cs, "mounts")
}

func containerStatus(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	i := slices.IndexFunc(statuses, func(s corev1.ContainerStatus) bool { return s.Name == name })
	if i < 0 {
		return nil
	}
	return &statuses[i]
}

func waitingReason(statuses []corev1.ContainerStatus, name string) string {
	if s := containerStatus(statuses, name); s != nil && s.State.Waiting != nil {
		return s.State.Waiting.Reason
	}
	return ""
}

func waitingMessage(statuses []corev1.ContainerStatus, name string) string {
	if s := containerStatus(statuses, name); s != nil && s.State.Waiting != nil {
		return s.State.Waiting.Message
	}
	return ""
}

func running(statuses []corev1.ContainerStatus, name string) bool {
	s := containerStatus(statuses, name)
	return s != nil && s.State.Running != nil && s.Ready
}

func runningSince(statuses []corev1.ContainerStatus, name string) *metav1.Time {
	if s := containerStatus(statuses, name); s != nil && s.State.Running != nil {
		return &s.State.Running.StartedAt
	}
	return nil
}

// waitEvent waits for a kubelet's event in the default namespace of the
// object named (a pod, or a node) with the reason and message.
func waitEvent(t *testing.T, cs kubernetes.Interface, name, reason, message string) {
	t.Helper()
	selector := fields.Set{"involvedObject.name": name, "reason": reason}.AsSelector().String()
	waitFor(t, 30*time.Second, reason+" event of "+name, func() bool {
		events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.Message == message && e.Source.Component == "kubelet"
		})
	})
}

// TestSimulatedKubeletReportsWhatAKubeletReports: the status a simulated
// node posts carries what a kubelet's does: each container's mounts (read
// only ones with their recursive mode) and allocated requests, the pod's
// allocated resources, completed init containers ready, why a sandbox is
// not ready; the node declares the features its kubelet version has (so
// that a pod-level resize is admitted), carries the beta OS and arch
// labels, and its kubelet records its start and its conditions. Images
// are named as containerd names them; ephemeral containers run. A pod's
// sidecars stop once its containers have exited, and a deleted pod's last
// status says its containers stopped.
func TestSimulatedKubeletReportsWhatAKubeletReports(t *testing.T) {
	k := startKapi(t, "--simulated-nodes=1")
	cs := k.clientset()
	apply(t, k, `apiVersion: v1
kind: Pod
metadata: {name: detailed}
spec:
  resources: {requests: {cpu: 200m, memory: 64Mi}, limits: {cpu: 400m, memory: 128Mi}}
  initContainers: [{name: setup, image: busybox}]
  containers:
  - name: app
    image: nginx
    resources: {requests: {cpu: 100m}}
    volumeMounts: [{name: scratch, mountPath: /scratch}, {name: scratch, mountPath: /ro, readOnly: true}]
  volumes: [{name: scratch, emptyDir: {}}]
---
apiVersion: v1
kind: Pod
metadata: {name: with-sidecar, annotations: {kapi.dev/simulated-runtime: 1s}}
spec:
  restartPolicy: Never
  initContainers: [{name: proxy, image: envoy, restartPolicy: Always}]
  containers: [{name: task, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: unmounted}
spec:
  containers: [{name: app, image: nginx, volumeMounts: [{name: cfg, mountPath: /etc/cfg}]}]
  volumes: [{name: cfg, secret: {secretName: absent}}]
`)
	simWaitRunning(t, cs, "detailed")
	pod := simPod(t, cs, "detailed")
	app := containerStatus(pod.Status.ContainerStatuses, "app")
	disabled := corev1.RecursiveReadOnlyDisabled
	wantMounts := []corev1.VolumeMountStatus{
		{Name: "scratch", MountPath: "/scratch"},
		{Name: "scratch", MountPath: "/ro", ReadOnly: true, RecursiveReadOnly: &disabled},
	}
	// The ServiceAccount admission plugin adds the token's mount last.
	if app == nil || len(app.VolumeMounts) != 3 || !reflect.DeepEqual(app.VolumeMounts[:2], wantMounts) ||
		app.VolumeMounts[2].MountPath != "/var/run/secrets/kubernetes.io/serviceaccount" || !app.VolumeMounts[2].ReadOnly {
		t.Errorf("the container's mounts: %+v", app)
	}
	// containerd's names of the image: normalized, with a repository digest.
	if app == nil || app.Image != "docker.io/library/nginx:latest" || !strings.HasPrefix(app.ImageID, "docker.io/library/nginx@sha256:") {
		t.Errorf("the container's image %q, image ID %q", app.Image, app.ImageID)
	}
	if app == nil || app.AllocatedResources.Cpu().String() != "100m" {
		t.Errorf("the container's allocated resources: %+v", app)
	}
	if got := pod.Status.AllocatedResources; got.Cpu().String() != "200m" || got.Memory().String() != "64Mi" {
		t.Errorf("the pod's allocated resources: %v", got)
	}
	if setup := containerStatus(pod.Status.InitContainerStatuses, "setup"); setup == nil || setup.State.Terminated == nil || !setup.Ready {
		t.Errorf("the completed init container: %+v", setup)
	}

	waitFor(t, 30*time.Second, "the pod missing its Secret to say its sandbox is not made", func() bool {
		c := simPodCondition(simPod(t, cs, "unmounted"), corev1.PodReadyToStartContainers)
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == "PodSandboxNotReady" && c.Message == "no pod sandbox exists"
	})

	node, err := cs.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(node.Status.DeclaredFeatures, "InPlacePodLevelResourcesVerticalScaling") ||
		node.Labels["beta.kubernetes.io/os"] != "linux" || node.Labels["beta.kubernetes.io/arch"] == "" {
		t.Errorf("node-1 declares %v, labels %v", node.Status.DeclaredFeatures, node.Labels)
	}
	// A pod whose containers exit has its sidecar stopped after them.
	waitFor(t, 30*time.Second, "the pod with a sidecar to end with its sidecar stopped", func() bool {
		pod := simPod(t, cs, "with-sidecar")
		proxy := containerStatus(pod.Status.InitContainerStatuses, "proxy")
		return pod.Status.Phase == corev1.PodSucceeded && proxy != nil && proxy.State.Terminated != nil && !proxy.Ready
	})
	waitEvent(t, cs, "with-sidecar", "Killing", "Stopping container proxy")

	// The node's kubelet records its start and its conditions as they come.
	waitEvent(t, cs, "node-1", "Starting", "Starting kubelet.")
	waitEvent(t, cs, "node-1", "NodeHasSufficientMemory", "Node node-1 status is now: NodeHasSufficientMemory")
	// kube's admission lets a pod-level resize through only to a node
	// declaring the feature.
	k.mustKubectl("patch", "pod", "detailed", "--subresource=resize", "-p",
		`{"spec":{"resources":{"requests":{"cpu":"300m","memory":"64Mi"},"limits":{"cpu":"400m","memory":"128Mi"}}}}`)
	waitFor(t, 30*time.Second, "the pod-level resize to be reported", func() bool {
		return simPod(t, cs, "detailed").Status.AllocatedResources.Cpu().String() == "300m"
	})

	// An ephemeral container (kubectl debug's) starts as the kubelet
	// starts it, never ready.
	k.mustKubectl("debug", "detailed", "--image=busybox", "--container=dbg")
	waitFor(t, 30*time.Second, "the ephemeral container to run", func() bool {
		st := containerStatus(simPod(t, cs, "detailed").Status.EphemeralContainerStatuses, "dbg")
		return st != nil && st.State.Running != nil && !st.Ready && st.Image == "docker.io/library/busybox:latest"
	})

	// A deleted pod's last status says its containers stopped before it
	// goes, as a kubelet's.
	watcher, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=detailed", ResourceVersion: simPod(t, cs, "detailed").ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	k.mustKubectl("delete", "pod", "detailed", "--wait=false")
	var last *corev1.Pod
	for ev := range watcher.ResultChan() {
		if ev.Type == watch.Deleted {
			break
		}
		last = ev.Object.(*corev1.Pod)
	}
	if last == nil || last.Status.Phase != corev1.PodSucceeded || containerStatus(last.Status.ContainerStatuses, "app").State.Terminated == nil {
		t.Errorf("the deleted pod's last status: %+v", last)
	}
}

// TestFailingContainersRestartInPlace: a container of a pod that restarts
// on failure and exits with an error is restarted in the same pod, as the
// kubelet restarts it (at once, then after a 10 s back-off in
// CrashLoopBackOff), and a Job of such pods fails once its pods' restarts
// reach its backoff limit, with no pod made but the first.
func TestFailingContainersRestartInPlace(t *testing.T) {
	k := startKapi(t, "--simulated-nodes=1")
	cs := k.clientset()
	apply(t, k, `apiVersion: batch/v1
kind: Job
metadata: {name: flaky}
spec:
  backoffLimit: 2
  template:
    metadata: {labels: {app: flaky}, annotations: {kapi.dev/simulated-runtime: 1s, kapi.dev/simulated-exit-code: "3"}}
    spec:
      restartPolicy: OnFailure
      containers: [{name: work, image: busybox}]
`)
	var name string
	waitFor(t, 30*time.Second, "the failed container to wait in CrashLoopBackOff after its first restart", func() bool {
		pods := simPods(t, cs, "app=flaky")
		if len(pods) != 1 {
			return false
		}
		name = pods[0].Name
		st := containerStatus(pods[0].Status.ContainerStatuses, "work")
		return pods[0].Status.Phase == corev1.PodRunning && st != nil && st.RestartCount == 1 &&
			strings.HasPrefix(waitingMessage(pods[0].Status.ContainerStatuses, "work"), "back-off 10s restarting failed container=work pod="+name+"_default(") &&
			waitingReason(pods[0].Status.ContainerStatuses, "work") == "CrashLoopBackOff" &&
			st.LastTerminationState.Terminated != nil && st.LastTerminationState.Terminated.ExitCode == 3
	})
	waitEvent(t, cs, name, "BackOff", "Back-off restarting failed container work in pod "+name+"_default("+string(simPod(t, cs, name).UID)+")")
	job := simWaitJobFinished(t, cs, "flaky", time.Minute)
	if c := simJobCondition(job, batchv1.JobFailed); c == nil || c.Reason != "BackoffLimitExceeded" {
		t.Errorf("the job's failure: %+v", job.Status.Conditions)
	}
	events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=flaky,reason=SuccessfulCreate"})
	if err != nil || len(events.Items) != 1 {
		t.Errorf("the job made pods %d times (%v), want once: its pod restarts in place", len(events.Items), err)
	}
}
