package printers

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestForColumns(t *testing.T) {
	p, err := ForColumns([]CustomColumn{
		{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
		{Name: "Ready", Type: "string", JSONPath: ".status.conditions[0].status"},
		{Name: "Missing", Type: "string", JSONPath: ".status.nothing"},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	})
	if err != nil {
		t.Fatal(err)
	}
	created := time.Now().Add(-90 * time.Minute).UTC().Format(time.RFC3339)
	obj := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]interface{}{"name": "w", "creationTimestamp": created},
		"spec":     map[string]interface{}{"replicas": int64(3)},
		"status":   map[string]interface{}{"conditions": []interface{}{map[string]interface{}{"status": "True"}}},
	}}
	got := p.Row(obj, time.Now())
	want := []interface{}{"w", int64(3), "True", nil, "90m"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("row = %#v, want %#v", got, want)
	}
	if len(p.Columns) != 5 || p.Columns[0].Name != "Name" || p.Columns[1].Type != "integer" {
		t.Fatalf("columns = %+v", p.Columns)
	}
	for _, bad := range []string{".a[x", "{.a}"} {
		p, err := ForColumns([]CustomColumn{{Name: "kept", JSONPath: ".a"}, {Name: "x", JSONPath: bad}, {Name: "after", JSONPath: ".b"}})
		if err == nil {
			t.Errorf("path %q accepted", bad)
		}
		if len(p.Columns) != 2 || p.Columns[1].Name != "kept" {
			t.Errorf("path %q: columns = %+v, want Name and the column before it", bad, p.Columns)
		}
	}
}
