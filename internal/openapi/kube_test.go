package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/kube-openapi/pkg/schemaconv"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/kapi-dev/kapi/internal/codecs"
)

// kubeSchema is kube's own server-side apply schema of the built-in types,
// generated from kube-apiserver's OpenAPI and embedded in client-go.
func kubeSchema(t *testing.T) *smdschema.Schema {
	t.Helper()
	tv, err := applyconfigurations.NewTypeConverter(codecs.Scheme).ObjectToTyped(&corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}})
	if err != nil {
		t.Fatal(err)
	}
	return tv.Schema()
}

// TestSemanticsMatchKube checks that the server-side apply schema derived
// from Definitions says what kube's says about every type both know: the
// same fields, scalars, list and map semantics, and defaults. This is what
// keeps the marker tables in kube.go right.
func TestSemanticsMatchKube(t *testing.T) {
	ours, err := schemaconv.ToSchemaFromOpenAPI(Definitions(), false)
	if err != nil {
		t.Fatal(err)
	}
	kube := kubeSchema(t)
	compared := 0
	var diffs []string
	for _, td := range ours.Types {
		theirs, ok := kube.FindNamedType(td.Name)
		// schemaconv gives RawExtension a fixed untyped form of its own.
		if !ok || td.Name == "io.k8s.apimachinery.pkg.runtime.RawExtension" {
			continue
		}
		compared++
		diffs = append(diffs, compareAtoms(td.Name, &td.Atom, &theirs.Atom, ours, kube)...)
	}
	if compared < 300 {
		t.Errorf("compared only %d types with kube's schema", compared)
	}
	sort.Strings(diffs)
	for _, d := range diffs {
		t.Error(d)
	}
}

func compareAtoms(path string, a, b *smdschema.Atom, as, bs *smdschema.Schema) []string {
	var out []string
	add := func(format string, args ...interface{}) {
		out = append(out, path+": "+fmt.Sprintf(format, args...))
	}
	switch {
	case (a.Scalar == nil) != (b.Scalar == nil), (a.List == nil) != (b.List == nil), (a.Map == nil) != (b.Map == nil):
		add("kind differs: ours %s, kube's %s", atomKind(a), atomKind(b))
		return out
	}
	if a.Scalar != nil && *a.Scalar != *b.Scalar {
		add("scalar %s, kube's %s", *a.Scalar, *b.Scalar)
	}
	if a.List != nil {
		if a.List.ElementRelationship != b.List.ElementRelationship || !reflect.DeepEqual(a.List.Keys, b.List.Keys) {
			add("list %s %v, kube's %s %v", a.List.ElementRelationship, a.List.Keys, b.List.ElementRelationship, b.List.Keys)
		}
		out = append(out, compareRefs(path+"[]", a.List.ElementType, b.List.ElementType, as, bs)...)
	}
	if a.Map != nil {
		if rel(a.Map.ElementRelationship) != rel(b.Map.ElementRelationship) {
			add("map %q, kube's %q", a.Map.ElementRelationship, b.Map.ElementRelationship)
		}
		if len(a.Map.Fields) == 0 && len(b.Map.Fields) == 0 {
			out = append(out, compareRefs(path+"{}", a.Map.ElementType, b.Map.ElementType, as, bs)...)
		}
		theirs := map[string]smdschema.StructField{}
		for _, f := range b.Map.Fields {
			theirs[f.Name] = f
		}
		for _, f := range a.Map.Fields {
			g, ok := theirs[f.Name]
			if !ok {
				add("field %s is not in kube's schema", f.Name)
				continue
			}
			delete(theirs, f.Name)
			if !sameJSON(f.Default, g.Default) {
				add("field %s default %#v, kube's %#v", f.Name, f.Default, g.Default)
			}
			out = append(out, compareRefs(path+"."+f.Name, f.Type, g.Type, as, bs)...)
		}
		for name := range theirs {
			add("field %s is missing", name)
		}
	}
	return out
}

func rel(r smdschema.ElementRelationship) smdschema.ElementRelationship {
	if r == "" {
		return smdschema.Separable
	}
	return r
}

// compareRefs compares two type references: named types by name (their
// definitions are compared on their own), inline types in place.
func compareRefs(path string, a, b smdschema.TypeRef, as, bs *smdschema.Schema) []string {
	var out []string
	ar, br := "", ""
	if a.ElementRelationship != nil {
		ar = string(*a.ElementRelationship)
	}
	if b.ElementRelationship != nil {
		br = string(*b.ElementRelationship)
	}
	if ar != br {
		out = append(out, fmt.Sprintf("%s: reference relationship %q, kube's %q", path, ar, br))
	}
	if a.NamedType != nil && b.NamedType != nil {
		// kube's schema inlines RawExtension as the untyped atomic it is.
		if *a.NamedType != *b.NamedType && !(*a.NamedType == "io.k8s.apimachinery.pkg.runtime.RawExtension" && *b.NamedType == "__untyped_atomic_") {
			out = append(out, fmt.Sprintf("%s: type %s, kube's %s", path, *a.NamedType, *b.NamedType))
		}
		return out
	}
	aa, ok1 := as.Resolve(a)
	ba, ok2 := bs.Resolve(b)
	if !ok1 || !ok2 {
		return append(out, fmt.Sprintf("%s: unresolved type (%v, %v)", path, ok1, ok2))
	}
	return append(out, compareAtoms(path, &aa, &ba, as, bs)...)
}

func atomKind(a *smdschema.Atom) string {
	var kinds []string
	if a.Scalar != nil {
		kinds = append(kinds, "scalar")
	}
	if a.List != nil {
		kinds = append(kinds, "list")
	}
	if a.Map != nil {
		kinds = append(kinds, "map")
	}
	return strings.Join(kinds, "+")
}

func sameJSON(a, b interface{}) bool {
	ja, err1 := json.Marshal(stringKeys(a))
	jb, err2 := json.Marshal(stringKeys(b))
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// stringKeys turns the maps YAML decodes into ones JSON can encode.
func stringKeys(v interface{}) interface{} {
	if m, ok := v.(map[interface{}]interface{}); ok {
		out := map[string]interface{}{}
		for k, e := range m {
			out[fmt.Sprint(k)] = stringKeys(e)
		}
		return out
	}
	return v
}
