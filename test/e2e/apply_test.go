package e2e

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

func TestServerSideApplyWithClientGo(t *testing.T) {
	k := startKapi(t)
	cms := k.clientset().CoreV1().ConfigMaps("default")

	// Apply creates the object, owned by the applying manager.
	cm, err := cms.Apply(ctx, corev1ac.ConfigMap("app", "default").WithData(map[string]string{"a": "1", "b": "2"}),
		metav1.ApplyOptions{FieldManager: "mgr-a"})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["a"] != "1" || managerOf(cm.ManagedFields, "mgr-a") != metav1.ManagedFieldsOperationApply {
		t.Fatalf("created by apply: data %v managedFields %+v", cm.Data, cm.ManagedFields)
	}

	// Another manager applying a field mgr-a owns with a different value
	// conflicts, naming the field and the manager.
	_, err = cms.Apply(ctx, corev1ac.ConfigMap("app", "default").WithData(map[string]string{"a": "9"}),
		metav1.ApplyOptions{FieldManager: "mgr-b"})
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Code != 409 || status.Status().Details == nil || len(status.Status().Details.Causes) != 1 {
		t.Fatalf("conflicting apply: %v", err)
	}
	cause := status.Status().Details.Causes[0]
	if cause.Type != metav1.CauseTypeFieldManagerConflict || cause.Field != ".data.a" || cause.Message != `conflict with "mgr-a"` {
		t.Fatalf("conflict cause = %+v", cause)
	}
	// Forcing takes the field over.
	cm, err = cms.Apply(ctx, corev1ac.ConfigMap("app", "default").WithData(map[string]string{"a": "9"}),
		metav1.ApplyOptions{FieldManager: "mgr-b", Force: true})
	if err != nil || cm.Data["a"] != "9" {
		t.Fatalf("forced apply: %v %v", err, cm.Data)
	}
	// The Python client sends force=True: any value but false or 0 forces,
	// as kube's parameter codec reads it.
	err = k.clientset().CoreV1().RESTClient().Patch(types.ApplyPatchType).Namespace("default").Resource("configmaps").Name("app").
		Param("fieldManager", "mgr-c").Param("force", "True").Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app"},"data":{"a":"10"}}`)).
		Do(ctx).Into(cm)
	if err != nil || cm.Data["a"] != "10" {
		t.Fatalf("an apply with force=True: %v %v", err, cm.Data)
	}
	// Any force on another patch is refused, false too.
	err = k.clientset().CoreV1().RESTClient().Patch(types.MergePatchType).Namespace("default").Resource("configmaps").Name("app").
		Param("force", "false").Body([]byte(`{}`)).Do(ctx).Error()
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "force: Forbidden: may not be specified for non-apply patch") {
		t.Errorf("a merge patch with force=false: %v", err)
	}

	// A manager that stops applying a field it alone owns removes it.
	cm, err = cms.Apply(ctx, corev1ac.ConfigMap("app", "default").WithData(map[string]string{}),
		metav1.ApplyOptions{FieldManager: "mgr-a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, kept := cm.Data["b"]; kept || cm.Data["a"] != "10" {
		t.Fatalf("after mgr-a stopped applying b: %v", cm.Data)
	}

	// Updates are tracked too, under the client's manager name.
	cm.Data["c"] = "3"
	cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "editor"})
	if err != nil || managerOf(cm.ManagedFields, "editor") != metav1.ManagedFieldsOperationUpdate {
		t.Fatalf("update tracking: %v %+v", err, cm.ManagedFields)
	}

	// fieldManager is required for apply.
	_, err = cms.Patch(ctx, "app", types.ApplyPatchType, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app"}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "fieldManager: Required value") {
		t.Fatalf("apply without fieldManager: %v", err)
	}
	// A field the type does not have fails the merge: kube-apiserver
	// answers 500, with no reason, and the field manager's message.
	_, err = cms.Patch(ctx, "app", types.ApplyPatchType, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app"},"bogus":1}`),
		metav1.PatchOptions{FieldManager: "x", FieldValidation: "Strict"})
	var refusal apierrors.APIStatus
	if !errors.As(err, &refusal) || refusal.Status().Code != http.StatusInternalServerError || refusal.Status().Reason != metav1.StatusReasonUnknown ||
		!strings.Contains(err.Error(), ".bogus: field not declared in schema") {
		t.Fatalf("apply with an unknown field: %v, want kube's 500", err)
	}
}

func managerOf(entries []metav1.ManagedFieldsEntry, manager string) metav1.ManagedFieldsOperationType {
	for _, e := range entries {
		if e.Manager == manager {
			return e.Operation
		}
	}
	return ""
}

func TestKubectlServerSideApply(t *testing.T) {
	k := startKapi(t)
	manifest := filepath.Join(t.TempDir(), "deploy.yaml")
	write := func(replicas, image string) {
		os.WriteFile(manifest, []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: `+replicas+`
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: `+image+`
        ports: [{containerPort: 80}]
`), 0o644)
	}
	write("2", "nginx:1")
	if out := k.mustKubectl("apply", "--server-side", "-f", manifest); !strings.Contains(out, "serverside-applied") {
		t.Fatalf("first server-side apply: %s", out)
	}
	// Another manager takes replicas; the manifest's apply then conflicts.
	k.mustKubectl("scale", "deployment", "web", "--replicas=5")
	write("3", "nginx:2")
	out, err := k.kubectl("apply", "--server-side", "-f", manifest)
	if err == nil || !strings.Contains(out, "conflict") || !strings.Contains(out, ".spec.replicas") {
		t.Fatalf("conflicting server-side apply: %v\n%s", err, out)
	}
	k.mustKubectl("apply", "--server-side", "--force-conflicts", "-f", manifest)
	if got := k.mustKubectl("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}/{.spec.template.spec.containers[0].image}"); got != "3/nginx:2" {
		t.Fatalf("after forced apply: %s", got)
	}
	if got := k.mustKubectl("get", "deployment", "web", "-o", "jsonpath={.metadata.managedFields[*].manager}"); !strings.Contains(got, "kubectl") {
		t.Fatalf("managers: %s", got)
	}
	// Server-side dry run changes nothing.
	write("7", "nginx:3")
	k.mustKubectl("apply", "--server-side", "--dry-run=server", "-f", manifest)
	if got := k.mustKubectl("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); got != "3" {
		t.Fatalf("dry run stored replicas %s", got)
	}
	_ = corev1.ConfigMap{}
}

func TestKubectlExplainAndValidate(t *testing.T) {
	k := startKapi(t)
	out := k.mustKubectl("explain", "pods.spec.containers")
	for _, want := range []string{"KIND:       Pod", "VERSION:    v1", "FIELD: containers <[]Container>",
		"List of containers belonging to the pod.", "image\t<string>"} {
		if !strings.Contains(out, want) {
			t.Fatalf("kubectl explain lacks %q:\n%s", want, out)
		}
	}
	out = k.mustKubectl("explain", "deployment.spec.replicas")
	if !strings.Contains(out, "GROUP:      apps") || !strings.Contains(out, "FIELD: replicas <integer>") {
		t.Fatalf("kubectl explain deployment.spec.replicas:\n%s", out)
	}
	// The types of apiextensions and the aggregator are described as kube
	// describes them (their modules' generated definitions).
	for _, field := range []string{"crd.spec.versions.additionalPrinterColumns.jsonPath", "apiservice.spec.caBundle"} {
		out := k.mustKubectl("explain", field)
		_, description, _ := strings.Cut(out, "DESCRIPTION:")
		if strings.TrimSpace(description) == "" {
			t.Errorf("kubectl explain %s has no description:\n%s", field, out)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\nbogus: 1\n"), 0o644)
	out = k.mustKubectl("create", "-f", bad, "--validate=ignore")
	if strings.Contains(out, "Warning") {
		t.Fatalf("--validate=ignore printed a warning:\n%s", out)
	}
	// Client-side apply with a server-side dry run stores nothing.
	k.mustKubectl("apply", "-f", bad, "--validate=false", "--dry-run=server")
	if got := k.mustKubectl("get", "configmap", "bad", "-o", "jsonpath={.metadata.annotations}"); strings.Contains(got, "last-applied") {
		t.Fatalf("dry-run apply stored its annotation: %s", got)
	}
}

func TestDryRunDeleteAndProtobufCreateWithResourceVersion(t *testing.T) {
	k := startKapi(t)
	cms := k.clientset().CoreV1().ConfigMaps("default") // protobuf, client-go's default
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "keep", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "keep", metav1.GetOptions{}); err != nil {
		t.Fatalf("dry-run delete removed the object: %v", err)
	}
	// kube-apiserver's storage answers this create with a bare 500.
	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "rv", ResourceVersion: "5"}}, metav1.CreateOptions{})
	if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Code != 500 || !strings.Contains(err.Error(), "resourceVersion should not be set on objects to be created") {
		t.Fatalf("protobuf create with a resourceVersion: %v", err)
	}
	// Dry-run create answers the object it would store and stores nothing.
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "dry-"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil || cm.Name == "" || cm.UID == "" {
		t.Fatalf("dry-run create: %v %+v", err, cm)
	}
	if _, err := cms.Get(ctx, cm.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("dry-run create stored %s: %v", cm.Name, err)
	}
}
