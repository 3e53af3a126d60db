package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// TestPatchAndApplyAnswerAsKube: patches and applies that kube-apiserver
// 1.37 accepts or refuses in a particular way get the same answer from
// kapi (found by sending both the same requests).
func TestPatchAndApplyAnswerAsKube(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	const cm = "/api/v1/namespaces/default/configmaps/answers"
	const applyYAML, merge, jsonPatch = "application/apply-patch+yaml", "application/merge-patch+json", "application/json-patch+json"
	for _, tc := range []struct {
		name, method, path, contentType, body string
		code                                  int
		message, warning                      string
	}{
		{"an apply that creates, ignoring its resourceVersion", http.MethodPatch, cm + "?fieldManager=a", applyYAML,
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: answers, resourceVersion: '12345'}\ndata: {a: '1'}\n", http.StatusCreated, "", ""},
		{"an apply to an existing object that leaves its name out", http.MethodPatch, cm + "?fieldManager=b", applyYAML,
			"apiVersion: v1\nkind: ConfigMap\ndata: {b: '1'}\n", http.StatusOK, "", ""},
		{"an apply giving an int-or-string an object (kube's v3 schema takes it; the conversion refuses it)", http.MethodPatch, "/apis/apps/v1/namespaces/default/deployments/ios?fieldManager=a", applyYAML,
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ios}\nspec:\n  selector: {matchLabels: {a: b}}\n  strategy: {rollingUpdate: {maxSurge: {x: 1}}}\n  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c, image: x}]}\n",
			http.StatusInternalServerError, "unable to convert unstructured object to apps/v1, Kind=Deployment: json: cannot unmarshal object into Go value of type int32", ""},
		{"an apply that would create an object with a UID and another name", http.MethodPatch, "/api/v1/namespaces/default/configmaps/uided?fieldManager=b", applyYAML,
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, uid: 00000000-0000-0000-0000-0000000000dd}\n", http.StatusConflict,
			"uid mismatch: the provided object specified uid 00000000-0000-0000-0000-0000000000dd, and no existing object was found", ""},
		{"an apply that would create an object without its name", http.MethodPatch, "/api/v1/namespaces/default/configmaps/unnamed?fieldManager=b", applyYAML,
			"apiVersion: v1\nkind: ConfigMap\n", http.StatusBadRequest, "the name of the object (unnamed based on URL) was undeterminable: name must be provided", ""},
		{"an apply of an integer to a custom resource's scale replicas", http.MethodPatch, "/apis/example.com/v1/namespaces/default/widgets/w?fieldManager=a", applyYAML,
			"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: 2}\n", http.StatusCreated, "", ""},
		{"a merge patch of a custom resource to another version", http.MethodPatch, "/apis/example.com/v1/namespaces/default/widgets/w", merge,
			`{"apiVersion":"example.com/v2"}`, http.StatusUnprocessableEntity, `Widget.example.com "w" is invalid: apiVersion: Invalid value: "example.com/v2": must be example.com/v1`, ""},
		{"an apply of another kind", http.MethodPatch, cm + "?fieldManager=a", applyYAML,
			"apiVersion: v1\nkind: Secret\nmetadata: {name: answers}\n", http.StatusBadRequest, "invalid object type: /v1, Kind=Secret", ""},
		{"an apply that is not YAML", http.MethodPatch, cm + "?fieldManager=a", applyYAML,
			"apiVersion: v1\nkind: [\n", http.StatusBadRequest, "error encoding patch: yaml: line 2: did not find expected node content", ""},
		{"an apply with a duplicate key", http.MethodPatch, cm + "?fieldManager=a", applyYAML,
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: answers}\ndata:\n  a: '1'\n  a: '2'\n", http.StatusOK, "", `299 - "line 6: key \"a\" already set in map"`},
		{"an apply of a field the type lacks", http.MethodPatch, cm + "?fieldManager=a", applyYAML,
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: answers}\nbogus: 1\n", http.StatusInternalServerError,
			"failed to create typed patch object (/answers; /v1, Kind=ConfigMap): .bogus: field not declared in schema", ""},
		{"a patch that is not JSON", http.MethodPatch, cm, merge, `{"data":`, http.StatusBadRequest, "invalid JSON patch", ""},
		{"an unknown field validation", http.MethodPatch, cm + "?fieldValidation=Bogus", merge, `{}`, http.StatusUnprocessableEntity,
			`PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"`, ""},
		{"a merge patch that is a list", http.MethodPatch, cm, merge, `[1,2]`, http.StatusBadRequest,
			"error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}", ""},
		{"a JSON patch that is not a list", http.MethodPatch, cm, jsonPatch, `{"op":"add"}`, http.StatusBadRequest,
			"error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp", ""},
		{"a merge patch with a duplicate field", http.MethodPatch, cm, merge, `{"data":{"x":"1","x":"2"}}`, http.StatusOK, "", `299 - "duplicate field \"data.x\""`},
		{"a strict merge patch with a duplicate field", http.MethodPatch, cm + "?fieldValidation=Strict", merge, `{"data":{"x":"1","x":"2"}}`,
			http.StatusUnprocessableEntity, `strict decoding error: duplicate field "data.x"`, ""},
		{"a patch of a custom resource's scale naming another uid (kube ignores it)", http.MethodPatch, "/apis/example.com/v1/namespaces/default/widgets/w/scale", merge,
			`{"metadata":{"uid":"00000000-0000-0000-0000-000000000001"},"spec":{"replicas":3}}`, http.StatusOK, "", ""},
		{"a replace of a custom resource's scale naming another uid", http.MethodPut, "/apis/example.com/v1/namespaces/default/widgets/w/scale", "application/json",
			`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"w","uid":"00000000-0000-0000-0000-000000000001"},"spec":{"replicas":3}}`, http.StatusConflict,
			`Operation cannot be fulfilled on widgets.example.com "w": StorageError: invalid object, Code: 4, Key: /registry/example.com/widgets/default/w, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000001`, ""},
		{"a patch of a scale into another namespace", http.MethodPatch, "/apis/example.com/v1/namespaces/default/widgets/w/scale", merge,
			`{"metadata":{"namespace":"other"}}`, http.StatusBadRequest, "the namespace of the provided object does not match the namespace sent on the request", ""},
		{"a replace naming another object in another namespace (the namespace is checked first)", http.MethodPut, cm, "application/json",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"zzz","namespace":"other"}}`, http.StatusBadRequest,
			"the namespace of the provided object does not match the namespace sent on the request", ""},
		{"a strict patch of a scale with a field it lacks", http.MethodPatch, "/apis/example.com/v1/namespaces/default/widgets/w/scale?fieldValidation=Strict", merge,
			`{"spec":{"replicas":3,"bogus":1}}`, http.StatusUnprocessableEntity, `strict decoding error: unknown field "spec.bogus"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := rawDo(t, k, tc.method, tc.path, tc.contentType, "", []byte(tc.body))
			if resp.StatusCode != tc.code {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tc.code)
			}
			if tc.message != "" {
				var status struct{ Message string }
				if err := json.Unmarshal(body, &status); err != nil || !strings.Contains(status.Message, tc.message) {
					t.Errorf("message %q, want it to hold %q", status.Message, tc.message)
				}
			}
			// Warnings as the header carries them (RFC 7234: code, agent, quoted text).
			if got := strings.Join(resp.Header.Values("Warning"), "; "); !strings.Contains(got, tc.warning) {
				t.Errorf("warnings %q, want %q", got, tc.warning)
			}
		})
	}
}

// TestPatchToAnotherVersionAsKube: a patch whose result names another
// version of a built-in kind than the request's goes through as if the
// object were of that version, served (autoscaling/v1 on the v2 endpoint)
// or no longer served (extensions/v1beta1 Deployments, whose defaults
// then apply): kube-apiserver's patcher decodes it so and converts it.
// Another kind does not convert; a version kube does not know is a 422.
func TestPatchToAnotherVersionAsKube(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	const deployment, hpa = "/apis/apps/v1/namespaces/default/deployments/versions", "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/versions"
	const applyYAML, merge, jsonPatch = "application/apply-patch+yaml", "application/merge-patch+json", "application/json-patch+json"
	for _, tc := range []struct {
		name, path, contentType, body string
		code                          int
		holds, warning                string
	}{
		{"the deployment", deployment + "?fieldManager=a", applyYAML,
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: versions}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c, image: x}]}\n",
			http.StatusCreated, `"revisionHistoryLimit":10`, ""},
		{"a merge patch in extensions/v1beta1, with a field that version lacks", deployment, merge,
			`{"apiVersion":"extensions/v1beta1","spec":{"replicas":3,"bogus":1}}`, http.StatusOK, `"apiVersion":"apps/v1"`, `299 - "unknown field \"spec.bogus\""`},
		{"a JSON patch in extensions/v1beta1 removing a field that version defaults otherwise", deployment, jsonPatch,
			`[{"op":"replace","path":"/apiVersion","value":"extensions/v1beta1"},{"op":"remove","path":"/spec/revisionHistoryLimit"}]`,
			http.StatusOK, `"revisionHistoryLimit":2147483647`, ""},
		{"a strict merge patch in apps/v1beta1 with a field it lacks", deployment + "?fieldValidation=Strict", merge,
			`{"apiVersion":"apps/v1beta1","spec":{"bogus":1}}`, http.StatusUnprocessableEntity, `strict decoding error: unknown field \"spec.bogus\"`, ""},
		{"a merge patch to another kind of a version kapi does not serve", deployment, merge,
			`{"apiVersion":"apps/v1beta2","kind":"StatefulSet"}`, http.StatusUnprocessableEntity, `converting (v1beta2.StatefulSet) to (apps.Deployment): unknown conversion`, ""},
		{"a merge patch to a version nobody knows", deployment, merge,
			`{"apiVersion":"apps/v9"}`, http.StatusUnprocessableEntity, `no kind \"Deployment\" is registered for version \"apps/v9\"`, ""},
		{"the autoscaler", hpa + "?fieldManager=a", applyYAML,
			"apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: versions}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: versions}\n  maxReplicas: 3\n",
			http.StatusCreated, `"averageUtilization":80`, ""},
		{"a merge patch in the served autoscaling/v1", hpa, merge,
			`{"apiVersion":"autoscaling/v1","spec":{"targetCPUUtilizationPercentage":60}}`, http.StatusOK, `"averageUtilization":60`, `299 - "unknown field \"spec.metrics\""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := rawDo(t, k, http.MethodPatch, tc.path, tc.contentType, "", []byte(tc.body))
			if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.holds) {
				t.Fatalf("%d %s, want %d holding %s", resp.StatusCode, body, tc.code, tc.holds)
			}
			if got := strings.Join(resp.Header.Values("Warning"), "; "); !strings.Contains(got, tc.warning) {
				t.Errorf("warnings %q, want %q", got, tc.warning)
			}
		})
	}
}

// TestPutCreatesWhereTheTypeAllows: a PUT of an object that does not
// exist creates it (201) where kube's strategy of the type allows it
// (Leases, Services), ignoring a resourceVersion, and is a 404 elsewhere
// (ConfigMaps), as in kube-apiserver.
func TestPutCreatesWhereTheTypeAllows(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	for _, tc := range []struct {
		path, body string
		code       int
	}{
		{"/apis/coordination.k8s.io/v1/namespaces/default/leases/put", `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"put","resourceVersion":"12345"}}`, http.StatusCreated},
		{"/api/v1/namespaces/default/services/put", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"put"},"spec":{"ports":[{"port":80}]}}`, http.StatusCreated},
		{"/api/v1/namespaces/default/services/put", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"put"},"spec":{"ports":[{"port":81}]}}`, http.StatusOK},
		{"/api/v1/namespaces/default/configmaps/put", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"put"}}`, http.StatusNotFound},
	} {
		resp, body := rawDo(t, k, http.MethodPut, tc.path, "application/json", "", []byte(tc.body))
		if resp.StatusCode != tc.code {
			t.Errorf("PUT %s: %d %s, want %d", tc.path, resp.StatusCode, body, tc.code)
		}
	}
	svc, err := k.clientset().CoreV1().Services("default").Get(ctx, "put", metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP == "" || svc.Spec.Ports[0].Port != 81 {
		t.Errorf("the Service a PUT created: %v %+v, want a ClusterIP and the second PUT's port", err, svc.Spec)
	}
}

// TestPodDeletedWithoutGraceIsMarkedFirst: a pod deleted with no grace
// period (here one never scheduled) is, as in kube-apiserver, first marked
// with its deletion timestamp and a grace period of 0, which watchers see
// as MODIFIED, then deleted; the delete answers the marked pod.
func TestPodDeletedWithoutGraceIsMarkedFirst(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	pods := k.clientset().CoreV1().Pods("default")
	pod, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "unscheduled"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: pod.ResourceVersion, FieldSelector: "metadata.name=unscheduled"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	resp, body := rawDo(t, k, http.MethodDelete, "/api/v1/namespaces/default/pods/unscheduled", "", "", nil)
	var deleted corev1.Pod
	if err := json.Unmarshal(body, &deleted); resp.StatusCode != http.StatusOK || err != nil || deleted.DeletionTimestamp == nil || deleted.Generation != 2 {
		t.Fatalf("the delete answered %d %s, want the pod with its deletion timestamp and generation 2", resp.StatusCode, body)
	}
	var got []string
	for ev := range w.ResultChan() {
		p := ev.Object.(*corev1.Pod)
		got = append(got, fmt.Sprintf("%s deleting=%v grace=%v", ev.Type, p.DeletionTimestamp != nil, ptr.Deref(p.DeletionGracePeriodSeconds, -1)))
		if ev.Type == watch.Deleted {
			break
		}
	}
	if want := []string{"MODIFIED deleting=true grace=0", "DELETED deleting=true grace=0"}; !slices.Equal(got, want) {
		t.Errorf("watch events %q, want %q", got, want)
	}
}

// TestStatusWriterOwnsNoMetadata: a custom resource's status write that
// also sends labels changes no labels, and its manager owns none of
// them, as apiextensions' status strategy resets metadata.
func TestStatusWriterOwnsNoMetadata(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	res := dynamicClient(t, k).Resource(widgets).Namespace("default")
	if _, err := res.Create(ctx, widget("st", map[string]interface{}{"replicas": int64(1)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patched, err := res.Patch(ctx, "st", types.MergePatchType, []byte(`{"status":{"replicas":1},"metadata":{"labels":{"st":"1"}}}`),
		metav1.PatchOptions{FieldManager: "status-writer"}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if len(patched.GetLabels()) != 0 {
		t.Errorf("the status write set labels %v", patched.GetLabels())
	}
	for _, e := range patched.GetManagedFields() {
		if e.Manager == "status-writer" && strings.Contains(string(e.FieldsV1.Raw), "f:metadata") {
			t.Errorf("the status writer owns metadata: %s", e.FieldsV1.Raw)
		}
	}
}

// TestScaleWritesTrackFieldsAsKube: writes of the scale sub-resource are
// tracked by a Scale's field manager over the replicas' owners, as in
// kube-apiserver: the workload's entry for the write has subresource
// scale and no time, an apply conflicts with the replicas' manager and
// force takes them over; a custom resource's Scale takes no strategic
// merge patch, and its replicas are checked by its own schema.
func TestScaleWritesTrackFieldsAsKube(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	k.mustKubectl("create", "deployment", "d", "--image=busybox", "--replicas=1")
	const scale = "/apis/apps/v1/namespaces/default/deployments/d/scale"
	resp, body := rawDo(t, k, http.MethodPut, scale+"?fieldManager=putter", "application/json", "",
		[]byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d"},"spec":{"replicas":3}}`))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT scale: %d %s", resp.StatusCode, body)
	}
	d, err := k.clientset().AppsV1().Deployments("default").Get(ctx, "d", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if e := d.ManagedFields[0]; e.Manager != "putter" || e.Subresource != "scale" || e.Time != nil || string(e.FieldsV1.Raw) != `{"f:spec":{"f:replicas":{}}}` {
		t.Errorf("the scale write's entry: %+v %s, want putter's, of subresource scale, first, with no time, owning spec.replicas", e, e.FieldsV1.Raw)
	}
	resp, body = rawDo(t, k, http.MethodPut, scale, "application/json", "",
		[]byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d","uid":"not-its"},"spec":{"replicas":4}}`))
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "Precondition failed: UID in precondition: not-its") {
		t.Errorf("a Scale of another UID: %d %s, want kube's 409", resp.StatusCode, body)
	}
	apply := []byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d"},"spec":{"replicas":8}}`)
	resp, body = rawDo(t, k, http.MethodPatch, scale+"?fieldManager=scaler", "application/apply-patch+yaml", "", apply)
	if want := `Apply failed with 1 conflict: conflict with \"putter\" with subresource \"scale\" using autoscaling/v1: .spec.replicas`; resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), want) {
		t.Errorf("an apply of the replicas: %d %s, want a conflict with putter", resp.StatusCode, body)
	}
	resp, body = rawDo(t, k, http.MethodPatch, scale+"?fieldManager=scaler&force=true", "application/apply-patch+yaml", "", apply)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"replicas":8`) {
		t.Errorf("a forced apply of the replicas: %d %s", resp.StatusCode, body)
	}

	if _, err := dynamicClient(t, k).Resource(widgets).Namespace("default").Create(ctx, widget("w", map[string]interface{}{"replicas": int64(1)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const crScale = "/apis/example.com/v1/namespaces/default/widgets/w/scale"
	resp, body = rawDo(t, k, http.MethodPatch, crScale, "application/strategic-merge-patch+json", "", []byte(`{"spec":{"replicas":2}}`))
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("a strategic merge patch of a custom resource's Scale: %d %s, want 415", resp.StatusCode, body)
	}
	resp, body = rawDo(t, k, http.MethodPatch, crScale, "application/merge-patch+json", "", []byte(`{"spec":{"replicas":-4}}`))
	if want := `Widget.example.com \"w\" is invalid`; resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), want) {
		t.Errorf("negative replicas for a custom resource: %d %s, want its schema's 422", resp.StatusCode, body)
	}
}

// TestPatchOfAnUnsupportedType: a patch of a built-in resource in a type
// its PATCH endpoint does not consume gets kube-apiserver's router's 415;
// one of a custom resource (served by a handler, not the router) gets
// the handler's, which lists the types it accepts.
func TestPatchOfAnUnsupportedType(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	k.mustKubectl("create", "configmap", "cm")
	resp, body := rawDo(t, k, http.MethodPatch, "/api/v1/namespaces/default/configmaps/cm", "application/json", "", []byte(`{}`))
	if resp.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(string(body), `"message":"415: Unsupported Media Type"`) {
		t.Errorf("a JSON body as a patch of a ConfigMap: %d %s, want the router's 415", resp.StatusCode, body)
	}
	if _, err := dynamicClient(t, k).Resource(widgets).Namespace("default").Create(ctx, widget("w", map[string]interface{}{}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	resp, body = rawDo(t, k, http.MethodPatch, "/apis/example.com/v1/namespaces/default/widgets/w", "application/strategic-merge-patch+json", "", []byte(`{}`))
	if want := "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"; resp.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(string(body), want) {
		t.Errorf("a strategic merge patch of a custom resource: %d %s, want the handler's 415", resp.StatusCode, body)
	}
}

// TestBodiesThatDoNotDecode: a body that is not the object of its URL
// gets kube-apiserver's answer: named after the kind the body gave, or
// summarised when it gave none; a custom resource of another kind is
// refused by its validation.
func TestBodiesThatDoNotDecode(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	k.mustKubectl("create", "configmap", "cm")
	const cm = "/api/v1/namespaces/default/configmaps/cm"
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		message                  string
	}{
		{"truncated JSON", http.MethodPut, cm, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"`, http.StatusBadRequest,
			`the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({"apiVersion":"v1","kind":"Con ...)`},
		{"no body", http.MethodPut, cm, ``, http.StatusBadRequest,
			`the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)`},
		{"another kind", http.MethodPut, cm, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"cm"}}`, http.StatusBadRequest,
			`Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion`},
		{"a field of another type", http.MethodPut, cm, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":1}}`, http.StatusBadRequest,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string`},
		{"a custom resource of another kind", http.MethodPost, "/apis/example.com/v1/namespaces/default/widgets",
			`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"}}`, http.StatusUnprocessableEntity,
			`Gadget.example.com "g" is invalid: kind: Invalid value: "Gadget": must be Widget`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := rawDo(t, k, tc.method, tc.path, "application/json", "", []byte(tc.body))
			var status struct{ Message string }
			if err := json.Unmarshal(body, &status); err != nil || resp.StatusCode != tc.code || status.Message != tc.message {
				t.Errorf("%d %q, want %d %q", resp.StatusCode, status.Message, tc.code, tc.message)
			}
		})
	}
}

// TestWatchOfOneObjectByPathAndBadVersions: a watch by the deprecated
// /watch/.../NAME path sees only that object; a resourceVersion that is
// no number is kube-apiserver's 400 on a list and 500 on a get.
func TestWatchOfOneObjectByPathAndBadVersions(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	cms := k.clientset().CoreV1().ConfigMaps("default")
	first, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "watched"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"other", "watched"} {
		if _, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"a": "b"}}, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-2"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	resp, body := rawDo(t, k, http.MethodGet, "/api/v1/watch/namespaces/default/configmaps/watched?timeoutSeconds=1&resourceVersion="+first.ResourceVersion, "", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch by path: %d %s", resp.StatusCode, body)
	}
	if strings.Contains(string(body), `-2"`) || !strings.Contains(string(body), `"name":"watched"`) {
		t.Errorf("the watch of one object saw %s, want only that object's events", body)
	}
	resp, body = rawDo(t, k, http.MethodGet, "/api/v1/watch/namespaces/default/configmaps/watched?fieldSelector=metadata.name%3Dother", "", "", nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "fieldSelector metadata.name doesn't match requested name") {
		t.Errorf("a watch by path selecting another name: %d %s, want 400", resp.StatusCode, body)
	}

	checkWatchPrefixAsKube(t, k)

	for _, tc := range []struct {
		path    string
		code    int
		message string
	}{
		{"/api/v1/namespaces/default/configmaps?resourceVersion=abc", http.StatusBadRequest,
			`invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax`},
		{"/api/v1/namespaces/default/configmaps/watched?resourceVersion=abc", http.StatusInternalServerError,
			`resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax`},
	} {
		resp, body := rawDo(t, k, http.MethodGet, tc.path, "", "", nil)
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.message) {
			t.Errorf("GET %s: %d %s, want %d %s", tc.path, resp.StatusCode, body, tc.code, tc.message)
		}
	}
}

// checkWatchPrefixAsKube: the deprecated /watch/ prefix makes every method
// a watch, whose route takes GET alone (a DELETE there deleted); its
// options are a list's (no sendInitialEvents) and a watch from no version
// starts with the state, with no bookmark ending it.
func checkWatchPrefixAsKube(t *testing.T, k *kapi) {
	t.Helper()
	const watched = "/api/v1/watch/namespaces/default/configmaps/watched"
	for _, method := range []string{http.MethodDelete, http.MethodPatch, http.MethodHead} {
		if resp, body := rawDo(t, k, method, watched, "application/merge-patch+json", "", []byte(`{}`)); resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d %s, want 405", method, watched, resp.StatusCode, body)
		}
	}
	if _, err := k.clientset().CoreV1().ConfigMaps("default").Get(ctx, "watched", metav1.GetOptions{}); err != nil {
		t.Errorf("after writes under /watch/: %v", err)
	}
	for _, from := range []string{"", "&resourceVersion=0"} {
		resp, body := rawDo(t, k, http.MethodGet, watched+"?timeoutSeconds=1&allowWatchBookmarks=true"+from, "", "", nil)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), `{"type":"ADDED","object":{"kind":"ConfigMap"`) || strings.Contains(string(body), "initial-events-end") {
			t.Errorf("a watch under /watch/ from %q: %d %s, want the object's ADDED event and no bookmark ending the state", from, resp.StatusCode, body)
		}
	}
	resp, body := rawDo(t, k, http.MethodGet, watched+"?sendInitialEvents=true", "", "", nil)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), "sendInitialEvents is forbidden for list") {
		t.Errorf("sendInitialEvents under /watch/: %d %s, want kube's 422", resp.StatusCode, body)
	}
	if resp, body = rawDo(t, k, http.MethodGet, watched+"/status", "", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a sub-resource under /watch/: %d %s, want 404", resp.StatusCode, body)
	}
}

// TestPodResizeAndEphemeralContainers: a running pod's resize
// sub-resource changes its resources, which its (simulated) kubelet then
// reports; kube-apiserver's PodResizeValidator refuses a resize to more
// than the node can allocate, with the cause it gives; kubectl debug adds
// an ephemeral container through the ephemeralcontainers sub-resource.
func TestPodResizeAndEphemeralContainers(t *testing.T) {
	k := startKapi(t, "--simulated-nodes=1")
	pods := k.clientset().CoreV1().Pods("default")
	_, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "resized"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the pod to be scheduled", func() bool {
		p, err := pods.Get(ctx, "resized", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName != ""
	})
	resize := func(cpu string) (*http.Response, []byte) {
		return rawDo(t, k, http.MethodPatch, "/api/v1/namespaces/default/pods/resized/resize", "application/strategic-merge-patch+json", "",
			[]byte(`{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"`+cpu+`"}}}]}}`))
	}
	if resp, body := resize("200m"); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"cpu":"200m"`) {
		t.Errorf("a resize within the node: %d %s", resp.StatusCode, body)
	}
	waitFor(t, 30*time.Second, "the kubelet to report the new resources", func() bool {
		p, err := pods.Get(ctx, "resized", metav1.GetOptions{})
		return err == nil && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].Resources != nil &&
			p.Status.ContainerStatuses[0].Resources.Requests.Cpu().String() == "200m"
	})
	resp, body := resize("100")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), `"causes":[{"reason":"NodeCapacity"}]`) {
		t.Errorf("a resize beyond the node: %d %s, want 403 with the NodeCapacity cause", resp.StatusCode, body)
	}

	k.mustKubectl("debug", "resized", "--image=busybox", "--container=debugger", "--profile=general", "--", "true")
	p, err := pods.Get(ctx, "resized", metav1.GetOptions{})
	if err != nil || len(p.Spec.EphemeralContainers) != 1 || p.Spec.EphemeralContainers[0].Name != "debugger" {
		t.Errorf("after kubectl debug the pod has ephemeral containers %+v (%v), want the debugger", p.Spec.EphemeralContainers, err)
	}
}

// TestRoutesAsKube: a method a resource's path has no route for gets
// kube-apiserver's router's 405, a namespaced resource is only read across
// namespaces (a delete of the collection there would delete everywhere),
// and a group-version nothing serves gets its mux's plain 404.
func TestRoutesAsKube(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	k.mustKubectl("create", "configmap", "kept")
	const notAllowed = `"message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405`
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{http.MethodDelete, "/api/v1/configmaps", "", http.StatusMethodNotAllowed, notAllowed},
		{http.MethodPost, "/api/v1/configmaps", `{"metadata":{"name":"x","namespace":"default"}}`, http.StatusMethodNotAllowed, notAllowed},
		{http.MethodPut, "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"kept"}}`, http.StatusMethodNotAllowed, notAllowed},
		{http.MethodPost, "/api/v1/namespaces/default/configmaps/kept", `{}`, http.StatusMethodNotAllowed, notAllowed},
		{http.MethodHead, "/api/v1/namespaces/default/configmaps/kept", "", http.StatusMethodNotAllowed, ""},
		{http.MethodHead, "/api/v1/namespaces/default", "", http.StatusMethodNotAllowed, ""},
		{http.MethodHead, "/api/v1/namespaces/default/status", "", http.StatusMethodNotAllowed, ""},
		{http.MethodDelete, "/apis/example.com/v1/widgets", "", http.StatusNotFound, "404 page not found\n"},
		{http.MethodGet, "/apis/bogus.example.com/v1", "", http.StatusNotFound, "404 page not found\n"},
		{http.MethodGet, "/apis/example.com/v2/namespaces/default/widgets", "", http.StatusNotFound, "404 page not found\n"},
		{http.MethodGet, "/apis/example.com/v1/nosuch", "", http.StatusNotFound, "404 page not found\n"},
		{http.MethodGet, "/api/v1/nosuch", "", http.StatusNotFound, `"message":"the server could not find the requested resource"`},
		// Namespaces are no namespace's resources: under one, they are not
		// served (a role in that namespace would be checked for them).
		{http.MethodGet, "/api/v1/namespaces/default/namespaces", "", http.StatusNotFound, `"message":"the server could not find the requested resource"`},
		{http.MethodPost, "/api/v1/namespaces/default/namespaces", `{"metadata":{"name":"under"}}`, http.StatusNotFound, `"reason":"NotFound"`},
		{http.MethodGet, "/api/v1/namespaces/default/namespaces/kube-system", "", http.StatusNotFound, `"reason":"NotFound"`},
		{http.MethodGet, "/api/v1/watch/namespaces/default/namespaces", "", http.StatusNotFound, `"reason":"NotFound"`},
		// A resource only created has no object paths.
		{http.MethodGet, "/apis/authorization.k8s.io/v1/subjectaccessreviews/foo", "", http.StatusNotFound, `"reason":"NotFound"`},
		{http.MethodPost, "/api/v1/namespaces/default/bindings/foo", `{}`, http.StatusNotFound, `"reason":"NotFound"`},
		{http.MethodGet, "/apis/authorization.k8s.io/v1/subjectaccessreviews", "", http.StatusMethodNotAllowed, notAllowed},
		// A namespaced resource not listed has no path across namespaces.
		{http.MethodPost, "/apis/authorization.k8s.io/v1/localsubjectaccessreviews", `{}`, http.StatusNotFound, `"message":"the server could not find the requested resource"`},
		{http.MethodGet, "/api/v1/watch/bindings", "", http.StatusNotFound, `"message":"the server could not find the requested resource"`},
		// Custom resources' handler goes by the verb.
		{http.MethodHead, "/apis/example.com/v1/namespaces/default/widgets", "", http.StatusOK, ""},
		{http.MethodPost, "/apis/example.com/v1/namespaces/default/widgets/w/status", `{}`, http.StatusMethodNotAllowed,
			`create is not supported on resources of kind \"widgets.example.com\"`},
		{http.MethodPost, "/apis/example.com/v1/namespaces/default/widgets/in-path", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"in-body"}}`,
			http.StatusCreated, `"name":"in-body"`},
		// /apis is the aggregator's, for any method; /api the router's.
		{http.MethodHead, "/apis", "", http.StatusOK, ""},
		{http.MethodPost, "/api", `{}`, http.StatusMethodNotAllowed, notAllowed},
	} {
		resp, body := rawDo(t, k, tc.method, tc.path, "application/json", "", []byte(tc.body))
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.path, resp.StatusCode, body, tc.code, tc.want)
		}
	}
	if _, err := k.clientset().CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{}); err != nil {
		t.Errorf("after the refused deletes: %v", err)
	}
}

// TestWritesAnsweredAsTables: a write whose client asks for a Table gets
// the written object as one, a deletion's Status as it is, and a write
// whose answer the client cannot take is refused before it is done.
func TestWritesAnsweredAsTables(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	const table = "application/json;as=Table;v=v1;g=meta.k8s.io"
	const cms = "/api/v1/namespaces/default/configmaps"
	resp, body := rawDo(t, k, http.MethodPost, cms, "application/json", table, []byte(`{"metadata":{"name":"t1"}}`))
	if resp.StatusCode != http.StatusCreated || !strings.Contains(string(body), `"kind":"Table"`) || !strings.Contains(string(body), `"cells":["t1",0,`) {
		t.Errorf("a create asking for a Table: %d %s", resp.StatusCode, body)
	}
	resp, body = rawDo(t, k, http.MethodDelete, cms+"/t1", "", table, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"kind":"Status"`) || !strings.Contains(string(body), `"status":"Success"`) {
		t.Errorf("a delete asking for a Table: %d %s", resp.StatusCode, body)
	}
	resp, body = rawDo(t, k, http.MethodPost, cms, "application/json", "application/json;as=Bogus;v=v1;g=meta.k8s.io", []byte(`{"metadata":{"name":"t2"}}`))
	if resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("a create asking for what cannot be: %d %s, want 406", resp.StatusCode, body)
	}
	if _, err := k.clientset().CoreV1().ConfigMaps("default").Get(ctx, "t2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused create was done: %v", err)
	}
}

// TestAccessReviewInAnyNamespace: a LocalSubjectAccessReview is answered
// whatever the state of its namespace, even one that does not exist, as
// kube-apiserver's NamespaceLifecycle lets access reviews through.
func TestAccessReviewInAnyNamespace(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	resp, body := rawDo(t, k, http.MethodPost, "/apis/authorization.k8s.io/v1/namespaces/nowhere/localsubjectaccessreviews", "application/json", "",
		[]byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview","metadata":{"namespace":"nowhere"},"spec":{"user":"jane","resourceAttributes":{"namespace":"nowhere","verb":"get","resource":"pods"}}}`))
	if resp.StatusCode != http.StatusCreated || !strings.Contains(string(body), `"allowed":false`) {
		t.Errorf("a review in a namespace that does not exist: %d %s, want 201 not allowed", resp.StatusCode, body)
	}
}

// TestDeletedNamespaceHasNoGracePeriod: a namespace being deleted has its
// deletion timestamp and phase Terminating, but no deletion grace period,
// as kube-apiserver's namespace storage marks it (the generic registry's
// 0 is for other types).
func TestDeletedNamespaceHasNoGracePeriod(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	k.mustKubectl("create", "namespace", "going")
	k.mustKubectl("delete", "namespace", "going", "--wait=false")
	ns, err := k.clientset().CoreV1().Namespaces().Get(ctx, "going", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.DeletionTimestamp == nil || ns.DeletionGracePeriodSeconds != nil || ns.Status.Phase != corev1.NamespaceTerminating {
		t.Errorf("the deleted namespace: deletionTimestamp %v, deletionGracePeriodSeconds %v, phase %s", ns.DeletionTimestamp, ns.DeletionGracePeriodSeconds, ns.Status.Phase)
	}
}

// TestTableOptionsAsKube: a Table's rows carry their objects' metadata in
// the Table's own version, an unknown includeObject is kube's 400, and an
// object read alone is printed alone (a default StorageClass is marked so
// only in a list, as kube's printer marks the effective default).
func TestTableOptionsAsKube(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	k.mustKubectl("create", "configmap", "row")
	k.mustKubectl("create", "-f", writeTemp(t, `{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"std",`+
		`"annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"example.com/p"}`))
	if got := strings.Fields(k.mustKubectl("get", "storageclass", "std", "--no-headers"))[0]; got != "std" {
		t.Errorf("a default StorageClass read alone is named %q", got)
	}
	if got := k.mustKubectl("get", "storageclass", "--no-headers"); !strings.HasPrefix(got, "std (default) ") {
		t.Errorf("the StorageClasses: %q", got)
	}
	const cms = "/api/v1/namespaces/default/configmaps"
	resp, body := rawDo(t, k, http.MethodGet, cms, "", "application/json;as=Table;v=v1beta1;g=meta.k8s.io", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1beta1"`) {
		t.Errorf("a v1beta1 Table: %d %s, want its rows' metadata in v1beta1", resp.StatusCode, body)
	}
	resp, body = rawDo(t, k, http.MethodGet, cms+"?includeObject=Bogus", "", "application/json;as=Table;v=v1;g=meta.k8s.io", nil)
	want := `Unable to convert to Table as requested: includeObject: Invalid value: \"Bogus\": must be 'Metadata', 'Object', 'None', or empty`
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), want) {
		t.Errorf("an unknown includeObject: %d %s", resp.StatusCode, body)
	}
	// Read only for a Table.
	if resp, body = rawDo(t, k, http.MethodGet, cms+"?includeObject=Bogus", "", "application/json", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("an unknown includeObject on a plain list: %d %s", resp.StatusCode, body)
	}
}

// TestClusterIPOutOfRange: a Service asking for a ClusterIP out of the
// range is refused with kube-apiserver's messages: its allocator's, or
// the range check's for a dry run, on spec.clusterIPs.
func TestClusterIPOutOfRange(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	svc := []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"far"},"spec":{"clusterIP":"192.168.0.1","ports":[{"port":80}]}}`)
	for query, want := range map[string]string{
		"":            `spec.clusterIPs: Invalid value: [\"192.168.0.1\"]: failed to allocate IP 192.168.0.1: the provided network does not match the current range`,
		"?dryRun=All": `spec.clusterIPs: Invalid value: [\"192.168.0.1\"]: failed to allocate IP 192.168.0.1: the provided IP (192.168.0.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12`,
	} {
		resp, body := rawDo(t, k, http.MethodPost, "/api/v1/namespaces/default/services"+query, "application/json", "", svc)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), want) {
			t.Errorf("create%s: %d %s, want %s", query, resp.StatusCode, body, want)
		}
	}
}

// TestNamespaceDeletesAsKube: as kube-apiserver's namespace storage, the
// first delete of a namespace only marks it, even one whose
// spec.finalizers are empty (the next delete removes it), and a delete of
// a namespace whose finalizers are pending changes nothing.
func TestNamespaceDeletesAsKube(t *testing.T) {
	k := startKapi(t, "--controllers=serviceaccount-controller") // no namespace controller, no garbage collector
	namespaces := k.clientset().CoreV1().Namespaces()
	for _, name := range []string{"unfinalized", "pending"} {
		if _, err := namespaces.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ns, err := namespaces.Get(ctx, "unfinalized", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Spec.Finalizers = nil
	if _, err := namespaces.Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := namespaces.Delete(ctx, "unfinalized", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if ns, err := namespaces.Get(ctx, "unfinalized", metav1.GetOptions{}); err != nil || ns.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("after a first delete: %v %+v, want it Terminating", err, ns)
	}
	if err := namespaces.Delete(ctx, "unfinalized", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := namespaces.Get(ctx, "unfinalized", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after a second delete: %v, want it gone", err)
	}

	if err := namespaces.Delete(ctx, "pending", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatal(err)
	}
	if err := namespaces.Delete(ctx, "pending", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}); err != nil {
		t.Fatal(err)
	}
	ns, err = namespaces.Get(ctx, "pending", metav1.GetOptions{})
	if err != nil || !slices.Equal(ns.Finalizers, []string{metav1.FinalizerDeleteDependents}) {
		t.Errorf("after a second delete: %v, finalizers %v, want the first delete's", err, ns.Finalizers)
	}
}

// TestCreateByUpdateNeedsCreate: a PUT or an apply that would create an
// object needs the create permission besides update or patch, as in
// kube-apiserver; with it, the object is created.
func TestCreateByUpdateNeedsCreate(t *testing.T) {
	k := startKapiWithTokens(t, onlyLifecycleControllers)
	k.mustKubectl("create", "role", "lease-updater", "--verb=get,update,patch", "--resource=leases.coordination.k8s.io")
	k.mustKubectl("create", "rolebinding", "lease-updater", "--role=lease-updater", "--user=nobody")
	leases := k.clientWithToken("nobody-token").CoordinationV1().Leases("default")
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "put"}}
	waitFor(t, 10*time.Second, "nobody's role to take effect", func() bool {
		_, err := leases.Get(ctx, "put", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("a PUT that creates, without create: %v, want Forbidden", err)
	}
	apply := []byte(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"applied"}}`)
	if _, err := leases.Patch(ctx, "applied", types.ApplyPatchType, apply, metav1.PatchOptions{FieldManager: "nobody"}); !apierrors.IsForbidden(err) {
		t.Errorf("an apply that creates, without create: %v, want Forbidden", err)
	}
	k.mustKubectl("create", "role", "lease-creator", "--verb=create", "--resource=leases.coordination.k8s.io")
	k.mustKubectl("create", "rolebinding", "lease-creator", "--role=lease-creator", "--user=nobody")
	waitFor(t, 10*time.Second, "the PUT to create", func() bool {
		_, err := leases.Update(ctx, lease, metav1.UpdateOptions{})
		return err == nil
	})
	if _, err := leases.Patch(ctx, "applied", types.ApplyPatchType, apply, metav1.PatchOptions{FieldManager: "nobody"}); err != nil {
		t.Errorf("an apply that creates, with create: %v", err)
	}
}

// TestNamespaceAndCRDFirstDeleteFinalizers: a namespace's first delete sets the
// garbage collector's finalizers by its storage's own rules, where
// orphanDependents: false asks for the foreground deletion; a
// CustomResourceDefinition's first delete adds only its cleanup finalizer,
// whatever propagation it asks for, and a later one the generic
// registry's finalizer and a grace period of 0.
func TestNamespaceAndCRDFirstDeleteFinalizers(t *testing.T) {
	k := startKapi(t, "--controllers=serviceaccount-controller") // nothing finishes the deletes
	namespaces := k.clientset().CoreV1().Namespaces()
	if _, err := namespaces.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fg"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := namespaces.Delete(ctx, "fg", metav1.DeleteOptions{OrphanDependents: ptr.To(false)}); err != nil {
		t.Fatal(err)
	}
	if ns, err := namespaces.Get(ctx, "fg", metav1.GetOptions{}); err != nil || !slices.Equal(ns.Finalizers, []string{metav1.FinalizerDeleteDependents}) {
		t.Errorf("a namespace deleted with orphanDependents false: %v, finalizers %v, want foregroundDeletion", err, ns.Finalizers)
	}

	createCRD(t, k, widgetsCRD, "widgets.example.com")
	// A custom resource that its finalizer keeps holds the CRD being
	// deleted, so that apiextensions' finalizer controller cannot finish
	// the CRD between the two deletes.
	kept := widget("kept", nil)
	kept.SetFinalizers([]string{"example.com/hold"})
	if _, err := dynamicClient(t, k).Resource(widgets).Namespace("default").Create(ctx, kept, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crds := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"
	finalizersOf := func(body []byte) (finalizers []string, grace *int64) {
		var crd metav1.PartialObjectMetadata
		if err := json.Unmarshal(body, &crd); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		return crd.Finalizers, crd.DeletionGracePeriodSeconds
	}
	resp, body := rawDo(t, k, http.MethodDelete, crds, "application/json", "", []byte(`{"propagationPolicy":"Foreground"}`))
	if f, grace := finalizersOf(body); resp.StatusCode != http.StatusOK || !slices.Equal(f, []string{"customresourcecleanup.apiextensions.k8s.io"}) || grace != nil {
		t.Errorf("a CRD's first delete, in the foreground: %d finalizers %v grace %v, want only the cleanup finalizer", resp.StatusCode, f, grace)
	}
	resp, body = rawDo(t, k, http.MethodDelete, crds, "application/json", "", []byte(`{"propagationPolicy":"Orphan"}`))
	if f, grace := finalizersOf(body); resp.StatusCode != http.StatusOK || !slices.Equal(f, []string{"customresourcecleanup.apiextensions.k8s.io", "orphan"}) || grace == nil || *grace != 0 {
		t.Errorf("a CRD's second delete, orphaning: %d finalizers %v grace %v, want orphan added and grace 0", resp.StatusCode, f, grace)
	}
}

// TestScaleAsTableAndMetadata: a Scale is answered as a Table (kube's
// Scale printer for built-in workloads, apiextensions' columns for custom
// resources) or as its metadata.
func TestScaleAsTableAndMetadata(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	k.mustKubectl("create", "deployment", "web", "--image=nginx", "--replicas=3")
	if _, err := dynamicClient(t, k).Resource(widgets).Namespace("default").Create(ctx, widget("w", map[string]interface{}{"replicas": int64(2)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const table = "application/json;as=Table;v=v1;g=meta.k8s.io"
	for _, tc := range []struct{ path, columns, cells string }{
		{"/apis/apps/v1/namespaces/default/deployments/web/scale", `"name":"Desired","type":"integer","format":"","description":"replicas is the desired`, `"cells":["web",3,0,`},
		{"/apis/example.com/v1/namespaces/default/widgets/w/scale", `"name":"Desired","type":"integer","format":"","description":"Number of desired replicas"`, `"cells":["w",2,`},
	} {
		resp, body := rawDo(t, k, http.MethodGet, tc.path, "", table, nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), tc.columns) || !strings.Contains(string(body), tc.cells) {
			t.Errorf("%s as a Table: %d %s", tc.path, resp.StatusCode, body)
		}
	}
	resp, body := rawDo(t, k, http.MethodGet, "/apis/apps/v1/namespaces/default/deployments/web/scale", "", "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"kind":"PartialObjectMetadata"`) || !strings.Contains(string(body), `"name":"web"`) {
		t.Errorf("a Scale as metadata: %d %s", resp.StatusCode, body)
	}
	// A Scale's get honours resourceVersion as any get: one ahead of the
	// server is waited for, then kube's 504.
	resp, body = rawDo(t, k, http.MethodGet, "/apis/apps/v1/namespaces/default/deployments/web/scale?resourceVersion=999999999", "", "", nil)
	if resp.StatusCode != http.StatusGatewayTimeout || !strings.Contains(string(body), "Too large resource version: 999999999") {
		t.Errorf("a Scale at a resourceVersion ahead of the server: %d %s", resp.StatusCode, body)
	}
}

// TestConversionsThatDoNotFit: metadata of an object asked for a list,
// or the other way round, gets kube-apiserver's 406 naming the type it
// holds (a custom resource's handler fails with a 500); a write is done
// before its answer fails so.
func TestConversionsThatDoNotFit(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	k.mustKubectl("create", "configmap", "c")
	if _, err := dynamicClient(t, k).Resource(widgets).Namespace("default").Create(ctx, widget("w", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const object, list = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
	const cms = "/api/v1/namespaces/default/configmaps"
	for _, tc := range []struct {
		method, path, accept, body string
		code                       int
		message                    string
	}{
		{http.MethodGet, cms, object, "", http.StatusNotAcceptable, "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)"},
		{http.MethodGet, cms + "/c", list, "", http.StatusNotAcceptable, "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)"},
		{http.MethodGet, "/apis/example.com/v1/namespaces/default/widgets", object, "", http.StatusNotAcceptable, "you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)"},
		{http.MethodGet, "/apis/example.com/v1/namespaces/default/widgets/w", list, "", http.StatusInternalServerError, "content is not a list"},
		{http.MethodPost, cms, list, `{"metadata":{"name":"written"}}`, http.StatusNotAcceptable, "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)"},
	} {
		resp, body := rawDo(t, k, tc.method, tc.path, "application/json", tc.accept, []byte(tc.body))
		// The Status is indented: the client accepts nothing served.
		var status metav1.Status
		json.Unmarshal(body, &status)
		if resp.StatusCode != tc.code || status.Message != tc.message {
			t.Errorf("%s %s as %s: %d %s, want %d %q", tc.method, tc.path, tc.accept, resp.StatusCode, body, tc.code, tc.message)
		}
	}
	if _, err := k.clientset().CoreV1().ConfigMaps("default").Get(ctx, "written", metav1.GetOptions{}); err != nil {
		t.Errorf("the create answered 406 was not done: %v", err)
	}
	// A metadata list of nothing has no items, as kube's (null, not []).
	if resp, body := rawDo(t, k, http.MethodGet, cms+"?labelSelector=none%3D1", "", list, nil); resp.StatusCode != http.StatusOK || !strings.HasSuffix(strings.TrimSpace(string(body)), `"items":null}`) {
		t.Errorf("an empty metadata list: %d %s", resp.StatusCode, body)
	}
}

// TestEmptyNamespaceInPathAndCustomListMetadata: a collection path with an empty namespace
// lists across namespaces, and an object's is kube's 400; a custom
// resource's list carries an empty continue token, as its unstructured
// list does in kube-apiserver.
func TestEmptyNamespaceInPathAndCustomListMetadata(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	k.mustKubectl("create", "namespace", "other")
	k.mustKubectl("create", "configmap", "here")
	k.mustKubectl("create", "configmap", "there", "-n", "other")
	resp, body := rawDo(t, k, http.MethodGet, "/api/v1/namespaces//configmaps", "", "", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"name":"here"`) || !strings.Contains(string(body), `"name":"there"`) {
		t.Errorf("a list with an empty namespace: %d %.300s, want both namespaces' ConfigMaps", resp.StatusCode, body)
	}
	resp, body = rawDo(t, k, http.MethodGet, "/api/v1/namespaces//configmaps/here", "", "", nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"message":"Namespace parameter required."`) {
		t.Errorf("a get with an empty namespace: %d %s, want 400", resp.StatusCode, body)
	}
	resp, body = rawDo(t, k, http.MethodGet, "/apis/example.com/v1/namespaces/default/widgets", "", "", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"metadata":{"continue":"","resourceVersion":"`) {
		t.Errorf("a custom resource list: %d %s, want an empty continue token", resp.StatusCode, body)
	}
}

// TestGeneratedNamespaceName: a namespace created with generateName gets
// its name label after its managed fields are recorded (its name is made
// after them, as in kube-apiserver), so its creator does not own the label.
func TestGeneratedNamespaceName(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	ns, err := k.clientset().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels[corev1.LabelMetadataName] != ns.Name || len(ns.ManagedFields) != 1 || string(ns.ManagedFields[0].FieldsV1.Raw) != `{"f:metadata":{"f:generateName":{}}}` {
		t.Errorf("namespace %s: labels %v, managed fields %+v", ns.Name, ns.Labels, ns.ManagedFields)
	}
}

// TestComponentStatuses: the deprecated componentstatuses report, as
// kube-apiserver's do, the controller manager, the scheduler and the
// storage: those running in kapi healthy, the scheduler (not selected
// here) probed on its loopback port, where nothing answers.
func TestComponentStatuses(t *testing.T) {
	k := startKapi(t, "--controllers=namespace-controller")
	statuses, err := k.clientset().CoreV1().ComponentStatuses().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cs := range statuses.Items {
		got = append(got, fmt.Sprintf("%s %s", cs.Name, cs.Conditions[0].Status))
	}
	if want := []string{"controller-manager True", "scheduler False", "etcd-0 True"}; !slices.Equal(got, want) {
		t.Errorf("component statuses %q, want %q", got, want)
	}
	if out := k.mustKubectl("get", "componentstatus", "etcd-0"); !strings.Contains(out, "etcd-0   Healthy   ok") {
		t.Errorf("kubectl get componentstatus etcd-0:\n%s", out)
	}
	if _, err := k.clientset().CoreV1().ComponentStatuses().Get(ctx, "nosuch", metav1.GetOptions{}); !apierrors.IsNotFound(err) || err.Error() != `componentstatus "nosuch" not found` {
		t.Errorf("an unknown component: %v, want kube's not found", err)
	}
	// Selectors select, and are checked, as kube's component status
	// storage does; a watch is refused after its options are read.
	selected, err := k.clientset().CoreV1().ComponentStatuses().List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=etcd-0"})
	if err != nil || len(selected.Items) != 1 || selected.Items[0].Name != "etcd-0" {
		t.Errorf("component statuses named etcd-0: %v, %v", selected, err)
	}
	if labelled, err := k.clientset().CoreV1().ComponentStatuses().List(ctx, metav1.ListOptions{LabelSelector: "app"}); err != nil || len(labelled.Items) != 0 {
		t.Errorf("component statuses labelled app: %v, %v", labelled, err)
	}
	_, err = k.clientset().CoreV1().ComponentStatuses().List(ctx, metav1.ListOptions{FieldSelector: "foo=bar"})
	if !apierrors.IsBadRequest(err) || err.Error() != `"foo" is not a known field selector: only "metadata.name", "metadata.namespace"` {
		t.Errorf("an unknown field selector: %v", err)
	}
	_, err = k.clientset().CoreV1().ComponentStatuses().Watch(ctx, metav1.ListOptions{})
	if !apierrors.IsMethodNotSupported(err) || err.Error() != `watch is not supported on resources of kind "componentstatuses"` {
		t.Errorf("a watch of component statuses: %v", err)
	}
	if a := k.ask(t, "GET", "/api/v1/watch/componentstatuses"); a.code != http.StatusNotFound || a.message() != "the server could not find the requested resource" {
		t.Errorf("the deprecated watch path of component statuses: %d %s", a.code, a.body)
	}
}

// TestServiceAllocationsAsKube: Services get and keep what kube-apiserver's
// Service storage allocates and checks: a health check node port for a
// LoadBalancer keeping traffic local, clusterIPs kept in step with
// clusterIP, the families a single-stack cluster has, and no internal
// traffic policy shown on an ExternalName Service.
func TestServiceAllocationsAsKube(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	services := k.clientset().CoreV1().Services("default")
	port80 := []corev1.ServicePort{{Name: "a", Port: 80}}
	lb, err := services.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "lb"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeLoadBalancer, Ports: port80, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
	}}, metav1.CreateOptions{})
	if err != nil || lb.Spec.HealthCheckNodePort == 0 || lb.Spec.HealthCheckNodePort == lb.Spec.Ports[0].NodePort {
		t.Fatalf("a local LoadBalancer: %v, health check node port %d", err, lb.Spec.HealthCheckNodePort)
	}
	k.mustKubectl("create", "service", "loadbalancer", "lb2", "--tcp=80:80")
	k.mustKubectl("patch", "service", "lb2", "-p", `{"spec":{"externalTrafficPolicy":"Local"}}`)
	if got := k.mustKubectl("get", "service", "lb2", "-o", "jsonpath={.spec.healthCheckNodePort}"); got == "" || got == "0" {
		t.Errorf("a LoadBalancer made local has health check node port %q", got)
	}
	// Changing the health check node port, even to one another Service
	// holds, is validation's refusal, as kube's allocator leaves it be.
	taken := fmt.Sprint(lb.Spec.Ports[0].NodePort)
	if out, err := k.kubectl("patch", "service", "lb2", "-p", `{"spec":{"healthCheckNodePort":`+taken+`}}`); err == nil || !strings.Contains(out, "spec.healthCheckNodePort: Forbidden: field is immutable") {
		t.Errorf("changing a health check node port to a taken one: %v %s", err, out)
	}
	// A LoadBalancer asking for no node ports gets only those it names;
	// asking again for them, it gets the rest; giving them up, it keeps
	// none.
	noNodePorts := false
	unported, err := services.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "unported"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeLoadBalancer, AllocateLoadBalancerNodePorts: &noNodePorts,
		Ports: []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 81, NodePort: 30777}},
	}}, metav1.CreateOptions{})
	if err != nil || unported.Spec.Ports[0].NodePort != 0 || unported.Spec.Ports[1].NodePort != 30777 {
		t.Fatalf("a LoadBalancer without node ports: %v %+v", err, unported.Spec.Ports)
	}
	k.mustKubectl("patch", "service", "unported", "-p", `{"spec":{"allocateLoadBalancerNodePorts":true}}`)
	if got := k.mustKubectl("get", "service", "unported", "-o", "jsonpath={.spec.ports[0].nodePort}"); got == "" || got == "0" {
		t.Errorf("a LoadBalancer given node ports again has %q on its first port", got)
	}
	k.mustKubectl("patch", "service", "unported", "--type=json", "-p",
		`[{"op":"replace","path":"/spec/allocateLoadBalancerNodePorts","value":false},{"op":"remove","path":"/spec/ports/0/nodePort"},{"op":"remove","path":"/spec/ports/1/nodePort"}]`)
	if got := k.mustKubectl("get", "service", "unported", "-o", "jsonpath={.spec.ports[*].nodePort}"); got != "" {
		t.Errorf("a LoadBalancer giving up its node ports keeps %q", got)
	}
	// As kube's allocators, a dry run checks less than the write: not
	// whether another Service holds the ClusterIP, nor a node port's
	// range.
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	for _, spec := range []corev1.ServiceSpec{
		{Ports: port80, ClusterIP: lb.Spec.ClusterIP},
		{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: 80}}},
		{Type: corev1.ServiceTypeLoadBalancer, Ports: port80, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, HealthCheckNodePort: 80},
	} {
		if _, err := services.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "dry"}, Spec: spec}, dryRun); err != nil {
			t.Errorf("a dry run of %+v: %v", spec, err)
		}
	}
	requireDual := corev1.IPFamilyPolicyRequireDualStack
	for _, tc := range []struct {
		spec corev1.ServiceSpec
		want string
	}{
		{corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "a.b", ClusterIP: "10.96.0.98"}, "spec.clusterIPs: Forbidden: may not be set for ExternalName services"},
		{corev1.ServiceSpec{Ports: port80, IPFamilyPolicy: &requireDual}, `spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`},
		{corev1.ServiceSpec{Ports: port80, IPFamilies: []corev1.IPFamily{corev1.IPv6Protocol}}, `spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster`},
	} {
		_, err := services.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "refused"}, Spec: tc.spec}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("creating %+v: %v, want %q", tc.spec, err, tc.want)
		}
	}
	// A headless Service without a selector takes both families by
	// default, even on a single-stack cluster, as kube's allocator gives
	// them; the entries of one port on two protocols share a node port.
	manual, err := services.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "manual"}, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone}}, metav1.CreateOptions{})
	if err != nil || manual.Spec.IPFamilyPolicy == nil || *manual.Spec.IPFamilyPolicy != requireDual ||
		!slices.Equal(manual.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}) {
		t.Errorf("a headless Service without a selector: %v %+v", err, manual)
	}
	k.mustKubectl("label", "service", "manual", "edited=yes") // and it can be written again
	// Only SingleStack may drop a family, which it drops by itself.
	if out, err := k.kubectl("patch", "service", "manual", "--type=merge", "-p", `{"spec":{"ipFamilies":["IPv4"]}}`); err == nil ||
		!strings.Contains(out, `spec.ipFamilyPolicy: Invalid value: "RequireDualStack": must be 'SingleStack' to release the secondary IP family`) {
		t.Errorf("dropping a family of a RequireDualStack Service: %v %s", err, out)
	}
	if got := k.mustKubectl("patch", "service", "manual", "--type=merge", "-p", `{"spec":{"ipFamilyPolicy":"SingleStack"}}`, "-o", "jsonpath={.spec.ipFamilies}"); got != `["IPv4"]` {
		t.Errorf("a headless Service made SingleStack keeps families %s", got)
	}
	dns, err := services.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "dns"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{
			{Name: "tcp", Port: 53, Protocol: corev1.ProtocolTCP}, {Name: "udp", Port: 53, Protocol: corev1.ProtocolUDP, NodePort: 30553},
		},
	}}, metav1.CreateOptions{})
	if err != nil || dns.Spec.Ports[0].NodePort != 30553 || dns.Spec.Ports[1].NodePort != 30553 {
		t.Errorf("a port on TCP and UDP, one asking for a node port: %v %+v", err, dns)
	}
	// A dry run allocates nothing and shows, as kube's, the range's
	// network address.
	if out := k.mustKubectl("create", "service", "clusterip", "dry", "--tcp=80:80", "--dry-run=server", "-o", "jsonpath={.spec.clusterIP}"); out != "10.96.0.0" {
		t.Errorf("a dry-run Service's cluster IP: %q", out)
	}
	// A body of another kind is refused by the decoder's conversion, as
	// kube-apiserver refuses it, before any look at its version; a
	// Scale's too.
	for path, want := range map[string]string{
		"/api/v1/namespaces/default/services":                        `Deployment in version \"v1\" cannot be handled as a Service: converting (v1.Deployment) to (core.Service): unknown conversion`,
		"/apis/apps/v1/namespaces/default/deployments/nothing/scale": `Deployment in version \"v1\" cannot be handled as a Scale: converting (v1.Deployment) to (autoscaling.Scale): unknown conversion`,
	} {
		method := http.MethodPost
		if strings.Contains(path, "/scale") {
			method = http.MethodPut
		}
		resp, body := rawDo(t, k, method, path, "application/json", "", []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nothing"}}`))
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), want) {
			t.Errorf("%s %s with a Deployment: %d %s", method, path, resp.StatusCode, body)
		}
	}
	// and kube's placeholder node ports, counting up from 32769.
	if out := k.mustKubectl("create", "service", "nodeport", "dry", "--tcp=80:80", "--tcp=81:81", "--dry-run=server", "-o", "jsonpath={.spec.ports[*].nodePort}"); out != "32769 32770" {
		t.Errorf("a dry-run Service's node ports: %q", out)
	}
	k.mustKubectl("create", "service", "clusterip", "c", "--tcp=80:80")
	if out, err := k.kubectl("patch", "service", "c", "-p", `{"spec":{"clusterIP":"10.96.0.95"}}`); err == nil || !strings.Contains(out, `spec.clusterIPs[0]: Invalid value: ["10.96.0.95"]: may not change once set`) {
		t.Errorf("changing a clusterIP: %v %s", err, out)
	}
	k.mustKubectl("create", "service", "clusterip", "headless", "--clusterip=None", "--tcp=80:80")
	k.mustKubectl("patch", "service", "headless", "-p", `{"spec":{"clusterIP":""}}`)
	if got := k.mustKubectl("get", "service", "headless", "-o", "jsonpath={.spec.clusterIP} {.spec.clusterIPs}"); got != `None ["None"]` {
		t.Errorf("a headless Service patched with an empty clusterIP: %s", got)
	}
	// The allocator's check of the address fields answers alone, before
	// the strategy's validation (which would also say the families may
	// not change).
	_, err = services.Patch(ctx, "c", types.MergePatchType, []byte(`{"spec":{"ipFamilies":["IPv6"]}}`), metav1.PatchOptions{})
	if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Details == nil || len(status.Status().Details.Causes) != 1 ||
		!strings.Contains(err.Error(), "spec.clusterIPs[0]: Invalid value: ") || !strings.Contains(err.Error(), "expected an IPv6 value as indicated by `ipFamilies[0]`") {
		t.Errorf("changing a Service's family: %v", err)
	}
	k.mustKubectl("patch", "service", "c", "--type=merge", "-p", `{"spec":{"type":"ExternalName","externalName":"x.y"}}`)
	if got := k.mustKubectl("get", "service", "c", "-o", "jsonpath={.spec.internalTrafficPolicy}"); got != "" {
		t.Errorf("an ExternalName Service shows internalTrafficPolicy %q", got)
	}
	// What it shows is what it holds: a write that changes nothing of it
	// writes nothing.
	before := k.mustKubectl("get", "service", "c", "-o", "jsonpath={.metadata.resourceVersion}")
	if after := k.mustKubectl("patch", "service", "c", "--type=merge", "-p", `{"spec":{"externalName":"x.y"}}`, "-o", "jsonpath={.metadata.resourceVersion}"); after != before {
		t.Errorf("a patch changing nothing of an ExternalName Service moved its resourceVersion from %s to %s", before, after)
	}
	// A strategic merge patch whose value has the wrong type is refused
	// with the converter's words, as kube-apiserver refuses it.
	if out, err := k.kubectl("patch", "service", "lb", "-p", `{"spec":{"healthCheckNodePort":"x"}}`); err == nil || !strings.Contains(out, `patch: Invalid value: "map[spec:map[healthCheckNodePort:x]]": unrecognized type: int32`) {
		t.Errorf("a strategic merge patch of the wrong type: %v %s", err, out)
	}
	// The patch shown is the one the merge left, without its directives
	// and the lists they order (client-side kubectl apply sends them).
	patch := `{"spec":{"$setElementOrder/ports":[{"port":80}],"ports":[{"port":80,"name":"p"}],"healthCheckNodePort":"x"}}`
	if out, err := k.kubectl("patch", "service", "lb", "-p", patch); err == nil || !strings.Contains(out, `patch: Invalid value: "map[spec:map[healthCheckNodePort:x]]": unrecognized type: int32`) {
		t.Errorf("a strategic merge patch of the wrong type with directives: %v %s", err, out)
	}
	// A headless PreferDualStack Service keeps its families when it gains
	// or loses its selector (kube's allocator leaves an unchanged
	// PreferDualStack Service alone).
	preferDual := corev1.IPFamilyPolicyPreferDualStack
	headless, err := services.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "headless-dual"}, Spec: corev1.ServiceSpec{
		ClusterIP: corev1.ClusterIPNone, IPFamilyPolicy: &preferDual}}, metav1.CreateOptions{})
	if err != nil || len(headless.Spec.IPFamilies) != 2 {
		t.Fatalf("a headless PreferDualStack Service without a selector: %v %+v", err, headless)
	}
	headless, err = services.Patch(ctx, "headless-dual", types.MergePatchType, []byte(`{"spec":{"selector":{"app":"x"}}}`), metav1.PatchOptions{})
	if err != nil || len(headless.Spec.IPFamilies) != 2 {
		t.Errorf("a selector added to a headless PreferDualStack Service of two families: %v %+v", err, headless)
	}
	headless, err = services.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "headless-selected"}, Spec: corev1.ServiceSpec{
		ClusterIP: corev1.ClusterIPNone, IPFamilyPolicy: &preferDual, Selector: map[string]string{"app": "x"}}}, metav1.CreateOptions{})
	if err != nil || len(headless.Spec.IPFamilies) != 1 {
		t.Fatalf("a headless PreferDualStack Service with a selector: %v %+v", err, headless)
	}
	headless, err = services.Patch(ctx, "headless-selected", types.MergePatchType, []byte(`{"spec":{"selector":null}}`), metav1.PatchOptions{})
	if err != nil || len(headless.Spec.IPFamilies) != 1 {
		t.Errorf("the selector taken from a headless PreferDualStack Service of one family: %v %+v", err, headless)
	}
}

// TestNodePortsTakenOnce: Services created at once asking for the same
// node port (or health check node port) get it once, the others kube's
// 422 (500); a Service created again under the name of one holding its
// node port is refused for the port, before its name is found taken.
func TestNodePortsTakenOnce(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	services := k.clientset().CoreV1().Services("default")
	race := func(name string, spec corev1.ServiceSpec) (created int, errs []error) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i)}, Spec: *spec.DeepCopy()}
				_, err := services.Create(ctx, svc, metav1.CreateOptions{})
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					created++
				} else {
					errs = append(errs, err)
				}
			}()
		}
		wg.Wait()
		return created, errs
	}
	created, errs := race("np", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: 30555}}})
	if created != 1 {
		t.Errorf("8 Services created at once asking for node port 30555: %d created, errors %v", created, errs)
	}
	for _, err := range errs {
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.ports[0].nodePort: Invalid value: 30555: provided port is already allocated") {
			t.Errorf("a Service refused its node port: %v", err)
		}
	}
	created, errs = race("hc", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}},
		ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, HealthCheckNodePort: 30556})
	if created != 1 {
		t.Errorf("8 Services created at once asking for health check node port 30556: %d created, errors %v", created, errs)
	}
	for _, err := range errs {
		if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "failed to allocate requested HealthCheck NodePort 30556: provided port is already allocated") {
			t.Errorf("a Service refused its health check node port: %v", err)
		}
	}
	// Every Service can still be written.
	list, err := services.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range list.Items {
		if _, err := services.Patch(ctx, svc.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"patched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
			t.Errorf("a label patch of Service %s: %v", svc.Name, err)
		}
	}
	again := list.Items[0].DeepCopy()
	for _, svc := range list.Items {
		if svc.Spec.Type == corev1.ServiceTypeNodePort {
			again = svc.DeepCopy()
		}
	}
	again.ObjectMeta = metav1.ObjectMeta{Name: again.Name}
	again.Spec.ClusterIP, again.Spec.ClusterIPs = "", nil
	_, err = services.Create(ctx, again, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided port is already allocated") {
		t.Errorf("a Service created again with its node port: %v", err)
	}
	// A PUT whose body names no UID (kubectl replace of a manifest) keeps
	// the Service's own node ports, or gives it new ones that later
	// updates keep.
	for _, tc := range []struct {
		name string
		spec corev1.ServiceSpec
	}{
		{"replaced", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: 30570}}}},
		{"made-nodeport", corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}},
	} {
		if _, err := services.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: tc.name}, Spec: tc.spec}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		body := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Labels: map[string]string{"replaced": "yes"}}, Spec: *tc.spec.DeepCopy()}
		body.Spec.Type = corev1.ServiceTypeNodePort
		if _, err := services.Update(ctx, body, metav1.UpdateOptions{}); err != nil {
			t.Errorf("a PUT of Service %s without a UID: %v", tc.name, err)
		}
		if _, err := services.Patch(ctx, tc.name, types.MergePatchType, []byte(`{"metadata":{"labels":{"patched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
			t.Errorf("a patch of Service %s after a PUT without a UID: %v", tc.name, err)
		}
	}
	// An update giving two ports of one protocol one node port fails in
	// kube's allocator, before validation: a bare 500.
	if _, err := services.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "dup"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Name: "a", Port: 80}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = services.Patch(ctx, "dup", types.MergePatchType,
		[]byte(`{"spec":{"ports":[{"port":80,"nodePort":30160,"name":"a"},{"port":81,"nodePort":30160,"name":"b"}]}}`), metav1.PatchOptions{})
	if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Code != 500 || status.Status().Reason != "" || status.Status().Message != "duplicate nodePort: {TCP 30160}" {
		t.Errorf("an update giving two TCP ports one node port: %v", err)
	}
}

// TestServiceCIDRs: ClusterIPs come from the ServiceCIDRs besides the
// default range, as kube's allocator takes them: a Service may ask for an
// address of another ServiceCIDR (a dry run asks the default range too,
// and is refused, as in kube-apiserver); network and broadcast addresses
// are refused; a ServiceCIDR being deleted gives no more addresses and
// goes once its last Service does.
func TestServiceCIDRs(t *testing.T) {
	k := startKapi(t, "--controllers=service-cidr-controller")
	apply(t, k, `apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: extra}
spec: {cidrs: [10.200.0.0/24]}
`)
	service := func(name, ip, query string) (int, string) {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Service","metadata":{"name":%q},"spec":{"clusterIP":%q,"ports":[{"port":80}]}}`, name, ip)
		resp, data := rawDo(t, k, http.MethodPost, "/api/v1/namespaces/default/services"+query, "application/json", "", []byte(body))
		return resp.StatusCode, string(data)
	}
	if code, body := service("extra", "10.200.0.7", ""); code != http.StatusCreated {
		t.Fatalf("a Service in the other ServiceCIDR: %d %s", code, body)
	}
	if out := k.mustKubectl("get", "ipaddress", "10.200.0.7", "-o", "jsonpath={.spec.parentRef.name}"); out != "extra" {
		t.Errorf("the address's IPAddress names %q", out)
	}
	for _, tc := range []struct{ ip, query, message string }{
		{"10.200.0.8", "?dryRun=All", "failed to allocate IP 10.200.0.8: the provided IP (10.200.0.8) is not in the valid range. The range of valid IPs is 10.96.0.0/12"},
		{"10.200.0.255", "?dryRun=All", "failed to allocate IP 10.200.0.255: the provided IP (10.200.0.255) is not in the valid range. The range of valid IPs is 10.200.0.0/24"},
		{"10.200.0.0", "", "failed to allocate IP 10.200.0.0: the provided network does not match the current range"},
		{"10.96.0.0", "", "failed to allocate IP 10.96.0.0: the provided network does not match the current range"},
		{"10.201.0.1", "", "failed to allocate IP 10.201.0.1: the provided network does not match the current range"},
	} {
		if code, body := service("refused", tc.ip, tc.query); code != http.StatusUnprocessableEntity || !strings.Contains(body, tc.message) {
			t.Errorf("clusterIP %s%s: %d %s, want %q", tc.ip, tc.query, code, body, tc.message)
		}
	}
	// Services asking for no address get one of either range, as kube's
	// allocator tries its ranges in no set order.
	ranges := map[string]int{}
	for i := range 16 {
		name := fmt.Sprintf("any-%d", i)
		if code, body := service(name, "", ""); code != http.StatusCreated {
			t.Fatalf("a Service asking for no address: %d %s", code, body)
		}
		ip := k.mustKubectl("get", "service", name, "-o", "jsonpath={.spec.clusterIP}")
		if strings.HasPrefix(ip, "10.200.0.") {
			ranges["extra"]++
		} else {
			ranges["default"]++
		}
		k.mustKubectl("delete", "service", name)
	}
	if len(ranges) != 2 {
		t.Errorf("16 Services took addresses of the ranges %v, want both", ranges)
	}

	k.mustKubectl("delete", "servicecidr", "extra", "--wait=false")
	if code, body := service("late", "10.200.0.9", ""); code != http.StatusUnprocessableEntity || !strings.Contains(body, "does not match the current range") {
		t.Errorf("an address of a ServiceCIDR being deleted: %d %s", code, body)
	}
	if out := k.mustKubectl("get", "servicecidr", "extra", "-o", "jsonpath={.metadata.deletionTimestamp}"); out == "" {
		t.Errorf("the ServiceCIDR went while a Service held one of its addresses")
	}
	k.mustKubectl("delete", "service", "extra")
	waitFor(t, 30*time.Second, "the ServiceCIDR to go", func() bool {
		_, err := k.kubectl("get", "servicecidr", "extra")
		return err != nil
	})
}

// TestCreateOverObjectBeingDeleted: creating a name whose object is being
// deleted (kept by a finalizer) gets kube-apiserver's 409, which says so.
func TestCreateOverObjectBeingDeleted(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	cms := k.clientset().CoreV1().ConfigMaps("default")
	held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}
	if _, err := cms.Create(ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []metav1.CreateOptions{{}, {DryRun: []string{metav1.DryRunAll}}} {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held"}}, opts)
		if !apierrors.IsAlreadyExists(err) || err.Error() != `object is being deleted: configmaps "held" already exists` {
			t.Errorf("a create (dry run %v) over an object being deleted: %v", opts.DryRun, err)
		}
	}
	if _, err := cms.Patch(ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestDryRunAnswersAsStored: a dry run answers the object as it would
// read once stored, its storage defaults set, as kube-apiserver's dry run
// (which passes it through its storage codec) does: a Job's labels are its
// template's, made by its strategy.
func TestDryRunAnswersAsStored(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	out := k.mustKubectl("create", "job", "dry", "--image=busybox", "--dry-run=server", "-o", "jsonpath={.metadata.labels}")
	if !strings.Contains(out, `"batch.kubernetes.io/job-name":"dry"`) || !strings.Contains(out, `"batch.kubernetes.io/controller-uid"`) {
		t.Errorf("a dry-run Job's labels: %s", out)
	}
	k.mustKubectl("create", "job", "real", "--image=busybox")
	out = k.mustKubectl("label", "job", "real", "extra=yes", "--dry-run=server", "-o", "jsonpath={.metadata.labels.extra}")
	if out != "yes" {
		t.Errorf("a dry-run update's answer: %q", out)
	}
}

// TestUpdatePreconditionsAsKube: an update given a whole object carrying
// another object's UID (one deleted and made again) is kube-apiserver's
// 409 precondition failure, which clients retry from a fresh read, not a
// 422; a resourceVersion that is no number is its storage's bare 500.
func TestUpdatePreconditionsAsKube(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	cms := k.clientset().CoreV1().ConfigMaps("default")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "again"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale := cm.DeepCopy()
	if err := cms.Delete(ctx, "again", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "again"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale.ResourceVersion = ""
	stale.Data = map[string]string{"a": "b"}
	_, err = cms.Update(ctx, stale, metav1.UpdateOptions{})
	want := fmt.Sprintf(`Operation cannot be fulfilled on configmaps "again": StorageError: invalid object, Code: 4, Key: /registry/configmaps/default/again, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s`, cm.UID, again.UID)
	if !apierrors.IsConflict(err) || err.Error() != want {
		t.Errorf("an update with the UID of the object before: %v", err)
	}
	// Mutating admission runs before the resourceVersion is compared: a
	// failing webhook answers a stale update, as in kube-apiserver.
	apply(t, k, `
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: unreachable}
webhooks:
- name: unreachable.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  objectSelector: {matchLabels: {hooked: "yes"}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [UPDATE], resources: [configmaps]}]
  clientConfig: {url: "https://127.0.0.1:1/x"}
`)
	hooked := again.DeepCopy()
	hooked.Labels = map[string]string{"hooked": "yes"}
	hooked.ResourceVersion = "1"
	waitFor(t, 10*time.Second, "the webhook to answer a stale update", func() bool {
		_, err = cms.Update(ctx, hooked, metav1.UpdateOptions{})
		return err != nil && strings.Contains(err.Error(), "failed calling webhook")
	})
	if !apierrors.IsInternalError(err) {
		t.Errorf("a stale update through a failing webhook: %v", err)
	}
	k.mustKubectl("delete", "mutatingwebhookconfiguration", "unreachable")
	// A dry run's precondition is checked by kube's dry-run storage, on
	// the key without storage's prefix.
	_, err = cms.Update(ctx, stale, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	if want := strings.Replace(want, "Key: /registry/", "Key: /", 1); !apierrors.IsConflict(err) || err.Error() != want {
		t.Errorf("a dry-run update with the UID of the object before: %v", err)
	}
	again.ResourceVersion = "abc"
	_, err = cms.Update(ctx, again, metav1.UpdateOptions{})
	if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Code != 500 || err.Error() != `strconv.ParseUint: parsing "abc": invalid syntax` {
		t.Errorf("an update at resourceVersion abc: %v", err)
	}
	// "0" is no version, as kube's storage parses it: the update is
	// unconditional where the type allows it, and refused where not.
	again.ResourceVersion = "0"
	if _, err = cms.Update(ctx, again, metav1.UpdateOptions{}); err != nil {
		t.Errorf("an update at resourceVersion 0: %v", err)
	}
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	widget := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","resourceVersion":"0"}}`
	rawDo(t, k, http.MethodPost, "/apis/example.com/v1/namespaces/default/widgets", "application/json", "", []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}`))
	resp, body := rawDo(t, k, http.MethodPut, "/apis/example.com/v1/namespaces/default/widgets/w", "application/json", "", []byte(widget))
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), "metadata.resourceVersion: Invalid value: 0: must be specified for an update") {
		t.Errorf("a custom resource's update at resourceVersion 0: %d %s, want kube's 422", resp.StatusCode, body)
	}
}

// TestWriteThatChangesNothingKeepsTimes: a manager writing again the
// fields it owns, with a value admission then puts back as it was, changes
// nothing: kube-apiserver keeps its managed fields entry's time, so the
// object is not written (same resourceVersion, no event).
func TestWriteThatChangesNothingKeepsTimes(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	pods := k.clientset().CoreV1().Pods("default")
	toleration := corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "same"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}, Tolerations: []corev1.Toleration{toleration}},
	}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{FieldManager: "creator"}); err != nil {
		t.Fatal(err)
	}
	// The patch leaves out the tolerations DefaultTolerationSeconds added
	// at creation; admission adds them again.
	patch := []byte(`{"spec":{"tolerations":[{"key":"k","operator":"Exists","effect":"NoSchedule"}]}}`)
	first, err := pods.Patch(ctx, "same", types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "patcher"})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // managed fields' times are in seconds
	again, err := pods.Patch(ctx, "same", types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "patcher"})
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != first.ResourceVersion || len(again.Spec.Tolerations) != 3 {
		t.Errorf("the same patch again: resourceVersion %s -> %s, tolerations %v", first.ResourceVersion, again.ResourceVersion, again.Spec.Tolerations)
	}
	for i, e := range again.ManagedFields {
		if !e.Time.Equal(first.ManagedFields[i].Time) {
			t.Errorf("%s's time went from %v to %v", e.Manager, first.ManagedFields[i].Time, e.Time)
		}
	}
}

// TestDeleteAnswersAsKube: a delete answers with the deleted object for
// the types whose kube-apiserver storage returns it (a Status for the
// others), and a Job's delete that leaves its default of orphaning its
// pods implicit is warned, once for a collection, as kube-apiserver's Job
// storage warns.
func TestDeleteAnswersAsKube(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	k.mustKubectl("create", "quota", "q", "--hard=pods=1")
	k.mustKubectl("create", "configmap", "c")
	k.mustKubectl("create", "-f", writeTemp(t, `{"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver","metadata":{"name":"csi.example.com"},"spec":{}}`))
	// dryRun names All as often as it likes, as kube's validation reads it.
	if resp, body := rawDo(t, k, http.MethodDelete, "/api/v1/namespaces/default/configmaps/c?dryRun=All&dryRun=All", "", "application/json", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("a delete with dryRun=All twice: %d %s", resp.StatusCode, body)
	}
	for path, want := range map[string]string{
		"/api/v1/namespaces/default/resourcequotas/q":        "ResourceQuota",
		"/apis/storage.k8s.io/v1/csidrivers/csi.example.com": "CSIDriver",
		"/api/v1/namespaces/default/configmaps/c":            "Status",
	} {
		resp, body := rawDo(t, k, http.MethodDelete, path, "", "application/json", nil)
		var answer struct{ Kind string }
		if err := json.Unmarshal(body, &answer); err != nil || resp.StatusCode != http.StatusOK || answer.Kind != want {
			t.Errorf("DELETE %s: %d %.120s, want a %s", path, resp.StatusCode, body, want)
		}
	}

	const warning = `299 - "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"`
	k.mustKubectl("create", "job", "j", "--image=busybox")
	k.mustKubectl("create", "job", "j2", "--image=busybox")
	resp, body := rawDo(t, k, http.MethodDelete, "/apis/batch/v1/namespaces/default/jobs/j", "", "application/json", nil)
	if got := resp.Header.Values("Warning"); resp.StatusCode != http.StatusOK || !slices.Equal(got, []string{warning}) {
		t.Errorf("deleting a Job without a propagation policy: %d %v %.120s", resp.StatusCode, got, body)
	}
	resp, _ = rawDo(t, k, http.MethodDelete, "/apis/batch/v1/namespaces/default/jobs/gone", "", "application/json", nil)
	if got := resp.Header.Values("Warning"); resp.StatusCode != http.StatusNotFound || !slices.Equal(got, []string{warning}) {
		t.Errorf("deleting a Job that does not exist: %d %v", resp.StatusCode, got)
	}
	resp, _ = rawDo(t, k, http.MethodDelete, "/apis/batch/v1/namespaces/default/jobs", "application/json", "application/json",
		[]byte(`{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}`))
	if got := resp.Header.Values("Warning"); resp.StatusCode != http.StatusOK || !slices.Equal(got, []string{warning}) {
		t.Errorf("deleting the Jobs: %d %v", resp.StatusCode, got)
	}
	if out, err := k.kubectl("delete", "job", "j2"); err != nil || strings.Contains(out, "Warning") {
		t.Errorf("kubectl delete (which asks for background deletion): %v %s", err, out)
	}
	// A collection's delete with bad list options and bad delete options
	// gets the list options' error, which kube-apiserver reads first.
	resp, body = rawDo(t, k, http.MethodDelete, "/api/v1/namespaces/default/configmaps?labelSelector===&dryRun=foo", "", "application/json", nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "found '==', expected") {
		t.Errorf("a collection's delete with a bad selector and a bad dryRun: %d %s", resp.StatusCode, body)
	}
}

// TestWriteAnswersShowEmptyListsAsStored: kube-apiserver answers a write
// with the object read back from storage, where an empty list is none: a
// ClusterRole created or updated with `rules: []` is answered with
// `rules: null`, as every later read shows it (client libraries see None
// or nil, not an empty list, from the write too).
func TestWriteAnswersShowEmptyListsAsStored(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	roles := k.clientset().RbacV1().RESTClient()
	body := `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"empty"},"rules":[]}`
	created, err := roles.Post().Resource("clusterroles").Body([]byte(body)).DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	read, err := roles.Get().Resource("clusterroles").Name("empty").DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	updated, err := roles.Patch(types.MergePatchType).Resource("clusterroles").Name("empty").
		Body([]byte(`{"metadata":{"labels":{"a":"b"}},"rules":[]}`)).DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dryRun, err := roles.Put().Resource("clusterroles").Name("empty").Param("dryRun", "All").Body([]byte(body)).DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for name, answer := range map[string][]byte{"create": created, "read": read, "update": updated, "dry run": dryRun} {
		if !strings.Contains(string(answer), `"rules":null`) {
			t.Errorf("%s answered %s, want rules null", name, answer)
		}
	}
}

// TestSystemPriorityClassesStay: the system priority classes cannot be
// deleted one by one, with kube's PriorityClass storage's 403.
func TestSystemPriorityClassesStay(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	classes := k.clientset().SchedulingV1().PriorityClasses()
	err := classes.Delete(ctx, "system-node-critical", metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) || err.Error() != `priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted` {
		t.Errorf("deleting system-node-critical: %v", err)
	}
	if _, err := classes.Get(ctx, "system-node-critical", metav1.GetOptions{}); err != nil {
		t.Errorf("after the refused delete: %v", err)
	}
	k.mustKubectl("create", "priorityclass", "mine", "--value=10")
	if err := classes.Delete(ctx, "mine", metav1.DeleteOptions{}); err != nil {
		t.Errorf("deleting a class of one's own: %v", err)
	}
}

// TestWritesWithoutUserAgent: a client that sends no User-Agent and no
// fieldManager is the manager "unknown", as in kube-apiserver, and a
// review whose body names no apiVersion is answered in the path's.
func TestWritesWithoutUserAgent(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	send := func(path, body string) (int, []byte) {
		req, err := http.NewRequest(http.MethodPost, k.config.Host+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "") // Go's client then sends none
		resp, err := k.rawClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, data
	}
	code, data := send("/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"agentless"},"data":{"a":"b"}}`)
	var cm corev1.ConfigMap
	if err := json.Unmarshal(data, &cm); code != http.StatusCreated || err != nil || len(cm.ManagedFields) != 1 || cm.ManagedFields[0].Manager != "unknown" {
		t.Errorf("create without a user agent: %d %s", code, data)
	}
	code, data = send("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", `{"spec":{"nonResourceAttributes":{"path":"/x","verb":"get"}}}`)
	if code != http.StatusCreated || !strings.Contains(string(data), `"apiVersion":"authorization.k8s.io/v1"`) || !strings.Contains(string(data), `"allowed":true`) {
		t.Errorf("a review without apiVersion or user agent: %d %s", code, data)
	}
}

// TestPathNamesAsKube: names kube-apiserver's storage makes no key of are
// its 400s (a replace checks its body's name first), a NUL byte names
// nothing, export is refused, and a custom resource's collection has no
// name to replace or patch.
func TestPathNamesAsKube(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	const cms = "/api/v1/namespaces/default/configmaps/"
	const merge = "application/merge-patch+json"
	for _, tc := range []struct {
		method, path, contentType, body string
		code                            int
		message                         string
	}{
		{http.MethodGet, cms + "..", "", "", http.StatusBadRequest, `Name parameter invalid: \"..\": may not be '..'`},
		{http.MethodDelete, cms + ".", "", "", http.StatusBadRequest, `Name parameter invalid: \".\": may not be '.'`},
		{http.MethodPatch, cms + "a%25b", merge, `{}`, http.StatusBadRequest, `Name parameter invalid: \"a%b\": may not contain '%'`},
		{http.MethodGet, "/apis/example.com/v1/namespaces/default/widgets/..", "", "", http.StatusBadRequest, `may not be '..'`},
		{http.MethodPut, cms + "..", "application/json", `{"metadata":{"name":"other"}}`, http.StatusBadRequest, `the name of the object (other) does not match the name on the URL (..)`},
		{http.MethodPut, cms + "..", "application/json", `{"metadata":{"name":".."}}`, http.StatusBadRequest, `may not be '..'`},
		{http.MethodGet, cms + "c1%00", "", "", http.StatusNotFound, `configmaps \"c1\\x00\" not found`},
		{http.MethodGet, "/api/v1/namespaces/default/configmaps/kube-root-ca.crt?export=true", "", "", http.StatusBadRequest,
			"the export parameter, deprecated since v1.14, is no longer supported"},
		{http.MethodPut, "/apis/example.com/v1/namespaces/default/widgets", "application/json",
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}`, http.StatusBadRequest, "name must be provided"},
		{http.MethodPatch, "/apis/example.com/v1/namespaces/default/widgets", merge, `{}`, http.StatusBadRequest, "name must be provided"},
		{http.MethodGet, "/apis/example.com/v1/widgets/w", "", "", http.StatusNotFound, "404 page not found"},
		// The route's media types are checked first, as kube's router does.
		{http.MethodPatch, cms + "a%25b", "text/plain", `{}`, http.StatusUnsupportedMediaType, "415: Unsupported Media Type"},
		// apiextensions' handler answers a sub-resource under /watch/.
		{http.MethodGet, "/apis/example.com/v1/watch/namespaces/default/widgets/w/status", "", "", http.StatusMethodNotAllowed, ""},
	} {
		resp, body := rawDo(t, k, tc.method, tc.path, tc.contentType, "", []byte(tc.body))
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.message) {
			t.Errorf("%s %s: %d %s, want %d %s", tc.method, tc.path, resp.StatusCode, body, tc.code, tc.message)
		}
	}
}

// TestCreateOnUpdateAsKube: a PUT that would create (a type allowing it)
// first checks the UID it carries against the object it did not find, as
// kube's storage does (kubectl replace of a saved manifest after a delete
// is refused, not a new object); a user who may update but not create is
// refused with the authorizer's words.
func TestCreateOnUpdateAsKube(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	events := k.clientset().CoreV1().Events("default")
	gone := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "gone", UID: "11111111-1111-1111-1111-111111111111"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "x", Namespace: "default"}}
	for _, dry := range [][]string{nil, {metav1.DryRunAll}} {
		_, err := events.Update(ctx, gone, metav1.UpdateOptions{DryRun: dry})
		key := "/registry/events/default/gone"
		if dry != nil {
			key = "/events/default/gone"
		}
		want := `Operation cannot be fulfilled on events "gone": StorageError: invalid object, Code: 4, Key: ` + key +
			`, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 11111111-1111-1111-1111-111111111111, UID in object meta: `
		if !apierrors.IsConflict(err) || err.Error() != want {
			t.Errorf("a PUT of a missing event with a UID (dry run %v): %v", dry, err)
		}
	}
	if _, err := events.Get(ctx, "gone", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused PUT stored an event: %v", err)
	}
	k.mustKubectl("create", "role", "updater", "--verb=get,update", "--resource=services")
	k.mustKubectl("create", "rolebinding", "vera-updates", "--role=updater", "--user=vera")
	vera := rest.CopyConfig(k.config)
	vera.Impersonate = rest.ImpersonationConfig{UserName: "vera"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "new"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	var err error
	waitFor(t, 10*time.Second, "vera's update to be authorized", func() bool {
		_, err = kubernetes.NewForConfigOrDie(vera).CoreV1().Services("default").Update(ctx, svc, metav1.UpdateOptions{})
		return !apierrors.IsForbidden(err) || strings.Contains(err.Error(), "cannot create")
	})
	want := `services "new" is forbidden: User "vera" cannot create resource "services" in API group "" in the namespace "default"`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("a PUT creating a Service without the right to create: %v", err)
	}
}

// TestRequestPastItsTimeout: a request whose timeout has passed before its
// handler answers gets kube-apiserver's timeout filter's 504, whatever the
// handler would have answered.
func TestRequestPastItsTimeout(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	resp, body := rawDo(t, k, http.MethodGet, "/api/v1/namespaces/default/configmaps?timeout=1ns", "", "", nil)
	want := `{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}` + "\n"
	if resp.StatusCode != http.StatusGatewayTimeout || string(body) != want {
		t.Errorf("a list with a timeout of 1ns: %d %q", resp.StatusCode, body)
	}
	// Only the headers of the filters outside kube's timeout filter.
	for key, value := range map[string]string{"Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-cache, private",
		"X-Kubernetes-Pf-Flowschema-Uid": "", "X-Content-Type-Options": ""} {
		if got := resp.Header.Get(key); got != value {
			t.Errorf("the 504's %s: %q, want %q", key, got, value)
		}
	}
	if resp.Header.Get("Audit-Id") == "" {
		t.Errorf("the 504 has no audit ID: %v", resp.Header)
	}
	if resp, _ := rawDo(t, k, http.MethodGet, "/api/v1/namespaces/default/configmaps?timeout=10s", "", "", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("a list with a timeout of 10s: %d", resp.StatusCode)
	}
}

// TestDuplicateOwnerReferencesAsKube: owner references that repeat one
// are dropped with kube-apiserver's warning: a create's before its managed
// fields are recorded, a patch's after mutating admission, which the
// warning says.
func TestDuplicateOwnerReferencesAsKube(t *testing.T) {
	k := startKapi(t, "--controllers=namespace-controller") // no garbage collector to delete what the missing owner owns
	ref := `{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"00000000-0000-0000-0000-0000000000aa"}`
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owned","ownerReferences":[` + ref + `,` + ref + `]}}`
	resp, out := rawDo(t, k, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", "", []byte(body))
	want := `299 - ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: 00000000-0000-0000-0000-0000000000aa"`
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("Warning") != want {
		t.Errorf("a create with a repeated owner reference: %d %v", resp.StatusCode, resp.Header.Values("Warning"))
	}
	var created corev1.ConfigMap
	if err := json.Unmarshal(out, &created); err != nil || len(created.OwnerReferences) != 1 {
		t.Errorf("the created object's owner references: %v %s", err, out)
	}
	patch := `{"metadata":{"ownerReferences":[` + ref + `,` + ref + `]}}`
	resp, out = rawDo(t, k, http.MethodPatch, "/api/v1/namespaces/default/configmaps/owned", "application/merge-patch+json", "", []byte(patch))
	want = strings.Replace(want, "duplicate entries;", "duplicate entries after mutating admission happens;", 1)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Warning") != want {
		t.Errorf("a patch with a repeated owner reference: %d %v %s", resp.StatusCode, resp.Header.Values("Warning"), out)
	}
	if got := k.mustKubectl("get", "configmap", "owned", "-o", "jsonpath={.metadata.ownerReferences[*].uid}"); got != "00000000-0000-0000-0000-0000000000aa" {
		t.Errorf("stored owner references: %q", got)
	}
}

// TestCreateClearsSystemFieldsFirst: the fields only the server sets that a
// create's body gives are cleared before its managed fields are recorded,
// so no manager owns them, as in kube-apiserver.
func TestCreateClearsSystemFieldsFirst(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dg","deletionGracePeriodSeconds":5,"uid":"00000000-0000-0000-0000-0000000000bb"},"data":{"a":"b"}}`
	resp, out := rawDo(t, k, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", "", []byte(body))
	var created corev1.ConfigMap
	if err := json.Unmarshal(out, &created); err != nil || resp.StatusCode != http.StatusCreated || len(created.ManagedFields) != 1 {
		t.Fatalf("create: %d %v %s", resp.StatusCode, err, out)
	}
	if fields := string(created.ManagedFields[0].FieldsV1.Raw); fields != `{"f:data":{".":{},"f:a":{}}}` {
		t.Errorf("the create's managed fields: %s", fields)
	}
	if created.DeletionGracePeriodSeconds != nil || created.UID == "00000000-0000-0000-0000-0000000000bb" {
		t.Errorf("the created object kept system fields of the body: %+v", created.ObjectMeta)
	}
}

// TestNodePodCIDRsFollowPodCIDR: a Node's podCIDRs follow its podCIDR
// through the conversion kube-apiserver makes of every body, so that the
// writer owns both in managedFields.
func TestNodePodCIDRsFollowPodCIDR(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	body := `{"apiVersion":"v1","kind":"Node","metadata":{"name":"cidr"},"spec":{"podCIDR":"10.2.0.0/24"}}`
	resp, out := rawDo(t, k, http.MethodPost, "/api/v1/nodes?dryRun=All&fieldManager=t", "application/json", "", []byte(body))
	var node corev1.Node
	if err := json.Unmarshal(out, &node); err != nil || resp.StatusCode != http.StatusCreated || len(node.ManagedFields) != 1 {
		t.Fatalf("create: %d %v %s", resp.StatusCode, err, out)
	}
	if !slices.Equal(node.Spec.PodCIDRs, []string{"10.2.0.0/24"}) || !strings.Contains(string(node.ManagedFields[0].FieldsV1.Raw), `"f:podCIDRs":{".":{},"v:\"10.2.0.0/24\"":{}}`) {
		t.Errorf("a node given a podCIDR: %v, managed fields %s", node.Spec.PodCIDRs, node.ManagedFields[0].FieldsV1.Raw)
	}
}

// TestApplyCreateChecksTheRightToCreateLast: an apply that would create an
// object, by a user who may patch but not create, is refused for what is
// wrong with the object first, as kube-apiserver checks the right to
// create only once the merged object is valid.
func TestApplyCreateChecksTheRightToCreateLast(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	k.mustKubectl("create", "role", "patcher", "--verb=get,patch", "--resource=configmaps")
	k.mustKubectl("create", "rolebinding", "vera-patches", "--role=patcher", "--user=vera")
	vera := rest.CopyConfig(k.config)
	vera.Impersonate = rest.ImpersonationConfig{UserName: "vera"}
	cms := kubernetes.NewForConfigOrDie(vera).CoreV1().ConfigMaps("default")
	apply := func(body string) error {
		_, err := cms.Patch(ctx, "applied", types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: "vera"})
		return err
	}
	var err error
	waitFor(t, 10*time.Second, "vera's patches to be authorized", func() bool {
		err = apply(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied"}}`)
		return !apierrors.IsForbidden(err) || strings.Contains(err.Error(), "cannot create")
	})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "vera" cannot create resource "configmaps"`) {
		t.Errorf("a valid apply that would create: %v", err)
	}
	if err := apply(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}}`); !apierrors.IsBadRequest(err) {
		t.Errorf("an apply naming another object: %v", err)
	}
	if err := apply(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied","labels":{"a":"-"}}}`); !apierrors.IsInvalid(err) {
		t.Errorf("an invalid apply that would create: %v", err)
	}
}
