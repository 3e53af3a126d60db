package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	endpointsfilters "k8s.io/apiserver/pkg/endpoints/filters"

	"github.com/kapi-dev/kapi/internal/storage/pebble"
)

// writeAPI serves the built-in API over an in-memory store, with the
// default namespace.
func writeAPI(t *testing.T) *API {
	t.Helper()
	s, err := pebble.OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	api := newTestAPI(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	api.reg.Run(ctx)
	t.Cleanup(func() { cancel(); api.reg.Wait(); s.Close() })
	if err := api.reg.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	do(t, api, "POST", "/api/v1/namespaces", `{"metadata":{"name":"default"}}`, http.StatusCreated)
	return api
}

// do sends one request (a PATCH is a merge patch) and checks its status
// code; it returns the body.
func do(t *testing.T, api *API, method, path, body string, wantCode int) []byte {
	t.Helper()
	contentType := "application/json"
	if method == "PATCH" {
		contentType = "application/merge-patch+json"
	}
	return doAs(t, api, method, path, contentType, body, wantCode)
}

func doAs(t *testing.T, api *API, method, path, contentType, body string, wantCode int) []byte {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "writer/1.0")
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	if rec.Code != wantCode {
		t.Fatalf("%s %s: %d %s, want %d", method, path, rec.Code, rec.Body, wantCode)
	}
	return rec.Body.Bytes()
}

func decodeInto[T any](t *testing.T, data []byte) *T {
	t.Helper()
	out := new(T)
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	return out
}

// TestWritesThroughTheHandlers drives create, read, update, status,
// dry run and delete through the handlers and the write pipeline, and
// checks what a client sees: system fields, managed fields under the
// client's name, conflicts, and kube-apiserver's Status for each refusal.
func TestWritesThroughTheHandlers(t *testing.T) {
	api := writeAPI(t)
	const pods = "/api/v1/namespaces/default/pods"
	pod := decodeInto[corev1.Pod](t, do(t, api, "POST", pods,
		`{"metadata":{"name":"p","labels":{"a":"1"}},"spec":{"containers":[{"name":"c","image":"i"}]}}`, http.StatusCreated))
	if pod.UID == "" || pod.ResourceVersion == "" || pod.CreationTimestamp.IsZero() {
		t.Fatalf("created pod lacks system fields: %+v", pod.ObjectMeta)
	}
	if len(pod.ManagedFields) != 1 || pod.ManagedFields[0].Manager != "writer" {
		t.Errorf("managedFields %+v, want one entry of writer", pod.ManagedFields)
	}

	// A PUT with a stale resourceVersion is a conflict.
	stale := pod.ResourceVersion
	do(t, api, "PATCH", pods+"/p", `{"metadata":{"labels":{"a":"2"}}}`, http.StatusOK)
	status := decodeInto[metav1.Status](t, do(t, api, "PUT", pods+"/p",
		`{"metadata":{"name":"p","resourceVersion":"`+stale+`"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, http.StatusConflict))
	if status.Reason != metav1.StatusReasonConflict || !strings.Contains(status.Message, "the object has been modified") {
		t.Errorf("stale update: %+v", status)
	}
	// The body's name must be the URL's.
	do(t, api, "PUT", pods+"/p", `{"metadata":{"name":"q"}}`, http.StatusBadRequest)

	// /status changes the status and leaves the spec alone (labels may
	// change through a pod's status, as in kube-apiserver).
	updated := decodeInto[corev1.Pod](t, do(t, api, "PUT", pods+"/p/status",
		`{"metadata":{"name":"p","labels":{"a":"changed"}},"spec":{"containers":[{"name":"c","image":"other"}]},"status":{"phase":"Running"}}`, http.StatusOK))
	if updated.Status.Phase != corev1.PodRunning || updated.Labels["a"] != "changed" || updated.Spec.Containers[0].Image != "i" {
		t.Errorf("after a status update: labels %v image %q phase %q", updated.Labels, updated.Spec.Containers[0].Image, updated.Status.Phase)
	}

	// A dry-run create stores nothing; a create in a missing namespace is
	// refused by NamespaceLifecycle.
	do(t, api, "POST", pods+"?dryRun=All", `{"metadata":{"name":"dry"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, http.StatusCreated)
	do(t, api, "GET", pods+"/dry", "", http.StatusNotFound)
	status = decodeInto[metav1.Status](t, do(t, api, "POST", "/api/v1/namespaces/nope/pods",
		`{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, http.StatusNotFound))
	if status.Message != `namespaces "nope" not found` {
		t.Errorf("create in a missing namespace: %q", status.Message)
	}

	// A fieldManager longer than 128 characters is refused.
	status = decodeInto[metav1.Status](t, do(t, api, "POST", pods+"?fieldManager="+strings.Repeat("m", 129),
		`{"metadata":{"name":"long"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, http.StatusUnprocessableEntity))
	if status.Details == nil || status.Details.Kind != "CreateOptions" || len(status.Details.Causes) != 1 || status.Details.Causes[0].Field != "fieldManager" {
		t.Errorf("long fieldManager: %+v", status)
	}

	// Delete answers with the object; then it is gone.
	deleted := decodeInto[corev1.Pod](t, do(t, api, "DELETE", pods+"/p", "", http.StatusOK))
	if deleted.Name != "p" {
		t.Errorf("delete answered %+v", deleted.ObjectMeta)
	}
	status = decodeInto[metav1.Status](t, do(t, api, "GET", pods+"/p", "", http.StatusNotFound))
	if status.Reason != metav1.StatusReasonNotFound || status.Message != `pods "p" not found` {
		t.Errorf("get after delete: %+v", status)
	}
}

// TestScaleThroughTheHandlers reads and writes a Deployment's replicas
// through its scale sub-resource; a resource without one has no such path.
func TestScaleThroughTheHandlers(t *testing.T) {
	api := writeAPI(t)
	const deployments = "/apis/apps/v1/namespaces/default/deployments"
	do(t, api, "POST", deployments, `{"metadata":{"name":"web"},"spec":{"replicas":2,
		"selector":{"matchLabels":{"app":"web"}},
		"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`, http.StatusCreated)
	scale := decodeInto[autoscalingv1.Scale](t, do(t, api, "GET", deployments+"/web/scale", "", http.StatusOK))
	if scale.Kind != "Scale" || scale.APIVersion != "autoscaling/v1" || scale.Spec.Replicas != 2 || scale.Status.Selector != "app=web" {
		t.Fatalf("scale %+v", scale)
	}
	do(t, api, "PUT", deployments+"/web/scale", `{"metadata":{"name":"web"},"spec":{"replicas":4}}`, http.StatusOK)
	d := decodeInto[appsv1.Deployment](t, do(t, api, "GET", deployments+"/web", "", http.StatusOK))
	if *d.Spec.Replicas != 4 || d.Generation != 2 {
		t.Errorf("after scaling to 4: replicas %d generation %d", *d.Spec.Replicas, d.Generation)
	}
	status := decodeInto[metav1.Status](t, do(t, api, "PUT", deployments+"/web/scale", `{"metadata":{"name":"web"},"spec":{"replicas":-1}}`, http.StatusUnprocessableEntity))
	if len(status.Details.Causes) != 1 || status.Details.Causes[0].Field != "spec.replicas" {
		t.Errorf("negative replicas: %+v", status)
	}
	do(t, api, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"c"}}`, http.StatusCreated)
	do(t, api, "GET", "/api/v1/namespaces/default/configmaps/c/scale", "", http.StatusNotFound)
}

// TestPatchRefusals: the answers kube-apiserver gives to patches it
// refuses after decoding them.
func TestPatchRefusals(t *testing.T) {
	api := writeAPI(t)
	const cm = "/api/v1/namespaces/default/configmaps/c"
	do(t, api, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"c"}}`, http.StatusCreated)
	for _, tc := range []struct {
		name, contentType, query, patch string
		code                            int
		field, message                  string
	}{
		{"unknown JSON patch operation", "application/json-patch+json", "", `[{"op":"frob","path":"/data"}]`,
			http.StatusUnprocessableEntity, "", "the server rejected our request due to an error in our request"},
		{"unknown field in a strict merge patch", "application/merge-patch+json", "?fieldValidation=Strict", `{"foo":1}`,
			http.StatusUnprocessableEntity, "patch", `strict decoding error: unknown field "foo"`},
		{"unknown field in a strict strategic merge patch", "application/strategic-merge-patch+json", "?fieldValidation=Strict", `{"foo":1}`,
			http.StatusUnprocessableEntity, "patch", `Invalid value: "map[foo:1]": strict decoding error: unknown field "foo"`},
		{"unknown field in a strict JSON patch", "application/json-patch+json", "?fieldValidation=Strict", `[{"op":"add","path":"/foo","value":1}]`,
			http.StatusUnprocessableEntity, "patch", `strict decoding error: unknown field "foo"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := decodeInto[metav1.Status](t, doAs(t, api, "PATCH", cm+tc.query, tc.contentType, tc.patch, tc.code))
			if status.Reason != metav1.StatusReasonInvalid || !strings.Contains(status.Message, tc.message) {
				t.Errorf("status %+v, want reason Invalid and a message with %q", status, tc.message)
			}
			if tc.field != "" && (status.Details == nil || len(status.Details.Causes) != 1 || status.Details.Causes[0].Field != tc.field) {
				t.Errorf("causes %+v, want one on %s", status.Details, tc.field)
			}
		})
	}
	// Under the default (Warn) the unknown field is dropped with a warning.
	req := httptest.NewRequest("PATCH", cm, strings.NewReader(`{"foo":1,"data":{"a":"b"}}`))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	rec := httptest.NewRecorder()
	endpointsfilters.WithWarningRecorder(api).ServeHTTP(rec, req) // the server's chain records warnings
	if rec.Code != http.StatusOK || rec.Header().Get("Warning") != `299 - "unknown field \"foo\""` {
		t.Errorf("warned patch: %d, Warning %q", rec.Code, rec.Header().Get("Warning"))
	}
}

// TestPartialObjectMetadataListItemsHaveKinds: each item of a metadata-only
// list says what it is, as kube-apiserver's do (the metadata client
// relies on it).
func TestPartialObjectMetadataListItemsHaveKinds(t *testing.T) {
	api := writeAPI(t)
	req := httptest.NewRequest("GET", "/api/v1/namespaces", nil)
	req.Header.Set("Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	list := decodeInto[metav1.PartialObjectMetadataList](t, rec.Body.Bytes())
	if list.Kind != "PartialObjectMetadataList" || len(list.Items) == 0 {
		t.Fatalf("list %s: %s", list.Kind, rec.Body)
	}
	for _, item := range list.Items {
		if item.Kind != "PartialObjectMetadata" || item.APIVersion != "meta.k8s.io/v1" {
			t.Errorf("item %s: kind %q apiVersion %q", item.Name, item.Kind, item.APIVersion)
		}
	}
}

// TestUnconditionalUpdates: a PUT without a resourceVersion applies to the
// current object for most types; types whose strategy requires one (a
// Lease) refuse it with kube-apiserver's 422.
func TestUnconditionalUpdates(t *testing.T) {
	api := writeAPI(t)
	do(t, api, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"c"}}`, http.StatusCreated)
	do(t, api, "PUT", "/api/v1/namespaces/default/configmaps/c", `{"metadata":{"name":"c"},"data":{"a":"b"}}`, http.StatusOK)

	const leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
	do(t, api, "POST", leases, `{"metadata":{"name":"l"}}`, http.StatusCreated)
	status := decodeInto[metav1.Status](t, do(t, api, "PUT", leases+"/l", `{"metadata":{"name":"l"},"spec":{"holderIdentity":"me"}}`, http.StatusUnprocessableEntity))
	const want = `leases.coordination.k8s.io "l" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`
	if status.Message != want {
		t.Errorf("unconditional lease update: %q, want %q", status.Message, want)
	}
}

// TestListByName checks that a field selector of one name, which reads
// that name's key alone, finds the object and none whose name it starts,
// in a namespace, across namespaces and for a cluster-scoped resource.
func TestListByName(t *testing.T) {
	api := writeAPI(t)
	do(t, api, "POST", "/api/v1/namespaces", `{"metadata":{"name":"other"}}`, http.StatusCreated)
	for _, path := range []string{"/api/v1/namespaces/default/configmaps", "/api/v1/namespaces/other/configmaps"} {
		for _, name := range []string{"a", "ab"} {
			do(t, api, "POST", path, `{"metadata":{"name":"`+name+`"}}`, http.StatusCreated)
		}
	}
	for path, want := range map[string][]string{
		"/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Da":                        {"default/a"},
		"/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dab":                       {"default/ab"},
		"/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dnone":                     nil,
		"/api/v1/configmaps?fieldSelector=metadata.name%3Da":                                           {"default/a", "other/a"},
		"/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Da,metadata.namespace%3Dx": nil,
		"/api/v1/namespaces?fieldSelector=metadata.name%3Dother":                                       {"/other"},
	} {
		list := decodeInto[metav1.PartialObjectMetadataList](t, do(t, api, "GET", path, "", http.StatusOK))
		var got []string
		for _, item := range list.Items {
			got = append(got, item.Namespace+"/"+item.Name)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("GET %s: %v, want %v", path, got, want)
		}
	}
}

// TestRequestBodyLimit: a body over 3 MiB is refused with 413 whether or
// not it declares its length, and one shorter than it declares with the
// read's error, a 500, as kube-apiserver answers.
func TestRequestBodyLimit(t *testing.T) {
	api := writeAPI(t)
	big := `{"metadata":{"name":"big"},"data":{"k":"` + strings.Repeat("x", maxBodyBytes) + `"}}`
	send := func(body io.Reader, length int64) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/api/v1/namespaces/default/configmaps", body)
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = length
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		return rec
	}
	if rec := send(strings.NewReader(big), int64(len(big))); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("declared length over the limit: %d %s", rec.Code, rec.Body)
	}
	if rec := send(io.MultiReader(strings.NewReader(big)), -1); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("undeclared length over the limit: %d %s", rec.Code, rec.Body)
	}
	small := `{"metadata":{"name":"small"}}`
	if rec := send(strings.NewReader(small), int64(len(small))+10); rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), `"message":"unexpected EOF"`) {
		t.Errorf("body shorter than declared: %d %s", rec.Code, rec.Body)
	}
	if rec := send(io.MultiReader(strings.NewReader(small)), -1); rec.Code != http.StatusCreated {
		t.Errorf("undeclared length within the limit: %d %s", rec.Code, rec.Body)
	}
}

// TestUnbuiltCachesAnswerAsKubeApiserver: a server whose watch caches are
// not built (here they stopped before they were, as a CRD's replaced at
// once) refuses watches and lists with selectors or without a limit with
// 429 and a Retry-After its clients honour, and reads gets and pages
// from storage, as kube-apiserver does with a cacher not ready; none
// waits for as long as the client would.
func TestUnbuiltCachesAnswerAsKubeApiserver(t *testing.T) {
	s, err := pebble.OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	built := newTestAPI(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	built.reg.Run(ctx)
	t.Cleanup(func() { cancel(); built.reg.Wait() })
	if err := built.reg.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	do(t, built, "POST", "/api/v1/namespaces", `{"metadata":{"name":"default"}}`, http.StatusCreated)
	do(t, built, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"a"}}`, http.StatusCreated)

	unbuilt := newTestAPI(t, s)
	stopped, stop := context.WithCancel(context.Background())
	stop()
	unbuilt.reg.Run(stopped)
	unbuilt.reg.Wait()
	for _, path := range []string{
		"/api/v1/namespaces/default/configmaps?watch=1",
		"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0",
		"/api/v1/namespaces/default/configmaps",
		"/api/v1/namespaces/default/configmaps?resourceVersion=0",
	} {
		req := httptest.NewRequest("GET", path, nil)
		rec := httptest.NewRecorder()
		unbuilt.ServeHTTP(rec, req)
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" || !strings.Contains(rec.Body.String(), "apiserver cacher is stopped") {
			t.Errorf("GET %s: %d, Retry-After %q: %s", path, rec.Code, rec.Header().Get("Retry-After"), rec.Body)
		}
	}
	for _, path := range []string{
		"/api/v1/namespaces/default/configmaps/a?resourceVersion=0",
		"/api/v1/namespaces/default/configmaps/a",
		// A page without selectors (kubectl's, an informer's) is read from
		// storage too, as kube's delegator reads it.
		"/api/v1/namespaces/default/configmaps?limit=500",
		"/api/v1/namespaces/default/configmaps?limit=500&resourceVersion=0",
	} {
		if body := do(t, unbuilt, "GET", path, "", http.StatusOK); !strings.Contains(string(body), `"name":"a"`) {
			t.Errorf("GET %s: %s", path, body)
		}
	}
}

// TestObjectsTooLargeToStore: an object larger than etcd's request limit
// is refused as kube-apiserver over etcd refuses it (500 with etcd's
// words, no reason), unless only its managed fields make it too large:
// creates, updates and patches then store it without them, as kube's
// handlers do; an apply, whose fields are its managed fields, is refused.
func TestObjectsTooLargeToStore(t *testing.T) {
	api := writeAPI(t)
	large := strings.Repeat("x", 1600<<10)
	body := do(t, api, "POST", "/api/v1/namespaces/default/podtemplates",
		`{"metadata":{"name":"big"},"template":{"spec":{"containers":[{"name":"c","image":"busybox","env":[{"name":"A","value":"`+large+`"}]}]}}}`,
		http.StatusInternalServerError)
	var status metav1.Status
	if err := json.Unmarshal(body, &status); err != nil || status.Message != "etcdserver: request is too large" || status.Reason != "" {
		t.Errorf("a pod template too large to store: %s", body)
	}
	// About 0.9 MB of keys, which managedFields name again.
	keys := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			if i > from {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"%s%05d":""`, strings.Repeat("k", 240), i)
		}
		return b.String()
	}
	created := do(t, api, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"keys"},"data":{`+keys(0, 3600)+`}}`, http.StatusCreated)
	if managed := managedFieldsOf(t, created); managed != 0 {
		t.Errorf("a create fitting only without its managed fields kept %d entries of them", managed)
	}
	doAs(t, api, "PATCH", "/api/v1/namespaces/default/configmaps/applied?fieldManager=test", "application/apply-patch+yaml",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied"},"data":{`+keys(0, 3600)+`}}`, http.StatusInternalServerError)
	do(t, api, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"small"},"data":{"a":"b"}}`, http.StatusCreated)
	patched := do(t, api, "PATCH", "/api/v1/namespaces/default/configmaps/small", `{"data":{`+keys(0, 3600)+`}}`, http.StatusOK)
	if managed := managedFieldsOf(t, patched); managed != 0 {
		t.Errorf("a patch fitting only without its managed fields kept %d entries of them", managed)
	}
	if got := do(t, api, "GET", "/api/v1/namespaces/default/configmaps/small", "", http.StatusOK); managedFieldsOf(t, got) != 0 || !strings.Contains(string(got), strings.Repeat("k", 240)+"03599") {
		t.Error("the patched object read back is not what the patch stored")
	}
}

func managedFieldsOf(t *testing.T, body []byte) int {
	t.Helper()
	var obj metav1.PartialObjectMetadata
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatal(err)
	}
	return len(obj.ManagedFields)
}

// TestJSONPatchCopiesAreBounded: what a JSON patch's copy operations copy
// in all is bounded by kube-apiserver's 3 MiB, even when the copies are
// removed again.
func TestJSONPatchCopiesAreBounded(t *testing.T) {
	api := writeAPI(t)
	do(t, api, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"p"}}`, http.StatusCreated)
	ops := []string{`{"op":"add","path":"/data","value":{"a":"` + strings.Repeat("x", 800<<10) + `"}}`}
	for range 5 {
		ops = append(ops, `{"op":"copy","from":"/data/a","path":"/data/b"}`, `{"op":"remove","path":"/data/b"}`)
	}
	body := doAs(t, api, "PATCH", "/api/v1/namespaces/default/configmaps/p", "application/json-patch+json", "["+strings.Join(ops, ",")+"]", http.StatusUnprocessableEntity)
	if !strings.Contains(string(body), "the server rejected our request due to an error in our request") {
		t.Errorf("the patch copying 4 MB: %s", body)
	}
	doAs(t, api, "PATCH", "/api/v1/namespaces/default/configmaps/p", "application/json-patch+json", "["+strings.Join(ops[:5], ",")+"]", http.StatusOK)
}

// TestServiceOfAnotherFamily: on this single-stack (IPv4) server, a
// Service naming an IPv6 cluster IP is refused at that IP, as kube's
// allocator refuses it, not stored without it.
func TestServiceOfAnotherFamily(t *testing.T) {
	api := writeAPI(t)
	for policy, want := range map[string][]string{
		`"PreferDualStack"`:  {`spec.clusterIPs[1]: Invalid value: [\"10.96.0.77\",\"fd00::1\"]: IPv6 is not configured on this cluster`},
		`"RequireDualStack"`: {`spec.clusterIPs[1]: Invalid value: [\"10.96.0.77\",\"fd00::1\"]: IPv6 is not configured on this cluster`},
		`null`: {
			`spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified`,
			`spec.clusterIPs[1]: Invalid value: [\"10.96.0.77\",\"fd00::1\"]: IPv6 is not configured on this cluster`,
		},
	} {
		body := do(t, api, "POST", "/api/v1/namespaces/default/services?dryRun=All",
			`{"metadata":{"name":"ds"},"spec":{"ports":[{"port":80}],"clusterIP":"10.96.0.77","clusterIPs":["10.96.0.77","fd00::1"],"ipFamilyPolicy":`+policy+`}}`,
			http.StatusUnprocessableEntity)
		for _, w := range want {
			if !strings.Contains(string(body), w) {
				t.Errorf("policy %s: %s lacks %s", policy, body, w)
			}
		}
	}
	body := do(t, api, "POST", "/api/v1/namespaces/default/services", `{"metadata":{"name":"six"},"spec":{"ports":[{"port":80}],"clusterIP":"fd00::5"}}`, http.StatusUnprocessableEntity)
	if !strings.Contains(string(body), `spec.clusterIPs[0]: Invalid value: [\"fd00::5\"]: IPv6 is not configured on this cluster`) {
		t.Errorf("a single IPv6 cluster IP: %s", body)
	}
}

// TestUnreadableBody: a body that cannot be read (shorter than declared,
// badly chunked) is answered as kube-apiserver answers it: 500 with the
// read's own error, whatever its declared length.
func TestUnreadableBody(t *testing.T) {
	api := writeAPI(t)
	for _, declared := range []int64{500, -1} {
		req := httptest.NewRequest("POST", "/api/v1/namespaces/default/configmaps", nil)
		req.Header.Set("Content-Type", "application/json")
		req.Body = io.NopCloser(io.MultiReader(strings.NewReader(`{"metadata":`), iotest.ErrReader(errors.New("request declared a Content-Length of 500 but only wrote 12 bytes"))))
		req.ContentLength = declared
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		var status metav1.Status
		if err := json.Unmarshal(rec.Body.Bytes(), &status); err != nil || rec.Code != http.StatusInternalServerError ||
			status.Message != "request declared a Content-Length of 500 but only wrote 12 bytes" || status.Reason != "" {
			t.Errorf("declared %d: %d %s", declared, rec.Code, rec.Body)
		}
	}
}
