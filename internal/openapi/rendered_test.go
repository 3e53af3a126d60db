package openapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/resources"
)

// BenchmarkV3Index is what a registry change costs the first client that
// reads /openapi/v3 afterwards (kube's mutating admission policy plugin
// reads it every 5 s): a new handler builds every group-version's
// document to name its hash in the index.
func BenchmarkV3Index(b *testing.B) {
	reg := resources.NewBuiltin()
	for b.Loop() {
		h := NewHandler(reg, "v1.37.2")
		if rec := get(b, h, "/openapi/v3", ""); rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

// TestRenderedDefinitionsChangeNoByte: a document written from the
// definitions marshaled once is byte for byte the one written from the
// definitions themselves, so its hash, which clients cache documents by,
// stays the same.
func TestRenderedDefinitionsChangeNoByte(t *testing.T) {
	h := NewHandler(resources.NewBuiltin(), "v1.37.2").(*handler)
	d := h.definitions()
	checked := 0
	for key, items := range h.groupVersionItems() {
		if key != "api/v1" && key != "apis/apps/v1" {
			continue
		}
		checked++
		doc := d.v3Document(items, "v1.37.2", nil)
		cached := mustJSON(doc)
		schemas := doc["components"].(object)["schemas"].(object)
		for name := range schemas {
			s := d.v2[name]
			if v3, ok := d.v3[name]; ok {
				s = v3
			}
			schemas[name] = convert(s, true)
		}
		if direct := mustJSON(doc); !bytes.Equal(cached, direct) {
			t.Errorf("%s: the document written from marshaled definitions differs from the one written from the definitions (%d vs %d bytes)", key, len(cached), len(direct))
		}
	}
	if checked != 2 {
		t.Fatalf("compared %d documents, want 2", checked)
	}
}

// TestNextHandlerKeepsUnchangedDocuments: after a registry change, the
// documents of group-versions whose resources did not change are the
// previous handler's (same hash, nothing made again); a changed
// group-version's is made again.
func TestNextHandlerKeepsUnchangedDocuments(t *testing.T) {
	builtin := resources.NewBuiltin()
	var infos []*resources.Info
	for _, g := range builtin.Groups() {
		for _, v := range g.Versions {
			infos = append(infos, v.Resources...)
		}
	}
	widgets := func() *resources.Info {
		return &resources.Info{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true,
			Verbs: []string{"get", "list", "create"}}
	}
	index := func(h http.Handler) {
		t.Helper()
		if rec := get(t, h, "/openapi/v3", ""); rec.Code != http.StatusOK {
			t.Fatalf("index: %d", rec.Code)
		}
	}
	first := NewHandler(builtin, "v1.37.2").(*handler)
	index(first)
	second := NextHandler(first, resources.New(append(infos[:len(infos):len(infos)], widgets())), "v1.37.2").(*handler)
	index(second)
	if second.v3["api/v1"] != first.v3["api/v1"] || second.v3["apis/apps/v1"] != first.v3["apis/apps/v1"] {
		t.Errorf("a CRD added: the documents of unchanged group-versions were made again")
	}
	if second.v3["apis/example.com/v1"] == nil {
		t.Fatalf("a CRD added: no document of its group-version")
	}
	if second.previous.Load() != nil {
		t.Errorf("a handler keeps the previous one after making its documents")
	}
	// The CRD changed (a new Info): its document is made again.
	changed := widgets()
	changed.Verbs = append(changed.Verbs, "delete")
	unbuilt := NextHandler(second, resources.New(append(infos[:len(infos):len(infos)], changed)), "v1.37.2").(*handler)
	third := NextHandler(unbuilt, resources.New(append(infos[:len(infos):len(infos)], changed)), "v1.37.2").(*handler)
	if third.previous.Load() != second {
		t.Fatalf("a handler after one that made nothing does not take the documents of the one before")
	}
	index(third)
	if third.v3["api/v1"] != first.v3["api/v1"] {
		t.Errorf("a CRD changed: the documents of unchanged group-versions were made again")
	}
	if third.v3["apis/example.com/v1"] == second.v3["apis/example.com/v1"] {
		t.Errorf("a CRD changed: its group-version's document was taken from before")
	}
	if bytes.Contains(second.v3["apis/example.com/v1"].get().json, []byte(`"delete"`)) ||
		!bytes.Contains(third.v3["apis/example.com/v1"].get().json, []byte(`"delete"`)) {
		t.Errorf("the changed CRD's document lacks its new verb")
	}
}

// TestGroupVersionDocumentNarrowsSharedKinds: in a group-version's v3
// document, the kinds every group registers (DeleteOptions, WatchEvent)
// are the core group's and the document's own, as kube-apiserver's are.
func TestGroupVersionDocumentNarrowsSharedKinds(t *testing.T) {
	h := NewHandler(resources.NewBuiltin(), "v1.37.2").(*handler)
	d := h.definitions()
	items := h.groupVersionItems()["apis/apps/v1"]
	var doc object
	if err := json.Unmarshal(mustJSON(d.v3Document(items, "v1.37.2", &schema.GroupVersion{Group: "apps", Version: "v1"})), &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(object)["schemas"].(object)
	for _, name := range []string{"io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent"} {
		kinds := schemas[name].(object)[extGVK].([]interface{})
		var got []string
		for _, k := range kinds {
			gvk := k.(map[string]interface{})
			got = append(got, gvk["group"].(string)+"/"+gvk["version"].(string))
		}
		if !slices.Equal(got, []string{"/v1", "apps/v1"}) {
			t.Errorf("%s kinds %v, want the core group's and apps/v1", name, got)
		}
	}
	// Scale keeps its one kind of another group.
	if kinds := schemas["io.k8s.api.autoscaling.v1.Scale"].(object)[extGVK].([]interface{}); len(kinds) != 1 {
		t.Errorf("Scale kinds %v", kinds)
	}
}
