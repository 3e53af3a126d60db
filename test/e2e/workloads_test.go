package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWorkloadControllers: kube-controller-manager's workload controllers
// run inside kapi: a Deployment gets a ReplicaSet and its pods (Pending:
// nothing runs them), scaling deletes pods, a Service gets its
// EndpointSlice, a Job its pod, and a foreground delete of the
// Deployment takes its ReplicaSet and pods with it.
func TestWorkloadControllers(t *testing.T) {
	k := startKapi(t)
	cs := k.clientset()
	k.mustKubectl("create", "deployment", "web", "--image=nginx", "--replicas=3")
	k.mustKubectl("expose", "deployment", "web", "--port=80")
	k.mustKubectl("create", "job", "once", "--image=busybox")

	pods := func(selector string) int {
		list, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Items)
	}
	waitFor(t, 20*time.Second, "the Deployment's three pods", func() bool { return pods("app=web") == 3 })
	rs := k.mustKubectl("get", "rs", "-l", "app=web", "-o", "jsonpath={.items[0].metadata.ownerReferences[0].kind}/{.items[0].metadata.ownerReferences[0].name} {.items[0].status.replicas}")
	if rs != "Deployment/web 3" {
		t.Errorf("ReplicaSet owner and replicas = %q", rs)
	}
	if rev := k.mustKubectl("get", "deployment", "web", "-o", `jsonpath={.metadata.annotations.deployment\.kubernetes\.io/revision}`); rev != "1" {
		t.Errorf("deployment revision annotation = %q, want 1", rev)
	}
	k.mustKubectl("create", "pdb", "web", "--selector=app=web", "--min-available=1")
	waitFor(t, 20*time.Second, "the disruption controller to count the budget's pods", func() bool {
		out, _ := k.kubectl("get", "pdb", "web", "-o", "jsonpath={.status.expectedPods}/{.status.disruptionsAllowed}")
		return out == "3/0" // none Ready: nothing runs the pods
	})
	k.mustKubectl("scale", "deployment", "web", "--replicas=1")
	waitFor(t, 20*time.Second, "scaling down to one pod", func() bool { return pods("app=web") == 1 })

	waitFor(t, 20*time.Second, "the Service's EndpointSlice", func() bool {
		out, _ := k.kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name=web", "-o", "name")
		return strings.TrimSpace(out) != ""
	})
	waitFor(t, 20*time.Second, "the Job's pod", func() bool { return pods("job-name=once") == 1 })

	// A Service without a selector, whose Endpoints its user writes, gets
	// them mirrored into an EndpointSlice.
	k.mustKubectl("create", "service", "clusterip", "external", "--tcp=80:8080")
	k.mustKubectl("patch", "service", "external", "--type=json", `-p=[{"op":"remove","path":"/spec/selector"}]`)
	apply(t, k, `apiVersion: v1
kind: Endpoints
metadata: {name: external}
subsets:
- addresses: [{ip: 10.9.8.7}]
  ports: [{port: 8080, name: tcp}]
`)
	waitFor(t, 20*time.Second, "the Endpoints mirrored", func() bool {
		out, _ := k.kubectl("get", "endpointslices", "-l", "endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io",
			"-o", "jsonpath={.items[*].endpoints[*].addresses[*]}")
		return out == "10.9.8.7"
	})

	k.mustKubectl("delete", "deployment", "web", "--cascade=foreground", "--wait=true", "--timeout=60s")
	waitFor(t, 30*time.Second, "the ReplicaSet and pods to go with the Deployment", func() bool {
		out, _ := k.kubectl("get", "rs", "-l", "app=web", "-o", "name")
		return strings.TrimSpace(out) == "" && pods("app=web") == 0
	})
}

// TestResourceQuota: the quota controller fills status.used, quota
// admission refuses what would exceed it with kube-apiserver's message,
// and a delete gives the usage back.
func TestResourceQuota(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	k.mustKubectl("create", "namespace", "team")
	k.mustKubectl("-n", "team", "create", "quota", "q", "--hard=configmaps=2,pods=1")
	used := func() string {
		out, _ := k.kubectl("-n", "team", "get", "quota", "q", "-o", "jsonpath={.status.used.configmaps}/{.status.used.pods}")
		return out
	}
	waitFor(t, 20*time.Second, "the quota's usage to be computed", func() bool { return used() == "0/0" })
	k.mustKubectl("-n", "team", "create", "configmap", "a")
	k.mustKubectl("-n", "team", "create", "configmap", "b")
	out, err := k.kubectl("-n", "team", "create", "configmap", "c")
	if err == nil || !strings.Contains(out, `configmaps "c" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=2, limited: configmaps=2`) {
		t.Errorf("a third configmap: %v\n%s", err, out)
	}
	k.mustKubectl("-n", "team", "run", "p1", "--image=x")
	if out, err := k.kubectl("-n", "team", "run", "p2", "--image=x"); err == nil || !strings.Contains(out, "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1") {
		t.Errorf("a second pod: %v\n%s", err, out)
	}
	k.mustKubectl("-n", "team", "delete", "configmap", "a")
	waitFor(t, 20*time.Second, "the deleted configmap to be given back", func() bool { return used() == "1/1" })
	k.mustKubectl("-n", "team", "create", "configmap", "c")
}

// TestLimitRange: LimitRanger admission defaults a pod's container
// resources from its namespace's LimitRange (with kube-apiserver's
// annotation) and refuses a container above the maximum.
func TestLimitRange(t *testing.T) {
	k := startKapi(t)
	apply(t, k, `apiVersion: v1
kind: LimitRange
metadata: {name: lr}
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 100m, memory: 128Mi}
    max: {cpu: "1"}
`)
	k.mustKubectl("run", "p", "--image=x")
	if got := k.mustKubectl("get", "pod", "p", "-o", "jsonpath={.spec.containers[0].resources.requests.cpu}/{.spec.containers[0].resources.limits.memory}"); got != "100m/256Mi" {
		t.Errorf("defaulted resources = %q, want 100m/256Mi", got)
	}
	if got := k.mustKubectl("get", "pod", "p", "-o", `jsonpath={.metadata.annotations.kubernetes\.io/limit-ranger}`); !strings.Contains(got, "LimitRanger plugin set: cpu, memory request for container p") {
		t.Errorf("limit-ranger annotation = %q", got)
	}
	out, err := k.kubectl("run", "big", "--image=x", "--overrides",
		`{"spec":{"containers":[{"name":"big","image":"x","resources":{"limits":{"cpu":"2"}}}]}}`)
	if err == nil || !strings.Contains(out, `pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2`) {
		t.Errorf("a container above the maximum: %v\n%s", err, out)
	}
}

// TestEviction: pods/eviction deletes a pod no budget protects (a pending
// one always), refuses with kube-apiserver's 429 when the pod's
// PodDisruptionBudget allows no disruption, and takes one when it does. It
// takes an Eviction of policy/v1beta1 too, as kube-apiserver does (older
// clients send one).
func TestEviction(t *testing.T) {
	k := startKapi(t)
	cs := k.clientset()
	evict := func(name string) error {
		return cs.CoreV1().Pods("default").EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}})
	}
	k.mustKubectl("run", "pending", "--image=x")
	if err := cs.CoreV1().Pods("default").EvictV1beta1(ctx, &policyv1beta1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "pending", Namespace: "default"}}); err != nil {
		t.Fatalf("evicting a pending pod with a policy/v1beta1 Eviction: %v", err)
	}
	if _, err := cs.CoreV1().Pods("default").Get(ctx, "pending", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the evicted pod is still there: %v", err)
	}

	k.mustKubectl("run", "web", "--image=x", "--labels=app=web")
	k.mustKubectl("patch", "pod", "web", "--subresource=status", "--type=merge", "-p",
		`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
	k.mustKubectl("create", "pdb", "web", "--selector=app=web", "--min-available=1")
	waitFor(t, 20*time.Second, "the budget's status", func() bool {
		out, _ := k.kubectl("get", "pdb", "web", "-o", "jsonpath={.status.currentHealthy}/{.status.desiredHealthy}")
		return out == "1/1"
	})
	err := evict("web")
	if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "Cannot evict pod as it would violate the pod's disruption budget.") {
		t.Fatalf("evicting the budget's only healthy pod: %v, want 429", err)
	}
	if status, ok := err.(apierrors.APIStatus); !ok || len(status.Status().Details.Causes) != 1 ||
		status.Status().Details.Causes[0].Message != "The disruption budget web needs 1 healthy pods and has 1 currently" {
		t.Errorf("429 causes: %+v", err)
	}

	k.mustKubectl("patch", "pdb", "web", "--type=merge", "-p", `{"spec":{"minAvailable":0}}`)
	waitFor(t, 20*time.Second, "the budget to allow a disruption", func() bool {
		out, _ := k.kubectl("get", "pdb", "web", "-o", "jsonpath={.status.disruptionsAllowed}")
		return out == "1"
	})
	// The pod's own version as a precondition: the DisruptionTarget
	// condition moves it on, and the deletion follows it (kapi refused
	// with a 409 after taking the disruption).
	web, err := cs.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods("default").EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &web.ResourceVersion}}}); err != nil {
		t.Fatalf("evicting with a disruption allowed, at the pod's version: %v", err)
	}
	waitFor(t, 20*time.Second, "the evicted pod to go", func() bool {
		_, err := cs.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	pdb, err := cs.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	recorded := false
	for _, m := range pdb.ManagedFields {
		recorded = recorded || m.Manager == "kube-apiserver" && m.Subresource == "status"
	}
	if !recorded {
		t.Errorf("the eviction's write of the budget's status is not in its managed fields as kube-apiserver's: %+v", pdb.ManagedFields)
	}

	// Running pods no budget covers, evicted with a precondition on their
	// version (an empty one is none).
	for name, rv := range map[string]func(*corev1.Pod) string{"named": func(p *corev1.Pod) string { return p.ResourceVersion }, "empty": func(*corev1.Pod) string { return "" }} {
		k.mustKubectl("run", name, "--image=x")
		k.mustKubectl("patch", "pod", name, "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Running"}}`)
		pod, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		version := rv(pod)
		if err := cs.CoreV1().Pods("default").EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &version}}}); err != nil {
			t.Errorf("evicting a running pod at version %q: %v", version, err)
		}
	}
	stale := "1"
	k.mustKubectl("run", "stale", "--image=x")
	// kubectl asks sub-resources without tables for a Table first, then
	// JSON, which they answer (kapi refused with a 406).
	for _, sub := range []string{"ephemeralcontainers", "resize", "status"} {
		if out, err := k.kubectl("get", "pod", "stale", "--subresource="+sub); err != nil || !strings.Contains(out, "stale") {
			t.Errorf("kubectl get pod --subresource=%s: %v\n%s", sub, err, out)
		}
	}
	k.mustKubectl("patch", "pod", "stale", "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Running"}}`)
	err = cs.CoreV1().Pods("default").EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "stale", Namespace: "default"},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}}})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `Operation cannot be fulfilled on Pod "stale": the ResourceVersion in the precondition (1) does not match`) {
		t.Errorf("evicting at a stale version: %v, want kube's 409 naming Pod", err)
	}
	pod, err := cs.CoreV1().Pods("default").Get(ctx, "stale", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			t.Errorf("a refused eviction marked the pod: %+v", c)
		}
	}
}

// TestStorageObjectInUseProtection: PersistentVolumes and their claims are
// created with kube's protection finalizers, which the protection
// controllers take off once nothing uses them, so that they go.
func TestStorageObjectInUseProtection(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	apply(t, k, `apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-protected}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /srv/pv}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: pvc-protected}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
  storageClassName: ""
  volumeName: pv-protected
`)
	if out := k.mustKubectl("get", "pv", "pv-protected", "-o", "jsonpath={.metadata.finalizers}"); out != `["kubernetes.io/pv-protection"]` {
		t.Errorf("PersistentVolume finalizers %s", out)
	}
	if out := k.mustKubectl("get", "pvc", "pvc-protected", "-o", "jsonpath={.metadata.finalizers}"); out != `["kubernetes.io/pvc-protection"]` {
		t.Errorf("PersistentVolumeClaim finalizers %s", out)
	}
	k.mustKubectl("delete", "pvc", "pvc-protected", "--timeout=30s")
	k.mustKubectl("delete", "pv", "pv-protected", "--timeout=30s")
}
