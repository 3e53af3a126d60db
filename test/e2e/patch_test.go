package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestPatchTypesWithClientGo(t *testing.T) {
	k := startKapi(t)
	pods := k.clientset().CoreV1().Pods("default")
	_, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "1"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "one", Image: "busybox:1"}, {Name: "two", Image: "busybox:1"},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// Strategic merge: containers merge by name; a new one goes first (in
	// a pod template, since a pod's containers cannot be added to).
	templates := k.clientset().CoreV1().PodTemplates("default")
	_, err = templates.Create(ctx, &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "t"},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "one", Image: "busybox:1"}, {Name: "two", Image: "busybox:1"},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pt, err := templates.Patch(ctx, "t", types.StrategicMergePatchType,
		[]byte(`{"template":{"spec":{"containers":[{"name":"zero","image":"x"}]}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := containerList(pt.Template.Spec); got != "zero=x one=busybox:1 two=busybox:1" {
		t.Fatalf("containers after strategic merge: %v", got)
	}
	p, err := pods.Patch(ctx, "p", types.StrategicMergePatchType,
		[]byte(`{"spec":{"containers":[{"name":"two","image":"busybox:2"}]}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := containerList(p.Spec); got != "one=busybox:1 two=busybox:2" {
		t.Fatalf("containers after strategic merge of an existing item: %v", got)
	}
	// Adding a container to a pod is refused as kube-apiserver refuses it.
	_, err = pods.Patch(ctx, "p", types.StrategicMergePatchType,
		[]byte(`{"spec":{"containers":[{"name":"zero","image":"x"}]}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "pod updates may not add or remove containers") {
		t.Fatalf("adding a container to a pod: %v, want 422", err)
	}

	// Merge patch replaces lists and deletes with null.
	p, err = pods.Patch(ctx, "p", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":null,"b":"2"}}}`), metav1.PatchOptions{})
	if err != nil || p.Labels["b"] != "2" || p.Labels["a"] != "" {
		t.Fatalf("merge patch: labels %v, %v", p.Labels, err)
	}

	// JSON patch, with a test that passes and one that fails.
	p, err = pods.Patch(ctx, "p", types.JSONPatchType,
		[]byte(`[{"op":"test","path":"/metadata/labels/b","value":"2"},{"op":"add","path":"/metadata/labels/c","value":"3"}]`), metav1.PatchOptions{})
	if err != nil || p.Labels["c"] != "3" {
		t.Fatalf("json patch: labels %v, %v", p.Labels, err)
	}
	_, err = pods.Patch(ctx, "p", types.JSONPatchType, []byte(`[{"op":"test","path":"/metadata/labels/b","value":"9"}]`), metav1.PatchOptions{})
	if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Code != 422 ||
		status.Status().Message != "the server rejected our request due to an error in our request" {
		t.Fatalf("failed test op: %v", err)
	}

	// A patch carrying a stale resourceVersion is a conflict.
	_, err = pods.Patch(ctx, "p", types.MergePatchType, []byte(`{"metadata":{"resourceVersion":"1","labels":{"d":"4"}}}`), metav1.PatchOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale conditional patch: %v", err)
	}
	// Patching a missing object is NotFound; a non-JSON body is BadRequest.
	if _, err := pods.Patch(ctx, "missing", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("patch of missing object: %v", err)
	}
	if _, err := pods.Patch(ctx, "p", types.MergePatchType, []byte(`{`), metav1.PatchOptions{}); !apierrors.IsBadRequest(err) {
		t.Fatalf("malformed patch: %v", err)
	}
	// Status is patched through its sub-resource only.
	p, err = pods.Patch(ctx, "p", types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`), metav1.PatchOptions{}, "status")
	if err != nil || p.Status.Phase != corev1.PodRunning {
		t.Fatalf("status patch: phase %q, %v", p.Status.Phase, err)
	}
	p, err = pods.Patch(ctx, "p", types.MergePatchType, []byte(`{"status":{"phase":"Failed"}}`), metav1.PatchOptions{})
	if err != nil || p.Status.Phase != corev1.PodRunning {
		t.Fatalf("main-resource patch changed status: phase %q, %v", p.Status.Phase, err)
	}
	// Dry run changes nothing.
	if _, err := pods.Patch(ctx, "p", types.MergePatchType, []byte(`{"metadata":{"labels":{"dry":"run"}}}`), metav1.PatchOptions{DryRun: []string{"All"}}); err != nil {
		t.Fatal(err)
	}
	if p, _ := pods.Get(ctx, "p", metav1.GetOptions{}); p.Labels["dry"] != "" {
		t.Fatalf("dry-run patch was stored")
	}
}

func TestKubectlApplyAndPatch(t *testing.T) {
	k := startKapi(t)
	dir := t.TempDir()
	manifest := filepath.Join(dir, "app.yaml")
	write := func(image, data string) {
		os.WriteFile(manifest, []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: c
        image: `+image+`
---
apiVersion: v1
kind: ConfigMap
metadata: {name: conf}
data: {`+data+`}
`), 0o644)
	}
	write("nginx:1", `a: "1", gone: "x"`)
	if out := k.mustKubectl("apply", "-f", manifest); !strings.Contains(out, "deployment.apps/web created") {
		t.Fatalf("first apply: %s", out)
	}
	write("nginx:2", `a: "2"`)
	if out := k.mustKubectl("apply", "-f", manifest); !strings.Contains(out, "deployment.apps/web configured") {
		t.Fatalf("second apply: %s", out)
	}
	if got := k.mustKubectl("get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}/{.metadata.generation}"); got != "nginx:2/2" {
		t.Fatalf("after apply image/generation = %q", got)
	}
	// The field the manifest dropped is removed (three-way merge).
	if got := k.mustKubectl("get", "configmap", "conf", "-o", "jsonpath={.data}"); got != `{"a":"2"}` {
		t.Fatalf("configmap data after apply: %s", got)
	}
	if out := k.mustKubectl("apply", "-f", manifest); !strings.Contains(out, "unchanged") {
		t.Fatalf("third apply should change nothing: %s", out)
	}
	k.mustKubectl("patch", "configmap", "conf", "--type=merge", "-p", `{"data":{"b":"3"}}`)
	k.mustKubectl("patch", "deployment", "web", "-p", `{"spec":{"replicas":4}}`)
	k.mustKubectl("label", "configmap", "conf", "team=x")
	if got := k.mustKubectl("get", "configmap", "conf", "-o", "jsonpath={.data.b}/{.metadata.labels.team}"); got != "3/x" {
		t.Fatalf("after patch and label: %q", got)
	}
	out, err := k.kubectl("patch", "configmap", "conf", "--type=json", "-p", `[{"op":"test","path":"/data/b","value":"0"}]`)
	if err == nil || !strings.Contains(out, "the server rejected our request due to an error in our request") {
		t.Fatalf("failed json patch test: %v\n%s", err, out)
	}
}

func containerList(spec corev1.PodSpec) string {
	var out []string
	for _, c := range spec.Containers {
		out = append(out, c.Name+"="+c.Image)
	}
	return strings.Join(out, " ")
}

func TestScaleSubresource(t *testing.T) {
	k := startKapi(t, withoutDeploymentController)
	k.mustKubectl("create", "deployment", "web", "--image=nginx", "--replicas=2")
	if out := k.mustKubectl("scale", "deployment", "web", "--replicas=5"); !strings.Contains(out, "scaled") {
		t.Fatalf("kubectl scale: %s", out)
	}
	deployments := k.clientset().AppsV1().Deployments("default")
	s, err := deployments.GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Spec.Replicas != 5 || s.Status.Selector != "app=web" {
		t.Fatalf("scale = %+v", s)
	}
	s.Spec.Replicas = 7
	if _, err := deployments.UpdateScale(ctx, "web", s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	d, err := deployments.Get(ctx, "web", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 7 || d.Generation != 3 {
		t.Fatalf("deployment after scale updates: replicas %d generation %d, %v", *d.Spec.Replicas, d.Generation, err)
	}
	// A Scale PUT with an unknown field is refused under Strict and
	// warned of otherwise, as any body.
	path := "/apis/apps/v1/namespaces/default/deployments/web/scale"
	body := `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"web","namespace":"default"},"spec":{"bogus":1,"replicas":7}}`
	resp, out := rawDo(t, k, http.MethodPut, path+"?fieldValidation=Strict", "application/json", "", []byte(body))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(out), `Scale in version \"v1\" cannot be handled as a Scale: strict decoding error: unknown field \"spec.bogus\"`) {
		t.Errorf("a strict Scale PUT with an unknown field: %d %s", resp.StatusCode, out)
	}
	resp, out = rawDo(t, k, http.MethodPut, path, "application/json", "", []byte(body))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Warning") != `299 - "unknown field \"spec.bogus\""` {
		t.Errorf("a Scale PUT with an unknown field: %d %v %s", resp.StatusCode, resp.Header.Values("Warning"), out)
	}
	// The Scale's resourceVersion is a precondition on the deployment.
	s.Spec.Replicas = 1
	if _, err := deployments.UpdateScale(ctx, "web", s, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale scale update: %v", err)
	}
	s.ResourceVersion = ""
	s.Spec.Replicas = -1
	if _, err := deployments.UpdateScale(ctx, "web", s, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("negative replicas: %v", err)
	}
	if _, err := deployments.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	if d, _ := deployments.Get(ctx, "web", metav1.GetOptions{}); *d.Spec.Replicas != 3 {
		t.Fatalf("after scale patch: %d replicas", *d.Spec.Replicas)
	}
}
