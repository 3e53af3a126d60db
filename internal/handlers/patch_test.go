package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/resources"
)

// TestPatchEdgeCases applies each patch type's directives to a pod and
// compares the parts of the result they touch.
func TestPatchEdgeCases(t *testing.T) {
	store := registry.NewStore(resources.NewBuiltin().Lookup("", "v1", "pods"), nil)
	original := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"1","b":"2"},"finalizers":["x","y"]},
		"spec":{"containers":[{"name":"one","image":"i1","args":["--v"]},{"name":"two","image":"i2"}],"nodeSelector":{"disk":"ssd"}}}`
	cases := []struct {
		name      string
		patchType types.PatchType
		patch     string
		path      []string // where to look in the result
		want      string   // JSON of the value there; "" means an error
		code      int32
	}{
		{"json add", types.JSONPatchType, `[{"op":"add","path":"/metadata/labels/c","value":"3"}]`, []string{"metadata", "labels"}, `{"a":"1","b":"2","c":"3"}`, 0},
		{"json remove", types.JSONPatchType, `[{"op":"remove","path":"/metadata/labels/a"}]`, []string{"metadata", "labels"}, `{"b":"2"}`, 0},
		{"json replace", types.JSONPatchType, `[{"op":"replace","path":"/spec/containers/1/image","value":"i3"}]`, []string{"spec", "containers"}, `[{"args":["--v"],"image":"i1","name":"one"},{"image":"i3","name":"two"}]`, 0},
		{"json move", types.JSONPatchType, `[{"op":"move","from":"/metadata/labels/a","path":"/metadata/labels/z"}]`, []string{"metadata", "labels"}, `{"b":"2","z":"1"}`, 0},
		{"json copy", types.JSONPatchType, `[{"op":"copy","from":"/metadata/labels/a","path":"/metadata/labels/z"}]`, []string{"metadata", "labels"}, `{"a":"1","b":"2","z":"1"}`, 0},
		{"json test passes", types.JSONPatchType, `[{"op":"test","path":"/metadata/labels/a","value":"1"}]`, []string{"metadata", "labels"}, `{"a":"1","b":"2"}`, 0},
		{"json test fails", types.JSONPatchType, `[{"op":"test","path":"/metadata/labels/a","value":"9"}]`, nil, "", 422},
		{"json remove missing", types.JSONPatchType, `[{"op":"remove","path":"/metadata/labels/q"}]`, nil, "", 422},
		{"json not a list", types.JSONPatchType, `{"op":"add"}`, nil, "", 400},
		{"merge null deletes", types.MergePatchType, `{"metadata":{"labels":{"a":null}}}`, []string{"metadata", "labels"}, `{"b":"2"}`, 0},
		{"merge replaces lists", types.MergePatchType, `{"metadata":{"finalizers":["z"]}}`, []string{"metadata", "finalizers"}, `["z"]`, 0},
		{"smp merges by key", types.StrategicMergePatchType, `{"spec":{"containers":[{"name":"two","image":"i3"}]}}`, []string{"spec", "containers"}, `[{"args":["--v"],"image":"i1","name":"one"},{"image":"i3","name":"two"}]`, 0},
		{"smp $patch delete", types.StrategicMergePatchType, `{"spec":{"containers":[{"name":"one","$patch":"delete"}]}}`, []string{"spec", "containers"}, `[{"image":"i2","name":"two"}]`, 0},
		{"smp $patch replace", types.StrategicMergePatchType, `{"spec":{"nodeSelector":{"$patch":"replace","zone":"a"}}}`, []string{"spec", "nodeSelector"}, `{"zone":"a"}`, 0},
		{"smp $setElementOrder", types.StrategicMergePatchType, `{"spec":{"$setElementOrder/containers":[{"name":"two"},{"name":"one"}]}}`, []string{"spec", "containers"}, `[{"image":"i2","name":"two"},{"args":["--v"],"image":"i1","name":"one"}]`, 0},
		{"smp $deleteFromPrimitiveList", types.StrategicMergePatchType, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["x"]}}`, []string{"metadata", "finalizers"}, `["y"]`, 0},
		{"smp $retainKeys", types.StrategicMergePatchType, `{"spec":{"$retainKeys":["containers"],"containers":[{"name":"one","image":"i1"}]}}`, []string{"spec", "nodeSelector"}, `null`, 0},
		// kube-apiserver patches the object's fields and converts the
		// result back to its type: a kind or apiVersion in the patch is
		// dropped, the rest applied.
		{"smp kind dropped", types.StrategicMergePatchType, `{"kind":"Secret","metadata":{"labels":{"a":"9"}}}`, []string{"kind"}, `"Pod"`, 0},
		{"smp apiVersion dropped", types.StrategicMergePatchType, `{"apiVersion":"apps/v1","metadata":{"labels":{"a":"9"}}}`, []string{"apiVersion"}, `"v1"`, 0},
		{"smp rest of a kind change applied", types.StrategicMergePatchType, `{"kind":"Secret","metadata":{"labels":{"a":"9"}}}`, []string{"metadata", "labels"}, `{"a":"9","b":"2"}`, 0},
		{"smp unknown directive", types.StrategicMergePatchType, `{"spec":{"containers":[{"name":"one","$patch":"bogus"}]}}`, nil, "", 500},
		{"smp list of lists", types.StrategicMergePatchType, `{"spec":{"containers":[[1]]}}`, nil, "", 500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			apply, _, err := patcher(tc.patchType, []byte(tc.patch), metav1.FieldValidationIgnore, store)
			var patched []byte
			if err == nil {
				patched, err = apply([]byte(original))
			}
			if tc.want == "" {
				if err == nil || apiStatus(err).Code != tc.code {
					t.Fatalf("got %v, want a %d", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("patch failed: %v", err)
			}
			var doc map[string]interface{}
			if err := json.Unmarshal(patched, &doc); err != nil {
				t.Fatal(err)
			}
			var got interface{} = doc
			for _, k := range tc.path {
				got = got.(map[string]interface{})[k]
			}
			var want interface{}
			json.Unmarshal([]byte(tc.want), &want)
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				t.Fatalf("got %s, want %s", g, tc.want)
			}
		})
	}
}

// TestPatchContentType: the patch type is read as kube-apiserver reads it,
// before the first ';' and as sent; what its route does not consume is
// the route's 415, what the route takes but the handler does not know is
// the handler's.
func TestPatchContentType(t *testing.T) {
	store := registry.NewStore(resources.NewBuiltin().Lookup("", "v1", "pods"), nil)
	const routeRefusal, handlerRefusal = "415: Unsupported Media Type", "the body of the request was in an unknown format"
	for contentType, want := range map[string]string{
		"application/merge-patch+json":                   string(types.MergePatchType),
		"application/merge-patch+json;charset=utf-8":     string(types.MergePatchType),
		"application/apply-patch+yaml":                   string(applyYAMLType),
		"Application/Merge-Patch+JSON":                   routeRefusal,
		"application/merge-patch+json ; charset=utf-8":   handlerRefusal,
		"application/json, application/merge-patch+json": handlerRefusal,
		"text/plain": routeRefusal,
	} {
		r := httptest.NewRequest(http.MethodPatch, "/api/v1/namespaces/default/pods/p", nil)
		r.Header.Set("Content-Type", contentType)
		got, err := negotiatePatchType(r, store)
		if err != nil {
			if !strings.HasPrefix(apiStatus(err).Message, want) {
				t.Errorf("%q: %v, want %q", contentType, err, want)
			}
		} else if string(got) != want {
			t.Errorf("%q: %s, want %s", contentType, got, want)
		}
		if isApply(r) != (want == string(applyYAMLType)) {
			t.Errorf("%q: taken as apply %v", contentType, isApply(r))
		}
	}
}
