package e2e

import (
	"fmt"
	"net/http"
	"net/netip"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	nodeutil "k8s.io/component-helpers/node/util"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
)

// simulatedNodes is the flag that gives each test three simulated nodes.
var simulatedNodes = []string{"--simulated-nodes", "3"}

// TestSimulatedNodes: --simulated-nodes registers Ready nodes whose
// heartbeat Leases (owned by their Nodes) are renewed, a Node the user
// creates with the simulated label is run the same way, and one without
// it is left alone.
func TestSimulatedNodes(t *testing.T) {
	k := startKapi(t, simulatedNodes...)
	cs := k.clientset()
	names := []string{"node-1", "node-2", "node-3"}

	var table string
	waitFor(t, 30*time.Second, "kubectl get nodes to show three Ready nodes", func() bool {
		table, _ = k.kubectl("get", "nodes")
		return slices.Equal(simNodeTable(table), []string{"node-1 Ready", "node-2 Ready", "node-3 Ready"})
	})
	if !strings.HasPrefix(table, "NAME") {
		t.Errorf("kubectl get nodes:\n%s", table)
	}

	cidrs, ips := map[string]bool{}, map[string]bool{}
	renewed := map[string]metav1.MicroTime{}
	for _, name := range names {
		node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if node.Labels["kapi.dev/simulated"] != "true" || node.Labels["kubernetes.io/hostname"] != name {
			t.Errorf("%s labels = %v", name, node.Labels)
		}
		if c := simNodeCondition(node, corev1.NodeReady); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "KubeletReady" {
			t.Errorf("%s Ready condition = %+v", name, c)
		}
		for resourceName, want := range map[corev1.ResourceName]string{"cpu": "8", "memory": "32Gi", "pods": "110"} {
			if got := node.Status.Capacity[resourceName]; got.Cmp(resource.MustParse(want)) != 0 {
				t.Errorf("%s capacity %s = %s, want %s", name, resourceName, got.String(), want)
			}
		}
		cidr := node.Spec.PodCIDR
		if !regexp.MustCompile(`^10\.128\.\d+\.0/24$`).MatchString(cidr) || cidrs[cidr] {
			t.Errorf("%s podCIDR = %q (taken: %v)", name, cidr, cidrs)
		}
		cidrs[cidr] = true
		ip := simInternalIP(node)
		if !strings.HasPrefix(ip, "172.16.0.") || ips[ip] {
			t.Errorf("%s InternalIP = %q (taken: %v)", name, ip, ips)
		}
		ips[ip] = true

		lease, err := cs.CoordinationV1().Leases("kube-node-lease").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s's Lease: %v", name, err)
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != name || lease.Spec.RenewTime == nil {
			t.Fatalf("%s's Lease spec = %+v", name, lease.Spec)
		}
		owners := lease.OwnerReferences
		if len(owners) != 1 || owners[0].APIVersion != "v1" || owners[0].Kind != "Node" || owners[0].Name != name || owners[0].UID != node.UID {
			t.Errorf("%s's Lease owners = %+v, want the Node (uid %s)", name, owners, node.UID)
		}
		renewed[name] = *lease.Spec.RenewTime
	}
	waitFor(t, 25*time.Second, "each node's Lease to be renewed", func() bool {
		for _, name := range names {
			lease, err := cs.CoordinationV1().Leases("kube-node-lease").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !lease.Spec.RenewTime.After(renewed[name].Time) {
				return false
			}
		}
		return true
	})

	// The unlabelled node comes first: by the time the labelled one is
	// Ready, the simulation has seen it.
	apply(t, k, `apiVersion: v1
kind: Node
metadata:
  name: bare
---
apiVersion: v1
kind: Node
metadata:
  name: edge
  labels: {kapi.dev/simulated: "true"}
`)
	waitFor(t, 30*time.Second, "the labelled node to become Ready with a pod CIDR", func() bool {
		node, err := cs.CoreV1().Nodes().Get(ctx, "edge", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := simNodeCondition(node, corev1.NodeReady)
		return c != nil && c.Status == corev1.ConditionTrue && node.Spec.PodCIDR != ""
	})
	if out := k.mustKubectl("get", "node", "edge", "--no-headers"); !slices.Equal(simNodeTable(out), []string{"edge Ready"}) {
		t.Errorf("kubectl get node edge: %q", out)
	}
	edge, err := cs.CoreV1().Nodes().Get(ctx, "edge", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cidrs[edge.Spec.PodCIDR] || simInternalIP(edge) == "" || ips[simInternalIP(edge)] {
		t.Errorf("the user's node has pod CIDR %q and address %q, not new ones", edge.Spec.PodCIDR, simInternalIP(edge))
	}
	waitFor(t, 20*time.Second, "the labelled node's Lease", func() bool {
		_, err := cs.CoordinationV1().Leases("kube-node-lease").Get(ctx, "edge", metav1.GetOptions{})
		return err == nil
	})
	bare, err := cs.CoreV1().Nodes().Get(ctx, "bare", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(bare.Status.Conditions) != 0 || bare.Spec.PodCIDR != "" || len(bare.Status.Addresses) != 0 {
		t.Errorf("the unlabelled node was given conditions %+v, pod CIDR %q, addresses %v", bare.Status.Conditions, bare.Spec.PodCIDR, bare.Status.Addresses)
	}
	if _, err := cs.CoordinationV1().Leases("kube-node-lease").Get(ctx, "bare", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the unlabelled node's Lease: %v, want NotFound", err)
	}
}

// TestDeploymentRollout: a Deployment on simulated nodes rolls out, is
// rolled back, restarted, paused and resumed with kubectl as on a
// cluster, and its Service's EndpointSlice follows its ready pods.
func TestDeploymentRollout(t *testing.T) {
	k := startKapi(t, simulatedNodes...)
	cs := k.clientset()
	rollout := func() { t.Helper(); k.mustKubectl("rollout", "status", "deployment/web", "--timeout=60s") }
	k.mustKubectl("create", "deployment", "web", "--image=nginx:1.26", "--replicas=3")
	rollout()

	pods := simPods(t, cs, "app=web")
	if len(pods) != 3 {
		t.Fatalf("%d pods after the rollout, want 3", len(pods))
	}
	podIPs := map[string]bool{}
	for _, pod := range pods {
		if !simRunningReady(&pod) || pod.Spec.NodeName == "" || pod.Status.PodIP == "" || podIPs[pod.Status.PodIP] {
			t.Errorf("pod %s: phase %s, node %q, IP %q (taken: %v)", pod.Name, pod.Status.Phase, pod.Spec.NodeName, pod.Status.PodIP, podIPs)
		}
		podIPs[pod.Status.PodIP] = true
	}
	deploy, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := simDeploymentCondition(deploy, appsv1.DeploymentAvailable); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "MinimumReplicasAvailable" {
		t.Errorf("Available condition = %+v", c)
	}
	if deploy.Status.ReadyReplicas != 3 || deploy.Status.AvailableReplicas != 3 {
		t.Errorf("ready/available replicas = %d/%d, want 3/3", deploy.Status.ReadyReplicas, deploy.Status.AvailableReplicas)
	}

	k.mustKubectl("expose", "deployment", "web", "--port=80")
	waitFor(t, 30*time.Second, "the Service's EndpointSlice to list the three pods, ready", func() bool {
		ready, all := simSliceEndpoints(t, cs, "web")
		return all == 3 && simSameSet(ready, simKeys(podIPs))
	})

	k.mustKubectl("set", "image", "deployment/web", "nginx=nginx:1.27")
	rollout()
	if revs := simRevisions(k.mustKubectl("rollout", "history", "deployment/web")); !slices.Equal(revs, []string{"1", "2"}) {
		t.Errorf("rollout history revisions = %v, want [1 2]", revs)
	}
	if images := simPodImages(t, cs, "app=web"); !slices.Equal(images, []string{"nginx:1.27", "nginx:1.27", "nginx:1.27"}) {
		t.Errorf("images after set image = %v", images)
	}

	k.mustKubectl("rollout", "undo", "deployment/web")
	rollout()
	deploy, err = cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if image := deploy.Spec.Template.Spec.Containers[0].Image; image != "nginx:1.26" {
		t.Errorf("image after undo = %q, want nginx:1.26", image)
	}
	if rev := deploy.Annotations["deployment.kubernetes.io/revision"]; rev != "3" {
		t.Errorf("revision after undo = %q, want 3", rev)
	}
	if revs := simRevisions(k.mustKubectl("rollout", "history", "deployment/web")); !slices.Equal(revs, []string{"2", "3"}) {
		t.Errorf("rollout history revisions after undo = %v, want [2 3] (revision 1 became 3)", revs)
	}

	k.mustKubectl("rollout", "restart", "deployment/web")
	rollout()
	deploy, err = cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	restartedAt := deploy.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"]
	if restartedAt == "" {
		t.Fatalf("template annotations after restart = %v", deploy.Spec.Template.Annotations)
	}
	waitFor(t, 30*time.Second, "three Running pods of the restarted template", func() bool {
		pods := simPods(t, cs, "app=web")
		for _, pod := range pods {
			if !simRunningReady(&pod) || pod.Annotations["kubectl.kubernetes.io/restartedAt"] != restartedAt {
				return false
			}
		}
		return len(pods) == 3
	})

	replicaSets := func() []appsv1.ReplicaSet {
		list, err := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		return list.Items
	}
	withImage := func(image string) *appsv1.ReplicaSet {
		for _, rs := range replicaSets() {
			if rs.Spec.Template.Spec.Containers[0].Image == image {
				return &rs
			}
		}
		return nil
	}
	before := len(replicaSets())
	k.mustKubectl("rollout", "pause", "deployment/web")
	k.mustKubectl("set", "image", "deployment/web", "nginx=nginx:1.28")
	waitFor(t, 30*time.Second, "the controller to see the paused Deployment's new template", func() bool {
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := simDeploymentCondition(d, appsv1.DeploymentProgressing)
		return d.Status.ObservedGeneration == d.Generation && c != nil && c.Reason == "DeploymentPaused"
	})
	if after := len(replicaSets()); after != before || withImage("nginx:1.28") != nil {
		t.Errorf("a paused Deployment's new template made a ReplicaSet: %d ReplicaSets, then %d", before, after)
	}
	k.mustKubectl("rollout", "resume", "deployment/web")
	rollout()
	if rs := withImage("nginx:1.28"); rs == nil || rs.Status.ReadyReplicas != 3 {
		t.Errorf("after resume, the nginx:1.28 ReplicaSet = %+v", rs)
	}
	waitFor(t, 30*time.Second, "the pods to run nginx:1.28", func() bool {
		return slices.Equal(simPodImages(t, cs, "app=web"), []string{"nginx:1.28", "nginx:1.28", "nginx:1.28"})
	})

	k.mustKubectl("scale", "deployment/web", "--replicas=1")
	waitFor(t, 30*time.Second, "the EndpointSlice to list the one pod left", func() bool {
		pods := simPods(t, cs, "app=web")
		if len(pods) != 1 {
			return false
		}
		ready, all := simSliceEndpoints(t, cs, "web")
		return all == 1 && slices.Equal(ready, []string{pods[0].Status.PodIP})
	})
}

// TestReplicaSetScaling: scaling a ReplicaSet down deletes the pods with
// the lowest pod-deletion-cost first and an unscheduled pod before
// running ones, and its status counts what is left.
func TestReplicaSetScaling(t *testing.T) {
	k := startKapi(t, simulatedNodes...)
	cs := k.clientset()
	apply(t, k, `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: cost}
spec:
  replicas: 4
  selector: {matchLabels: {app: cost}}
  template:
    metadata: {labels: {app: cost}}
    spec:
      containers: [{name: c, image: nginx}]
`)
	waitFor(t, 30*time.Second, "four ready pods", func() bool { return simReadyReplicas(t, cs, "cost") == 4 })
	pods := simPods(t, cs, "app=cost")
	if len(pods) != 4 {
		t.Fatalf("%d pods, want 4", len(pods))
	}
	cheap := []string{pods[1].Name, pods[2].Name}
	kept := []string{pods[0].Name, pods[3].Name}
	for _, name := range cheap {
		k.mustKubectl("annotate", "pod", name, "controller.kubernetes.io/pod-deletion-cost=-100")
	}
	k.mustKubectl("scale", "rs", "cost", "--replicas=2")
	waitFor(t, 30*time.Second, "two pods left", func() bool { return len(simPods(t, cs, "app=cost")) == 2 })
	if left := simPodNames(simPods(t, cs, "app=cost")); !slices.Equal(left, kept) {
		t.Errorf("pods left = %v, want %v (the ones without the deletion cost -100)", left, kept)
	}
	waitFor(t, 30*time.Second, "the ReplicaSet's status to count two pods", func() bool {
		rs, err := cs.AppsV1().ReplicaSets("default").Get(ctx, "cost", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s := rs.Status
		return rs.Generation == 2 && s.ObservedGeneration == 2 &&
			s.Replicas == 2 && s.ReadyReplicas == 2 && s.AvailableReplicas == 2 && s.FullyLabeledReplicas == 2
	})

	// Four pods with the same host port fit on three nodes only: one
	// stays Pending, and it is the one a scale-down removes.
	apply(t, k, `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: ports}
spec:
  replicas: 4
  selector: {matchLabels: {app: ports}}
  template:
    metadata: {labels: {app: ports}}
    spec:
      containers: [{name: c, image: nginx, ports: [{containerPort: 80, hostPort: 8080}]}]
`)
	var pending string
	waitFor(t, 30*time.Second, "three ready pods and one unschedulable", func() bool {
		pending = ""
		ready := 0
		for _, pod := range simPods(t, cs, "app=ports") {
			if c := simPodCondition(&pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse && c.Reason == "Unschedulable" {
				pending = pod.Name
			} else if simRunningReady(&pod) {
				ready++
			}
		}
		return ready == 3 && pending != "" && simReadyReplicas(t, cs, "ports") == 3
	})
	k.mustKubectl("scale", "rs", "ports", "--replicas=3")
	waitFor(t, 30*time.Second, "the unschedulable pod to go", func() bool {
		_, err := cs.CoreV1().Pods("default").Get(ctx, pending, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	nodes := map[string]bool{}
	for _, pod := range simPods(t, cs, "app=ports") {
		if !simRunningReady(&pod) {
			t.Errorf("pod %s left is %s, not Running and Ready", pod.Name, pod.Status.Phase)
		}
		nodes[pod.Spec.NodeName] = true
	}
	if len(nodes) != 3 {
		t.Errorf("the pods left run on %v, want three nodes", simKeys(nodes))
	}
}

// TestSimulatedNodesPodStatus: a simulated node posts a running pod's
// status as a kubelet does (observed generation, readiness gates
// re-evaluated when their conditions change, with the kubelet's message),
// a ReplicaSet scaled down removes its pods that are not Ready first, and
// a pod past its active deadline is failed as the kubelet fails it.
func TestSimulatedNodesPodStatus(t *testing.T) {
	k := startKapi(t, simulatedNodes...)
	cs := k.clientset()
	apply(t, k, `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: gated}
spec:
  replicas: 3
  selector: {matchLabels: {app: gated}}
  template:
    metadata: {labels: {app: gated}}
    spec:
      readinessGates: [{conditionType: example.com/in-rotation}]
      containers: [{name: c, image: nginx}]
`)
	waitFor(t, 30*time.Second, "three Running pods held back by their readiness gate", func() bool {
		pods := simPods(t, cs, "app=gated")
		for _, pod := range pods {
			c := simPodCondition(&pod, corev1.PodReady)
			if pod.Status.Phase != corev1.PodRunning || c == nil || c.Status != corev1.ConditionFalse || c.Reason != "ReadinessGatesNotReady" {
				return false
			}
		}
		return len(pods) == 3
	})
	// A kubelet of Kubernetes 1.35 or later (PodObservedGenerationTracking
	// is GA) records the generation it saw in the status and in each
	// condition it owns.
	for _, pod := range simPods(t, cs, "app=gated") {
		if pod.Generation == 0 || pod.Status.ObservedGeneration != pod.Generation {
			t.Errorf("pod %s: generation %d, status.observedGeneration %d", pod.Name, pod.Generation, pod.Status.ObservedGeneration)
		}
		var stale []string
		for _, c := range pod.Status.Conditions {
			if c.ObservedGeneration != pod.Generation {
				stale = append(stale, fmt.Sprintf("%s=%d", c.Type, c.ObservedGeneration))
			}
		}
		if len(stale) != 0 {
			t.Errorf("pod %s (generation %d): conditions' observedGeneration %v", pod.Name, pod.Generation, stale)
		}
	}
	chosen := simPods(t, cs, "app=gated")[1].Name
	// The kubelet says which gate holds the pod back.
	if c := simPodCondition(simPod(t, cs, chosen), corev1.PodReady); c.Message != `corresponding condition of pod readiness gate "example.com/in-rotation" does not exist.` {
		t.Errorf("Ready condition's message = %q, want the kubelet's", c.Message)
	}
	k.mustKubectl("patch", "pod", chosen, "--subresource=status", "--type=json", "-p",
		`[{"op":"add","path":"/status/conditions/-","value":{"type":"example.com/in-rotation","status":"True"}}]`)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		pod := simPod(t, cs, chosen)
		if simRunningReady(pod) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after its readiness gate's condition became True, the pod is not Ready; conditions: %+v", pod.Status.Conditions)
		}
	}
	waitFor(t, 30*time.Second, "the ReplicaSet to count one ready pod", func() bool { return simReadyReplicas(t, cs, "gated") == 1 })
	k.mustKubectl("scale", "rs", "gated", "--replicas=1")
	waitFor(t, 30*time.Second, "the pods that are not Ready to go", func() bool {
		return slices.Equal(simPodNames(simPods(t, cs, "app=gated")), []string{chosen})
	})

	// A pod given an active deadline while it runs is failed once it passes.
	k.mustKubectl("run", "limited", "--image=nginx", "--restart=Never")
	waitFor(t, 30*time.Second, "the pod to run", func() bool { return simPod(t, cs, "limited").Status.Phase == corev1.PodRunning })
	k.mustKubectl("patch", "pod", "limited", "-p", `{"spec":{"activeDeadlineSeconds":1}}`)
	waitFor(t, 30*time.Second, "the pod to fail past its deadline", func() bool {
		pod := simPod(t, cs, "limited")
		return pod.Status.Phase == corev1.PodFailed && pod.Status.Reason == "DeadlineExceeded" &&
			pod.Status.Message == "Pod was active on the node longer than the specified deadline"
	})
	waitEvent(t, cs, "limited", "DeadlineExceeded", "Pod was active on the node longer than the specified deadline")
	waitEvent(t, cs, "limited", "Killing", "Stopping container limited")
}

// TestJobsOnSimulatedNodes: Jobs complete or fail as their simulated pods
// exit (backoff limit, pod failure policy), and a CronJob's Jobs, manual
// and scheduled, run and are recorded in its status.
func TestJobsOnSimulatedNodes(t *testing.T) {
	t.Parallel() // spends most of its time waiting for controllers, so it waits beside the other such tests
	k := startKapi(t, simulatedNodes...)
	cs := k.clientset()
	// The CronJob first: its first schedule is up to a minute away.
	apply(t, k, `apiVersion: batch/v1
kind: CronJob
metadata: {name: tick}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: three}
spec:
  completions: 3
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: crash}
spec:
  backoffLimit: 1
  template:
    metadata:
      annotations: {kapi.dev/simulated-exit-code: "1"}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: fatal}
spec:
  backoffLimit: 6
  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {operator: In, values: [42]}
  template:
    metadata:
      annotations: {kapi.dev/simulated-exit-code: "42"}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
`)
	job := simWaitJobFinished(t, cs, "three", 30*time.Second)
	if c := simJobCondition(job, batchv1.JobComplete); c == nil || c.Status != corev1.ConditionTrue || job.Status.Succeeded != 3 || job.Status.Failed != 0 {
		t.Errorf("Job three: Complete condition %+v, succeeded %d, failed %d", c, job.Status.Succeeded, job.Status.Failed)
	}
	for _, pod := range simPods(t, cs, "batch.kubernetes.io/job-name=three") {
		if pod.Status.Phase != corev1.PodSucceeded || simExitCode(&pod) != 0 {
			t.Errorf("pod %s of Job three: phase %s, exit code %d", pod.Name, pod.Status.Phase, simExitCode(&pod))
		}
	}

	job = simWaitJobFinished(t, cs, "crash", 45*time.Second) // the retry waits out a 10 s back-off
	if c := simJobCondition(job, batchv1.JobFailed); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "BackoffLimitExceeded" || job.Status.Failed != 2 {
		t.Errorf("Job crash: Failed condition %+v, failed %d (want 2: the backoff limit is 1)", c, job.Status.Failed)
	}
	for _, pod := range simPods(t, cs, "batch.kubernetes.io/job-name=crash") {
		if pod.Status.Phase != corev1.PodFailed || simExitCode(&pod) != 1 {
			t.Errorf("pod %s of Job crash: phase %s, exit code %d", pod.Name, pod.Status.Phase, simExitCode(&pod))
		}
	}

	job = simWaitJobFinished(t, cs, "fatal", 30*time.Second)
	if c := simJobCondition(job, batchv1.JobFailed); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "PodFailurePolicy" || job.Status.Failed != 1 {
		t.Errorf("Job fatal: Failed condition %+v, failed %d", c, job.Status.Failed)
	}

	k.mustKubectl("create", "job", "manual", "--from=cronjob/tick")
	manual := simWaitJobFinished(t, cs, "manual", 30*time.Second)
	if c := simJobCondition(manual, batchv1.JobComplete); c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("Job manual (from the CronJob) did not complete: %+v", manual.Status)
	}
	cronJob := func() *batchv1.CronJob {
		cj, err := cs.BatchV1().CronJobs("default").Get(ctx, "tick", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cj
	}
	waitFor(t, 30*time.Second, "the CronJob to record the manual Job's success", func() bool {
		last := cronJob().Status.LastSuccessfulTime
		return last != nil && !last.Before(manual.Status.CompletionTime)
	})

	waitFor(t, 70*time.Second, "the CronJob's first scheduled Job", func() bool { return cronJob().Status.LastScheduleTime != nil })
	cj := cronJob()
	jobs, err := cs.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scheduled := ""
	for _, j := range jobs.Items {
		if owner := metav1.GetControllerOf(&j); owner != nil && owner.UID == cj.UID && j.Name != "manual" {
			scheduled = j.Name
		}
	}
	if scheduled == "" {
		t.Fatalf("no Job of the CronJob besides manual; lastScheduleTime %v", cj.Status.LastScheduleTime)
	}
	done := simWaitJobFinished(t, cs, scheduled, 30*time.Second)
	if c := simJobCondition(done, batchv1.JobComplete); c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("scheduled Job %s did not complete: %+v", scheduled, done.Status)
	}
	waitFor(t, 30*time.Second, "the CronJob to record the scheduled Job's success", func() bool {
		s := cronJob().Status
		return len(s.Active) == 0 && s.LastSuccessfulTime != nil && !s.LastSuccessfulTime.Before(done.Status.CompletionTime)
	})
}

// TestStatefulSetAndDaemonSet: an OrderedReady StatefulSet starts its pods
// one by one, each once the one before is Ready; a Parallel one's volume
// claims (of no class: only an existing volume would do) are created but
// its pods wait, unschedulable, for volumes; and a DaemonSet runs one pod
// on each node.
func TestStatefulSetAndDaemonSet(t *testing.T) {
	k := startKapi(t, simulatedNodes...)
	cs := k.clientset()

	type podEvent struct {
		kind  watch.EventType
		name  string
		ready bool
	}
	w, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var mu sync.Mutex
	var events []podEvent
	go func() {
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				mu.Lock()
				events = append(events, podEvent{ev.Type, pod.Name, simRunningReady(pod)})
				mu.Unlock()
			}
		}
	}()
	apply(t, k, `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  serviceName: web
  replicas: 3
  podManagementPolicy: OrderedReady
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx}]
`)
	waitFor(t, 30*time.Second, "the StatefulSet's three pods to be ready", func() bool {
		set, err := cs.AppsV1().StatefulSets("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return set.Status.ReadyReplicas == 3 && set.Status.AvailableReplicas == 3
	})
	if names := simPodNames(simPods(t, cs, "app=web")); !slices.Equal(names, []string{"web-0", "web-1", "web-2"}) {
		t.Errorf("StatefulSet pods = %v", names)
	}
	for _, pod := range simPods(t, cs, "app=web") {
		if !simRunningReady(&pod) {
			t.Errorf("pod %s is %s, not Running and Ready", pod.Name, pod.Status.Phase)
		}
	}
	w.Stop()
	mu.Lock()
	seen := slices.Clone(events)
	mu.Unlock()
	var created []string
	readyAt := map[string]int{} // the first event with the pod ready
	createdAt := map[string]int{}
	for i, ev := range seen {
		if ev.kind == watch.Added {
			created = append(created, ev.name)
			createdAt[ev.name] = i
		}
		if _, ok := readyAt[ev.name]; !ok && ev.ready {
			readyAt[ev.name] = i
		}
	}
	if !slices.Equal(created, []string{"web-0", "web-1", "web-2"}) {
		t.Errorf("pods created in the order %v, want web-0, web-1, web-2", created)
	}
	for i := 1; i < 3; i++ {
		prev, next := fmt.Sprintf("web-%d", i-1), fmt.Sprintf("web-%d", i)
		at, ready := readyAt[prev]
		if !ready || createdAt[next] < at {
			t.Errorf("%s was created before %s was Ready; events: %+v", next, prev, seen)
		}
	}

	apply(t, k, `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 3
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: postgres, volumeMounts: [{name: data, mountPath: /data}]}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      storageClassName: ""
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`)
	waitFor(t, 30*time.Second, "the Parallel StatefulSet's pods, all unschedulable", func() bool {
		pods := simPods(t, cs, "app=db")
		for _, pod := range pods {
			c := simPodCondition(&pod, corev1.PodScheduled)
			if c == nil || c.Status != corev1.ConditionFalse {
				return false
			}
		}
		return len(pods) == 3
	})
	for _, pod := range simPods(t, cs, "app=db") {
		c := simPodCondition(&pod, corev1.PodScheduled)
		if pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != "" || c.Reason != "Unschedulable" ||
			!strings.Contains(c.Message, "pod has unbound immediate PersistentVolumeClaims") {
			t.Errorf("pod %s: phase %s, node %q, PodScheduled %+v", pod.Name, pod.Status.Phase, pod.Spec.NodeName, c)
		}
	}
	claims, err := cs.CoreV1().PersistentVolumeClaims("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var claimNames []string
	for _, claim := range claims.Items {
		claimNames = append(claimNames, claim.Name)
	}
	slices.Sort(claimNames)
	if !slices.Equal(claimNames, []string{"data-db-0", "data-db-1", "data-db-2"}) {
		t.Errorf("PersistentVolumeClaims = %v, want data-db-0, data-db-1, data-db-2", claimNames)
	}

	apply(t, k, `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: c, image: fluentd}]
`)
	waitFor(t, 30*time.Second, "the DaemonSet's pods to be ready on the three nodes", func() bool {
		ds, err := cs.AppsV1().DaemonSets("default").Get(ctx, "agent", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s := ds.Status
		return s.DesiredNumberScheduled == 3 && s.CurrentNumberScheduled == 3 && s.NumberReady == 3 && s.NumberAvailable == 3
	})
	var nodes []string
	for _, pod := range simPods(t, cs, "app=agent") {
		if !simRunningReady(&pod) {
			t.Errorf("DaemonSet pod %s is %s", pod.Name, pod.Status.Phase)
		}
		nodes = append(nodes, pod.Spec.NodeName)
	}
	slices.Sort(nodes)
	if !slices.Equal(nodes, []string{"node-1", "node-2", "node-3"}) {
		t.Errorf("DaemonSet pods on %v, want one on each of node-1, node-2, node-3", nodes)
	}
}

// TestScheduling: kube-scheduler places pods by node selector and taints,
// says why a pod does not fit (condition and FailedScheduling event), a
// deleted pod goes at once, and the pods of a deleted node are collected.
func TestScheduling(t *testing.T) {
	t.Parallel() // spends most of its time waiting for controllers, so it waits beside the other such tests
	k := startKapi(t, simulatedNodes...)
	cs := k.clientset()
	apply(t, k, `apiVersion: v1
kind: Pod
metadata: {name: pinned}
spec:
  nodeSelector: {kubernetes.io/hostname: node-2}
  containers: [{name: c, image: nginx}]
---
apiVersion: v1
kind: Pod
metadata: {name: on-three}
spec:
  nodeSelector: {kubernetes.io/hostname: node-3}
  containers: [{name: c, image: nginx}]
---
apiVersion: v1
kind: Pod
metadata: {name: huge}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "100"}}}]
`)
	for pod, node := range map[string]string{"pinned": "node-2", "on-three": "node-3"} {
		simWaitRunning(t, cs, pod)
		if got := simPod(t, cs, pod).Spec.NodeName; got != node {
			t.Errorf("pod %s is on %q, want %s", pod, got, node)
		}
	}
	waitFor(t, 30*time.Second, "the pod too big for any node to be unschedulable", func() bool {
		c := simPodCondition(simPod(t, cs, "huge"), corev1.PodScheduled)
		return c != nil && c.Status == corev1.ConditionFalse
	})
	huge := simPod(t, cs, "huge")
	if c := simPodCondition(huge, corev1.PodScheduled); c.Reason != "Unschedulable" || !strings.Contains(c.Message, "Insufficient cpu") ||
		huge.Spec.NodeName != "" || huge.Status.Phase != corev1.PodPending {
		t.Errorf("pod huge: phase %s, node %q, PodScheduled %+v", huge.Status.Phase, huge.Spec.NodeName, c)
	}
	waitFor(t, 30*time.Second, "a FailedScheduling event about the pod", func() bool {
		events, err := cs.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			if e.Reason == "FailedScheduling" && e.Regarding.Kind == "Pod" && e.Regarding.Name == "huge" && e.Regarding.UID == huge.UID &&
				e.Type == corev1.EventTypeWarning && e.ReportingController == "default-scheduler" && strings.Contains(e.Note, "Insufficient cpu") {
				return true
			}
		}
		return false
	})

	k.mustKubectl("taint", "nodes", "node-1", "node-3", "dedicated=batch:NoSchedule")
	apply(t, k, `apiVersion: v1
kind: Pod
metadata: {name: tolerant}
spec:
  nodeSelector: {kubernetes.io/hostname: node-1}
  tolerations: [{key: dedicated, operator: Equal, value: batch, effect: NoSchedule}]
  containers: [{name: c, image: nginx}]
---
apiVersion: v1
kind: Pod
metadata: {name: intolerant}
spec:
  nodeSelector: {kubernetes.io/hostname: node-1}
  containers: [{name: c, image: nginx}]
`)
	k.mustKubectl("create", "deployment", "spread", "--image=nginx", "--replicas=2")
	k.mustKubectl("rollout", "status", "deployment/spread", "--timeout=60s")
	for _, pod := range simPods(t, cs, "app=spread") {
		if pod.Spec.NodeName != "node-2" {
			t.Errorf("pod %s of a Deployment without tolerations is on %q, want node-2 (node-1 and node-3 are tainted)", pod.Name, pod.Spec.NodeName)
		}
	}
	simWaitRunning(t, cs, "tolerant")
	if got := simPod(t, cs, "tolerant").Spec.NodeName; got != "node-1" {
		t.Errorf("the tolerating pod is on %q, want node-1", got)
	}
	waitFor(t, 30*time.Second, "the pod not tolerating node-1's taint to be unschedulable", func() bool {
		c := simPodCondition(simPod(t, cs, "intolerant"), corev1.PodScheduled)
		return c != nil && c.Status == corev1.ConditionFalse
	})
	if c := simPodCondition(simPod(t, cs, "intolerant"), corev1.PodScheduled); c.Reason != "Unschedulable" || !strings.Contains(c.Message, "untolerated taint") {
		t.Errorf("the pod not tolerating the taint: PodScheduled %+v", c)
	}

	k.mustKubectl("delete", "pod", "pinned", "--timeout=30s")
	if _, err := cs.CoreV1().Pods("default").Get(ctx, "pinned", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted pod after kubectl delete returned: %v, want NotFound", err)
	}

	k.mustKubectl("delete", "node", "node-3")
	waitFor(t, 30*time.Second, "the deleted node's Lease to be collected", func() bool {
		_, err := cs.CoordinationV1().Leases("kube-node-lease").Get(ctx, "node-3", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	// The pod garbage collector waits 40 s for a node to come back, and
	// looks every 20 s.
	waitFor(t, 100*time.Second, "the pod garbage collector to remove the deleted node's pod", func() bool {
		_, err := cs.CoreV1().Pods("default").Get(ctx, "on-three", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if pod := simPod(t, cs, "tolerant"); pod.Status.Phase != corev1.PodRunning {
		t.Errorf("a pod on a node still there is %s", pod.Status.Phase)
	}
}

// TestGarbageCollectionOfDeployments: deleting a Deployment in the
// foreground removes its ReplicaSet and pods before it, in the background
// after it, and orphaning leaves the ReplicaSet, without owner, and its
// pods running.
func TestGarbageCollectionOfDeployments(t *testing.T) {
	k := startKapi(t, simulatedNodes...)
	cs := k.clientset()
	for _, name := range []string{"fg", "bg", "orphan"} {
		k.mustKubectl("create", "deployment", name, "--image=nginx", "--replicas=2")
	}
	for _, name := range []string{"fg", "bg", "orphan"} {
		k.mustKubectl("rollout", "status", "deployment/"+name, "--timeout=60s")
	}
	deleteWith := func(name string, policy metav1.DeletionPropagation) {
		t.Helper()
		if err := cs.AppsV1().Deployments("default").Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
			t.Fatal(err)
		}
	}
	deploymentGone := func(name string) bool {
		_, err := cs.AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}
	replicaSets := func(name string) []appsv1.ReplicaSet {
		list, err := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			t.Fatal(err)
		}
		return list.Items
	}

	deleteWith("fg", metav1.DeletePropagationForeground)
	waitFor(t, 30*time.Second, "the foreground deletion to finish", func() bool { return deploymentGone("fg") })
	if rs, pods := replicaSets("fg"), simPods(t, cs, "app=fg"); len(rs) != 0 || len(pods) != 0 {
		t.Errorf("when the Deployment deleted in the foreground went, %d ReplicaSets and %d pods were left", len(rs), len(pods))
	}

	deleteWith("bg", metav1.DeletePropagationBackground)
	if !deploymentGone("bg") {
		t.Errorf("the Deployment deleted in the background is still there")
	}
	waitFor(t, 30*time.Second, "the background deletion's ReplicaSet and pods to go", func() bool {
		return len(replicaSets("bg")) == 0 && len(simPods(t, cs, "app=bg")) == 0
	})

	deleteWith("orphan", metav1.DeletePropagationOrphan)
	waitFor(t, 30*time.Second, "the orphaning deletion to finish", func() bool { return deploymentGone("orphan") })
	rss := replicaSets("orphan")
	if len(rss) != 1 {
		t.Fatalf("%d ReplicaSets left by the orphaning deletion, want 1", len(rss))
	}
	rs := rss[0]
	if len(rs.OwnerReferences) != 0 || rs.DeletionTimestamp != nil {
		t.Errorf("the orphaned ReplicaSet has owners %+v, deletion timestamp %v", rs.OwnerReferences, rs.DeletionTimestamp)
	}
	pods := simPods(t, cs, "app=orphan")
	if len(pods) != 2 {
		t.Errorf("%d pods of the orphaned ReplicaSet, want 2", len(pods))
	}
	for _, pod := range pods {
		owner := metav1.GetControllerOf(&pod)
		if !simRunningReady(&pod) || pod.DeletionTimestamp != nil || owner == nil || owner.UID != rs.UID {
			t.Errorf("pod %s of the orphaned ReplicaSet: phase %s, deletion timestamp %v, owner %+v", pod.Name, pod.Status.Phase, pod.DeletionTimestamp, owner)
		}
	}
	if rs.Status.ReadyReplicas != 2 {
		t.Errorf("the orphaned ReplicaSet has %d ready replicas, want 2", rs.Status.ReadyReplicas)
	}
}

// simNodeTable turns kubectl get nodes output into "NAME STATUS" lines.
func simNodeTable(out string) []string {
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] == "NAME" {
			continue
		}
		rows = append(rows, fields[0]+" "+fields[1])
	}
	return rows
}

func simNodeCondition(node *corev1.Node, kind corev1.NodeConditionType) *corev1.NodeCondition {
	_, c := nodeutil.GetNodeCondition(&node.Status, kind)
	return c
}

func simInternalIP(node *corev1.Node) string {
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// simPods lists the default namespace's pods with the label selector,
// by name.
func simPods(t *testing.T, cs kubernetes.Interface, selector string) []corev1.Pod {
	t.Helper()
	list, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return list.Items
}

func simPod(t *testing.T, cs kubernetes.Interface, name string) *corev1.Pod {
	t.Helper()
	pod, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

func simPodNames(pods []corev1.Pod) []string {
	var names []string
	for _, pod := range pods {
		names = append(names, pod.Name)
	}
	return names
}

// simPodImages lists the first container images of the selected pods
// that are not being deleted, sorted.
func simPodImages(t *testing.T, cs kubernetes.Interface, selector string) []string {
	t.Helper()
	var images []string
	for _, pod := range simPods(t, cs, selector) {
		if pod.DeletionTimestamp == nil {
			images = append(images, pod.Spec.Containers[0].Image)
		}
	}
	slices.Sort(images)
	return images
}

func simPodCondition(pod *corev1.Pod, kind corev1.PodConditionType) *corev1.PodCondition {
	_, c := podutil.GetPodCondition(&pod.Status, kind)
	return c
}

// simRunningReady reports whether the pod runs and is Ready.
func simRunningReady(pod *corev1.Pod) bool {
	c := simPodCondition(pod, corev1.PodReady)
	return pod.Status.Phase == corev1.PodRunning && c != nil && c.Status == corev1.ConditionTrue
}

func simWaitRunning(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	waitFor(t, 30*time.Second, "pod "+name+" to run", func() bool { return simRunningReady(simPod(t, cs, name)) })
}

// simExitCode is the exit code of the pod's first container, or -1 when
// it has not terminated.
func simExitCode(pod *corev1.Pod) int32 {
	if len(pod.Status.ContainerStatuses) == 0 || pod.Status.ContainerStatuses[0].State.Terminated == nil {
		return -1
	}
	return pod.Status.ContainerStatuses[0].State.Terminated.ExitCode
}

func simReadyReplicas(t *testing.T, cs kubernetes.Interface, name string) int32 {
	t.Helper()
	rs, err := cs.AppsV1().ReplicaSets("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rs.Status.ReadyReplicas
}

func simDeploymentCondition(d *appsv1.Deployment, kind appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == kind {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

func simJobCondition(job *batchv1.Job, kind batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if job.Status.Conditions[i].Type == kind {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// simWaitJobFinished waits for the Job to be Complete or Failed.
func simWaitJobFinished(t *testing.T, cs kubernetes.Interface, name string, timeout time.Duration) *batchv1.Job {
	t.Helper()
	var job *batchv1.Job
	waitFor(t, timeout, "Job "+name+" to finish", func() bool {
		var err error
		if job, err = cs.BatchV1().Jobs("default").Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, kind := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed} {
			if c := simJobCondition(job, kind); c != nil && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	})
	return job
}

// simSliceEndpoints returns the addresses of the ready endpoints in a
// Service's EndpointSlices, sorted, and how many endpoints they list.
func simSliceEndpoints(t *testing.T, cs kubernetes.Interface, service string) (ready []string, all int) {
	t.Helper()
	list, err := cs.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + service})
	if err != nil {
		t.Fatal(err)
	}
	for _, slice := range list.Items {
		for _, e := range slice.Endpoints {
			all++
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				for _, a := range e.Addresses {
					if _, err := netip.ParseAddr(a); err != nil {
						t.Errorf("endpoint address %q: %v", a, err)
					}
					ready = append(ready, a)
				}
			}
		}
	}
	slices.Sort(ready)
	return ready, all
}

// simRevisions are the revisions kubectl rollout history lists.
func simRevisions(out string) []string {
	var revs []string
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) > 0 && regexp.MustCompile(`^\d+$`).MatchString(fields[0]) {
			revs = append(revs, fields[0])
		}
	}
	return revs
}

func simKeys(set map[string]bool) []string {
	var keys []string
	for key := range set {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

func simSameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestPodLogs: pods/log is served as kube-apiserver serves it: a
// simulated node's containers have written nothing (kubectl logs prints
// nothing and succeeds, following too); the container is chosen and
// checked with kube's rules; a pod with no node has no log (204); the
// log of a node kapi does not simulate is asked of its kubelet, with
// kube-apiserver's errors when there is none to ask.
func TestPodLogs(t *testing.T) {
	k := startKapi(t, "--simulated-nodes=1")
	k.mustKubectl("run", "web", "--image=nginx")
	manifest := filepath.Join(t.TempDir(), "pods.json")
	if err := writeFile(manifest, `{"apiVersion":"v1","kind":"List","items":[
	{"apiVersion":"v1","kind":"Pod","metadata":{"name":"two"},"spec":{"containers":[{"name":"a","image":"nginx"},{"name":"b","image":"nginx"}]}},
	{"apiVersion":"v1","kind":"Pod","metadata":{"name":"unscheduled"},"spec":{"schedulerName":"nobody","containers":[{"name":"c","image":"nginx"}]}},
	{"apiVersion":"v1","kind":"Node","metadata":{"name":"hand-made"}},
	{"apiVersion":"v1","kind":"Pod","metadata":{"name":"elsewhere"},"spec":{"nodeName":"hand-made","containers":[{"name":"c","image":"nginx"}]}}]}`); err != nil {
		t.Fatal(err)
	}
	k.mustKubectl("create", "-f", manifest)
	pods := k.clientset().CoreV1().Pods("default")
	waitFor(t, 30*time.Second, "the pods to run", func() bool {
		for _, name := range []string{"web", "two"} {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			if err != nil || p.Status.Phase != corev1.PodRunning {
				return false
			}
		}
		return true
	})
	for _, args := range [][]string{{"logs", "web"}, {"logs", "web", "-f"}, {"logs", "two", "-c", "b"}} {
		if out, err := k.kubectl(args...); err != nil || out != "" {
			t.Errorf("kubectl %v: %q %v, want no output and success", args, out, err)
		}
	}
	const logs = "/api/v1/namespaces/default/pods/"
	for _, tc := range []struct {
		path    string
		code    int
		message string
	}{
		{logs + "two/log", http.StatusBadRequest, "a container name must be specified for pod two, choose one of: [a b]"},
		{logs + "web/log?container=nope", http.StatusBadRequest, "container nope is not valid for pod web"},
		{logs + "web/log?previous=true", http.StatusBadRequest, `previous terminated container \"web\" in pod \"web\" not found`},
		{logs + "web/log?tailLines=x", http.StatusBadRequest, `strconv.ParseInt: parsing \"x\": invalid syntax`},
		{logs + "web/log?sinceSeconds=-1", http.StatusUnprocessableEntity, "PodLogOptions \\\"web\\\" is invalid: sinceSeconds: Invalid value: -1: must be greater than 0"},
		{logs + "elsewhere/log", http.StatusInternalServerError, "no preferred addresses found; known addresses: []"},
		{logs + "nosuch/log", http.StatusNotFound, `pods \"nosuch\" not found`},
	} {
		resp, body := rawDo(t, k, http.MethodGet, tc.path, "", "", nil)
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.message) {
			t.Errorf("GET %s: %d %s, want %d %s", tc.path, resp.StatusCode, body, tc.code, tc.message)
		}
	}
	resp, body := rawDo(t, k, http.MethodGet, logs+"web/log", "", "", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/plain" || len(body) != 0 {
		t.Errorf("a simulated container's log: %d %q %q, want 200, text/plain and nothing", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if resp, body := rawDo(t, k, http.MethodGet, logs+"unscheduled/log", "", "", nil); resp.StatusCode != http.StatusNoContent {
		t.Errorf("the log of a pod with no node: %d %s, want 204", resp.StatusCode, body)
	}
}

// TestNodeLifecycle: kube's node lifecycle and taint eviction controllers
// watch the nodes. A node whose kubelet reports it not ready is tainted,
// and its pods that tolerate that for a second only are deleted; the
// simulated nodes, whose kubelets kapi plays, stay Ready and untainted.
func TestNodeLifecycle(t *testing.T) {
	k := startKapi(t, "--simulated-nodes=1")
	cs := k.clientset()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ailing"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}}}}
	created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// TaintNodesByCondition admits a node with the not-ready taint, as
	// kube-apiserver's default plugins do.
	if len(created.Spec.Taints) != 1 || created.Spec.Taints[0].Key != "node.kubernetes.io/not-ready" || created.Spec.Taints[0].Effect != corev1.TaintEffectNoSchedule {
		t.Errorf("a new node's taints: %+v", created.Spec.Taints)
	}
	waitFor(t, 30*time.Second, "the not-ready node to be tainted", func() bool {
		n, err := cs.CoreV1().Nodes().Get(ctx, "ailing", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var taints []string
		for _, taint := range n.Spec.Taints {
			taints = append(taints, taint.Key+":"+string(taint.Effect))
		}
		slices.Sort(taints)
		return slices.Equal(taints, []string{"node.kubernetes.io/not-ready:NoExecute", "node.kubernetes.io/not-ready:NoSchedule"})
	})
	second := int64(1)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "short-lived"}, Spec: corev1.PodSpec{NodeName: "ailing",
		Containers: []corev1.Container{{Name: "c", Image: "x"}},
		Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &second}}}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Deleted gracefully: it stays Terminating, as no kubelet stops it.
	waitFor(t, 30*time.Second, "the pod to be evicted", func() bool {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "short-lived", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p.DeletionTimestamp != nil
	})
	sim, err := cs.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	if err != nil || len(sim.Spec.Taints) != 0 {
		t.Errorf("the simulated node: %v, taints %v", err, sim.Spec.Taints)
	}
}
