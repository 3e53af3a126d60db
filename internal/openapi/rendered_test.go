package openapi

import (
	"bytes"
	"net/http"
	"testing"

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
		doc := d.v3Document(items, "v1.37.2")
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
