package e2e

import (
	"strings"
	"testing"
	"time"

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
	k.mustKubectl("scale", "deployment", "web", "--replicas=1")
	waitFor(t, 20*time.Second, "scaling down to one pod", func() bool { return pods("app=web") == 1 })

	waitFor(t, 20*time.Second, "the Service's EndpointSlice", func() bool {
		out, _ := k.kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name=web", "-o", "name")
		return strings.TrimSpace(out) != ""
	})
	waitFor(t, 20*time.Second, "the Job's pod", func() bool { return pods("job-name=once") == 1 })

	k.mustKubectl("delete", "deployment", "web", "--cascade=foreground", "--wait=true", "--timeout=60s")
	waitFor(t, 30*time.Second, "the ReplicaSet and pods to go with the Deployment", func() bool {
		out, _ := k.kubectl("get", "rs", "-l", "app=web", "-o", "name")
		return strings.TrimSpace(out) == "" && pods("app=web") == 0
	})
}
