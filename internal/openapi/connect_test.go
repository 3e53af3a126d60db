package openapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/resources"
)

// TestConnectPaths pins the connect sub-resources' path items to
// kube-apiserver's: connect<Method> operations answering any bytes, the
// options' fields as the path's query parameters, and no options schema.
func TestConnectPaths(t *testing.T) {
	h := NewHandler(resources.NewBuiltin(), "v1.37.2")
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	decode(t, get(t, h, "/openapi/v3", "application/json"), &index)
	var v3 object
	decode(t, get(t, h, index.Paths["api/v1"].ServerRelativeURL, "application/json"), &v3)
	var v2 object
	decode(t, get(t, h, "/openapi/v2", "application/json"), &v2)

	pods := "/api/v1/namespaces/{namespace}/pods/{name}/"
	for _, c := range []struct {
		path, id, kind string
		methods        []string
		params         []string
	}{
		{pods + "exec", "NamespacedPodExec", "PodExecOptions", []string{"get", "post"},
			[]string{"query:command", "query:container", "path:name", "path:namespace", "query:stderr", "query:stdin", "query:stdout", "query:tty"}},
		{pods + "attach", "NamespacedPodAttach", "PodAttachOptions", []string{"get", "post"},
			[]string{"query:container", "path:name", "path:namespace", "query:stderr", "query:stdin", "query:stdout", "query:tty"}},
		{pods + "portforward", "NamespacedPodPortforward", "PodPortForwardOptions", []string{"get", "post"},
			[]string{"path:name", "path:namespace", "query:ports"}},
		{pods + "proxy", "NamespacedPodProxy", "PodProxyOptions", proxyMethods,
			[]string{"path:name", "path:namespace", "query:path"}},
		{pods + "proxy/{path}", "NamespacedPodProxyWithPath", "PodProxyOptions", proxyMethods,
			[]string{"path:name", "path:namespace", "path:path", "query:path"}},
		{"/api/v1/namespaces/{namespace}/services/{name}/proxy/{path}", "NamespacedServiceProxyWithPath", "ServiceProxyOptions", proxyMethods,
			[]string{"path:name", "path:namespace", "path:path", "query:path"}},
		{"/api/v1/nodes/{name}/proxy", "NodeProxy", "NodeProxyOptions", proxyMethods,
			[]string{"path:name", "query:path"}},
	} {
		for _, doc := range []struct {
			name string
			doc  object
		}{{"v3", v3}, {"v2", v2}} {
			item, _ := doc.doc["paths"].(object)[c.path].(object)
			if item == nil {
				t.Errorf("%s: no %s", doc.name, c.path)
				continue
			}
			var methods []string
			for m, v := range item {
				if m == "parameters" {
					continue
				}
				methods = append(methods, m)
				checkConnectOp(t, doc.name, c.path, m, v.(object), "connectCoreV1"+upperFirst(m)+c.id, c.kind)
			}
			sort.Strings(methods)
			want := append([]string(nil), c.methods...)
			sort.Strings(want)
			if !reflect.DeepEqual(methods, want) {
				t.Errorf("%s %s: methods %v, want %v", doc.name, c.path, methods, want)
			}
			var params []string
			for _, p := range item["parameters"].([]interface{}) {
				p := p.(object)
				if ref, ok := p["$ref"].(string); ok {
					p = doc.doc["parameters"].(object)[strings.TrimPrefix(ref, "#/parameters/")].(object)
				}
				params = append(params, p["in"].(string)+":"+p["name"].(string))
				unique := p["uniqueItems"]
				if s, ok := p["schema"].(object); ok {
					unique = s["uniqueItems"]
				}
				if unique != true {
					t.Errorf("%s %s: parameter %v without uniqueItems", doc.name, c.path, p)
				}
				if p["name"] == "name" && p["description"] != "name of the "+c.kind {
					t.Errorf("%s %s: name described %q", doc.name, c.path, p["description"])
				}
			}
			if !reflect.DeepEqual(params, c.params) {
				t.Errorf("%s %s: parameters %v, want %v", doc.name, c.path, params, c.params)
			}
		}
	}

	// Nothing refers to the options kinds: kube-apiserver's documents
	// have no schema for them.
	for kind := range connecters {
		name := "io.k8s.api.core.v1." + kind.Kind
		if v3["components"].(object)["schemas"].(object)[name] != nil || v2["definitions"].(object)[name] != nil {
			t.Errorf("documents define %s", name)
		}
	}
}

func checkConnectOp(t *testing.T, doc, path, method string, op object, id, kind string) {
	t.Helper()
	where := doc + " " + method + " " + path
	if op["operationId"] != id || op[extAction] != "connect" || op["parameters"] != nil {
		t.Errorf("%s: id %v, action %v, parameters %v", where, op["operationId"], op[extAction], op["parameters"])
	}
	if d := op["description"]; !strings.HasPrefix(d.(string), "connect "+strings.ToUpper(method)+" requests to ") {
		t.Errorf("%s: description %q", where, d)
	}
	if gvk := op[extGVK]; !reflect.DeepEqual(gvk, object{"group": "", "version": "v1", "kind": kind}) {
		t.Errorf("%s: gvk %v", where, gvk)
	}
	ok := op["responses"].(object)["200"].(object)
	schema := ok["schema"]
	if doc == "v3" {
		schema = ok["content"].(object)["*/*"].(object)["schema"]
	} else if !reflect.DeepEqual(op["consumes"], []interface{}{"*/*"}) || !reflect.DeepEqual(op["produces"], []interface{}{"*/*"}) {
		t.Errorf("%s: consumes %v, produces %v", where, op["consumes"], op["produces"])
	}
	if !reflect.DeepEqual(schema, object{"type": "string"}) {
		t.Errorf("%s: 200 %v", where, ok)
	}
}

func decode(t *testing.T, rec interface{ Result() *http.Response }, into interface{}) {
	t.Helper()
	res := rec.Result()
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(into); err != nil {
		t.Fatal(err)
	}
}
