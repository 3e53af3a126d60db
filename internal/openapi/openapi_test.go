package openapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/discovery"
	clientopenapi "k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/spec3"
	protomodels "k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/resources"
)

func def(t *testing.T, name string) *spec.Schema {
	t.Helper()
	s, ok := Definitions()[name]
	if !ok {
		t.Fatalf("no definition %s", name)
	}
	return s
}

func ext(s spec.Schema, name string) interface{} { return s.Extensions[name] }

func TestDefinitionNames(t *testing.T) {
	for gvk, want := range map[schema.GroupVersionKind]string{
		{Version: "v1", Kind: "Pod"}:                                                     "io.k8s.api.core.v1.Pod",
		{Version: "v1", Kind: "PodList"}:                                                 "io.k8s.api.core.v1.PodList",
		{Group: "apps", Version: "v1", Kind: "Deployment"}:                               "io.k8s.api.apps.v1.Deployment",
		{Group: "autoscaling", Version: "v1", Kind: "Scale"}:                             "io.k8s.api.autoscaling.v1.Scale",
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}:                "io.k8s.api.rbac.v1.Role",
		{Version: "v1", Kind: "Status"}:                                                  "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}: "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
	} {
		if got := DefinitionName(gvk); got != want {
			t.Errorf("DefinitionName(%v) = %q, want %q", gvk, got, want)
		}
	}
	if got := DefinitionName(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Nope"}); got != "" {
		t.Errorf("unknown kind named %q", got)
	}
	// Every served kind, its list and the meta kinds have a definition.
	for _, gvk := range rootKinds(resources.NewBuiltin()) {
		if _, ok := Definitions()[DefinitionName(gvk)]; !ok {
			t.Errorf("no definition for %v", gvk)
		}
	}
}

func TestPod(t *testing.T) {
	pod := def(t, "io.k8s.api.core.v1.Pod")
	if !strings.HasPrefix(pod.Description, "Pod is a collection of containers that can run on a host.") {
		t.Errorf("description %q", pod.Description)
	}
	if !pod.Type.Contains("object") || len(pod.Required) != 0 {
		t.Errorf("type %v, required %v", pod.Type, pod.Required)
	}
	wantGVK := []interface{}{map[string]interface{}{"group": "", "version": "v1", "kind": "Pod"}}
	if got := ext(*pod, extGVK); !reflect.DeepEqual(got, wantGVK) {
		t.Errorf("gvk %v", got)
	}
	for field, ref := range map[string]string{
		"metadata": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
		"spec":     "io.k8s.api.core.v1.PodSpec",
		"status":   "io.k8s.api.core.v1.PodStatus",
	} {
		p := pod.Properties[field]
		if refName(&p) != ref || p.Description == "" {
			t.Errorf("%s: ref %q, description %q", field, refName(&p), p.Description)
		}
	}
	if kind := pod.Properties["kind"]; !kind.Type.Contains("string") || !strings.HasPrefix(kind.Description, "Kind is a string value representing the REST resource") {
		t.Errorf("kind %+v", kind)
	}

	spec := def(t, "io.k8s.api.core.v1.PodSpec")
	if !reflect.DeepEqual(spec.Required, []string{"containers"}) {
		t.Errorf("PodSpec required %v", spec.Required)
	}
	containers := spec.Properties["containers"]
	if refName(containers.Items.Schema) != "io.k8s.api.core.v1.Container" ||
		ext(containers, extListType) != "map" || !reflect.DeepEqual(ext(containers, extListMapKeys), []interface{}{"name"}) ||
		ext(containers, extPatchStrategy) != "merge" || ext(containers, extPatchMergeKey) != "name" {
		t.Errorf("containers %+v", containers)
	}
	if ns := spec.Properties["nodeSelector"]; ext(ns, extMapType) != "atomic" || !ns.AdditionalProperties.Schema.Type.Contains("string") {
		t.Errorf("nodeSelector %+v", ns)
	}
	if tol := spec.Properties["tolerations"]; ext(tol, extListType) != "atomic" {
		t.Errorf("tolerations %+v", tol)
	}
}

func TestContainer(t *testing.T) {
	c := def(t, "io.k8s.api.core.v1.Container")
	if c.Description != "A single application container that you want to run within a pod." {
		t.Errorf("description %q", c.Description)
	}
	if !reflect.DeepEqual(c.Required, []string{"name"}) {
		t.Errorf("required %v", c.Required)
	}
	name := c.Properties["name"]
	if !name.Type.Contains("string") || name.Default != "" || !strings.HasPrefix(name.Description, "Name of the container specified as a DNS_LABEL.") {
		t.Errorf("name %+v", name)
	}
	ports := c.Properties["ports"]
	if !ports.Type.Contains("array") || refName(ports.Items.Schema) != "io.k8s.api.core.v1.ContainerPort" {
		t.Errorf("ports %+v", ports)
	}
	if ext(ports, extListType) != "map" || !reflect.DeepEqual(ext(ports, extListMapKeys), []interface{}{"containerPort", "protocol"}) {
		t.Errorf("ports list type %v keys %v", ext(ports, extListType), ext(ports, extListMapKeys))
	}
	if ext(ports, extPatchStrategy) != "merge" || ext(ports, extPatchMergeKey) != "containerPort" {
		t.Errorf("ports patch %v %v", ext(ports, extPatchStrategy), ext(ports, extPatchMergeKey))
	}
	if cmd := c.Properties["command"]; ext(cmd, extListType) != "atomic" || !cmd.Items.Schema.Type.Contains("string") {
		t.Errorf("command %+v", cmd)
	}
	if res := c.Properties["resources"]; refName(&res) != "io.k8s.api.core.v1.ResourceRequirements" || !reflect.DeepEqual(res.Default, map[string]interface{}{}) {
		t.Errorf("resources %+v", res)
	}
	if tty := c.Properties["tty"]; !tty.Type.Contains("boolean") || tty.Default != nil {
		t.Errorf("tty %+v", tty)
	}
	port := def(t, "io.k8s.api.core.v1.ContainerPort")
	if !reflect.DeepEqual(port.Required, []string{"containerPort"}) || port.Properties["protocol"].Default != "TCP" {
		t.Errorf("ContainerPort required %v protocol %+v", port.Required, port.Properties["protocol"])
	}
	if cp := port.Properties["containerPort"]; !cp.Type.Contains("integer") || cp.Format != "int32" {
		t.Errorf("containerPort %+v", cp)
	}
	limits := def(t, "io.k8s.api.core.v1.ResourceRequirements").Properties["limits"]
	if !limits.Type.Contains("object") || refName(limits.AdditionalProperties.Schema) != "io.k8s.apimachinery.pkg.api.resource.Quantity" {
		t.Errorf("limits %+v", limits)
	}
}

// TestEnumValuesParagraph checks the paragraph of enum values kube's
// generator appends to a field's description: one blank line before it,
// two where the field's comment ends in a blank line before its markers.
func TestEnumValuesParagraph(t *testing.T) {
	for _, c := range []struct{ def, field, before string }{
		{"io.k8s.api.core.v1.Container", "imagePullPolicy", "if :latest tag is specified, or IfNotPresent otherwise. Cannot be updated. More info: https://kubernetes.io/docs/concepts/containers/images#updating-images\n\nPossible enum values:\n"},
		{"io.k8s.api.admissionregistration.v1.Mutation", "patchType", "Required.\n\n\nPossible enum values:\n"},
		{"io.k8s.api.admissionregistration.v1.RuleWithOperations", "scope", "Default is \"*\".\n\n\nPossible enum values:\n"},
	} {
		description := def(t, c.def).Properties[c.field].Description
		if !strings.Contains(description, c.before) {
			t.Errorf("%s.%s: description %q, want it to contain %q", c.def, c.field, description, c.before)
		}
	}
}

func TestObjectMeta(t *testing.T) {
	m := def(t, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
	if m.Description != "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create." {
		t.Errorf("description %q", m.Description)
	}
	if len(m.Required) != 0 || len(m.Properties) != 15 {
		t.Errorf("required %v, %d properties", m.Required, len(m.Properties))
	}
	if ts := m.Properties["creationTimestamp"]; refName(&ts) != "io.k8s.apimachinery.pkg.apis.meta.v1.Time" || ts.Default != nil ||
		!strings.HasPrefix(ts.Description, "CreationTimestamp is a timestamp representing the server time") {
		t.Errorf("creationTimestamp %+v", ts)
	}
	if l := m.Properties["labels"]; !l.Type.Contains("object") || !l.AdditionalProperties.Schema.Type.Contains("string") {
		t.Errorf("labels %+v", l)
	}
	if f := m.Properties["finalizers"]; ext(f, extListType) != "set" || ext(f, extPatchStrategy) != "merge" {
		t.Errorf("finalizers %+v", f)
	}
	if o := m.Properties["ownerReferences"]; ext(o, extListType) != "map" || !reflect.DeepEqual(ext(o, extListMapKeys), []interface{}{"uid"}) {
		t.Errorf("ownerReferences %+v", o)
	}
	if g := m.Properties["generation"]; !g.Type.Contains("integer") || g.Format != "int64" {
		t.Errorf("generation %+v", g)
	}
	if mt := ext(*def(t, "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"), extMapType); mt != "atomic" {
		t.Errorf("LabelSelector map type %v", mt)
	}
	if mt := ext(*def(t, "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference"), extMapType); mt != "atomic" {
		t.Errorf("OwnerReference map type %v", mt)
	}
}

func TestSpecialTypes(t *testing.T) {
	for name, want := range map[string][2]string{
		"io.k8s.apimachinery.pkg.apis.meta.v1.Time":       {"string", "date-time"},
		"io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime":  {"string", "date-time"},
		"io.k8s.apimachinery.pkg.api.resource.Quantity":   {"string", ""},
		"io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"string", "int-or-string"},
		"io.k8s.apimachinery.pkg.runtime.RawExtension":    {"object", ""},
		"io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1":   {"object", ""},
		"io.k8s.apimachinery.pkg.apis.meta.v1.Patch":      {"object", ""},
	} {
		s := def(t, name)
		if !reflect.DeepEqual([]string(s.Type), []string{want[0]}) || s.Format != want[1] || s.Description == "" || len(s.Properties) != 0 {
			t.Errorf("%s: type %v format %q description %.40q properties %v", name, s.Type, s.Format, s.Description, s.Properties)
		}
	}
	// Described as kube's generated code describes them.
	if d := def(t, "io.k8s.apimachinery.pkg.api.resource.Quantity").Description; !strings.HasPrefix(d, "Quantity is a fixed-point representation of a number.") {
		t.Errorf("Quantity description %q", d)
	}
	// Durations are strings too (no served kind has one).
	b := newBuilder(codecs.Scheme)
	if d := b.defs[b.ref(reflect.TypeFor[metav1.Duration]())]; !d.Type.Contains("string") || !strings.HasPrefix(d.Description, "Duration is a wrapper around time.Duration") {
		t.Errorf("Duration %+v", d)
	}
	// v3 describes int-or-string and quantities as oneOf.
	v3 := builtin().v3
	if s := v3["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]; s == nil || len(s.OneOf) != 2 || s.OneOf[0].Type[0] != "integer" || s.Format != "int-or-string" {
		t.Errorf("v3 IntOrString %+v", s)
	}
	if s := v3["io.k8s.apimachinery.pkg.api.resource.Quantity"]; s == nil || len(s.OneOf) != 2 || s.OneOf[1].Type[0] != "number" {
		t.Errorf("v3 Quantity %+v", s)
	}
}

// TestTypeConverter shows the definitions can drive server-side apply: they
// make a type converter, which converts typed objects and merges them with
// kube's list semantics.
func TestTypeConverter(t *testing.T) {
	tc, err := managedfields.NewTypeConverter(Definitions(), false)
	if err != nil {
		t.Fatal(err)
	}
	pod := func(ports ...corev1.ContainerPort) *corev1.Pod {
		return &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "x"}, CreationTimestamp: metav1.Now()},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{
					Name: "c", Image: "nginx", Ports: ports,
					Resources:      corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("http")}}},
				}},
				Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
			},
		}
	}
	live, err := tc.ObjectToTyped(pod(corev1.ContainerPort{ContainerPort: 80, Protocol: corev1.ProtocolTCP}))
	if err != nil {
		t.Fatal(err)
	}
	applied, err := tc.ObjectToTyped(pod(corev1.ContainerPort{ContainerPort: 80, Protocol: corev1.ProtocolUDP}))
	if err != nil {
		t.Fatal(err)
	}
	merged, err := live.Merge(applied)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := tc.TypedToObject(merged)
	if err != nil {
		t.Fatal(err)
	}
	// Ports are keyed by containerPort and protocol: both are kept.
	b, _ := json.Marshal(obj)
	var out corev1.Pod
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if got := out.Spec.Containers[0].Ports; len(got) != 2 {
		t.Errorf("merged ports %+v", got)
	}
	// The kind is found by its GVK, and its fields are known: an unknown
	// one is an error.
	bogus := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "v1", "kind": "Pod", "bogus": "x"}}
	if _, err := tc.ObjectToTyped(bogus); err == nil {
		t.Error("a Pod with an unknown field converted")
	}
	bogus.Object = map[string]interface{}{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]interface{}{"replicas": int64(2)}}
	if _, err := tc.ObjectToTyped(bogus); err != nil {
		t.Errorf("Deployment: %v", err)
	}
}

func get(t testing.TB, h http.Handler, path, accept string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// supportsFieldValidation is kubectl's check that a server validates fields
// for a kind: the first PATCH operation for the kind lists fieldValidation.
func supportsFieldValidation(doc *spec3.OpenAPI, gvk schema.GroupVersionKind) bool {
	for _, path := range doc.Paths.Paths {
		op := path.Patch
		if op == nil {
			continue
		}
		var got map[string]string
		if err := op.Extensions.GetObject(extGVK, &got); err != nil ||
			got["group"] != gvk.Group || got["version"] != gvk.Version || got["kind"] != gvk.Kind {
			continue
		}
		for _, p := range op.Parameters {
			if p.Name == "fieldValidation" && p.In == "query" {
				return true
			}
		}
		return false
	}
	return false
}

func TestV3(t *testing.T) {
	reg := resources.NewBuiltin()
	h := NewHandler(reg, "v1.37.2")

	rec := get(t, h, "/openapi/v3", "")
	// kube-apiserver's type (what JSON sniffs as), and an entity tag.
	if rec.Code != http.StatusOK || rec.Header().Get("Etag") == "" || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("index: %d %v", rec.Code, rec.Header())
	}
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &index); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"api", "apis", "api/v1", "apis/apps/v1", "apis/apps", "apis/autoscaling/v2", "apis/apiextensions.k8s.io/v1"} {
		if !strings.HasPrefix(index.Paths[key].ServerRelativeURL, "/openapi/v3/"+key+"?hash=") {
			t.Errorf("index entry %s: %+v", key, index.Paths[key])
		}
	}

	url := index.Paths["api/v1"].ServerRelativeURL
	rec = get(t, h, url, "application/json")
	if rec.Code != http.StatusOK || rec.Header().Get("Cache-Control") != "public, immutable" || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%s: %d %v", url, rec.Code, rec.Header())
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != "3.0.0" || doc.Info.Version != "1.37" {
		t.Errorf("openapi %q, info %+v", doc.Version, doc.Info)
	}
	pod := doc.Paths.Paths["/api/v1/namespaces/{namespace}/pods/{name}"]
	if pod == nil || pod.Get == nil || pod.Put == nil || pod.Patch == nil || pod.Delete == nil {
		t.Fatalf("pod path %+v", pod)
	}
	patch := pod.Patch
	if patch.Extensions[extAction] != "patch" || patch.OperationId != "patchCoreV1NamespacedPod" {
		t.Errorf("patch %v %q", patch.Extensions, patch.OperationId)
	}
	var params []string
	for _, p := range patch.Parameters {
		params = append(params, p.In+":"+p.Name)
	}
	if !reflect.DeepEqual(params, []string{"query:dryRun", "query:fieldManager", "query:fieldValidation", "query:force"}) {
		t.Errorf("patch parameters %v", params)
	}
	if s := patch.RequestBody.Content["application/apply-patch+yaml"]; s == nil || s.Schema.Ref.String() != "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch" {
		t.Errorf("patch body %+v", patch.RequestBody)
	}
	if s := patch.Responses.StatusCodeResponses[200].Content["application/json"].Schema; s.Ref.String() != "#/components/schemas/io.k8s.api.core.v1.Pod" {
		t.Errorf("patch response %+v", s)
	}
	if list := doc.Paths.Paths["/api/v1/namespaces/{namespace}/pods"]; list == nil || list.Get == nil || list.Post == nil || list.Delete == nil ||
		list.Get.Extensions[extAction] != "list" || list.Delete.Extensions[extAction] != "deletecollection" {
		t.Errorf("pod collection %+v", list)
	}
	for _, path := range []string{"/api/v1/pods", "/api/v1/watch/namespaces/{namespace}/pods/{name}", "/api/v1/namespaces/{namespace}/pods/{name}/status", "/api/v1/namespaces/{namespace}/pods/{name}/binding", "/api/v1/namespaces/{namespace}/replicationcontrollers/{name}/scale"} {
		if doc.Paths.Paths[path] == nil {
			t.Errorf("no path %s", path)
		}
	}
	if scale := doc.Paths.Paths["/api/v1/namespaces/{namespace}/replicationcontrollers/{name}/scale"]; scale != nil {
		var gvk map[string]string
		scale.Patch.Extensions.GetObject(extGVK, &gvk)
		if gvk["group"] != "autoscaling" || gvk["kind"] != "Scale" {
			t.Errorf("scale patch gvk %v", gvk)
		}
	}

	// Schemas: every reference resolves in the document, and references
	// with a description are wrapped in allOf.
	schemas := doc.Components.Schemas
	for _, item := range doc.Paths.Paths {
		for _, op := range []*spec3.Operation{item.Get, item.Put, item.Post, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			var media []*spec3.MediaType
			if op.RequestBody != nil {
				for _, m := range op.RequestBody.Content {
					media = append(media, m)
				}
			}
			for _, r := range op.Responses.StatusCodeResponses {
				for _, m := range r.Content {
					media = append(media, m)
				}
			}
			for _, m := range media {
				if ref := m.Schema.Ref.String(); ref != "" && schemas[strings.TrimPrefix(ref, v3RefPrefix)] == nil {
					t.Errorf("%s refers to missing %s", op.OperationId, ref)
				}
			}
		}
	}
	for name, s := range schemas {
		walkRefs(s, func(ref string) {
			if _, ok := schemas[strings.TrimPrefix(ref, v3RefPrefix)]; !ok || !strings.HasPrefix(ref, v3RefPrefix) {
				t.Errorf("%s refers to missing %s", name, ref)
			}
		})
	}
	meta := schemas["io.k8s.api.core.v1.Pod"].Properties["metadata"]
	if len(meta.AllOf) != 1 || meta.AllOf[0].Ref.String() != "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" || meta.Description == "" {
		t.Errorf("Pod metadata %+v", meta)
	}
	if _, ok := schemas["io.k8s.api.apps.v1.Deployment"]; ok {
		t.Error("api/v1 has apps schemas")
	}
	if s := schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]; s == nil || len(s.OneOf) != 2 {
		t.Errorf("v3 IntOrString %+v", s)
	}

	// kubectl finds server-side field validation for every resource.
	for _, g := range reg.Groups() {
		for _, v := range g.Versions {
			key := strings.TrimPrefix(gvPrefix(g.Group, v.Version), "/")
			rec := get(t, h, index.Paths[key].ServerRelativeURL, "")
			var doc spec3.OpenAPI
			if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			for _, info := range v.Resources {
				if contains(info.Verbs, "patch") && !supportsFieldValidation(&doc, info.GroupVersionKind()) {
					t.Errorf("%s: no PATCH with fieldValidation for %v", key, info.GroupVersionKind())
				}
			}
		}
	}

	// An old hash redirects to the current document; an unknown one is 404.
	rec = get(t, h, "/openapi/v3/api/v1?hash=0123", "")
	if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != url {
		t.Errorf("stale hash: %d %v", rec.Code, rec.Header())
	}
	if rec = get(t, h, "/openapi/v3/apis/nope/v1", ""); rec.Code != http.StatusNotFound {
		t.Errorf("unknown group-version: %d", rec.Code)
	}
	if rec = get(t, h, url, "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"); rec.Code != http.StatusOK ||
		rec.Header().Get("Content-Type") != "application/com.github.proto-openapi.spec.v3.v1.0+protobuf" {
		t.Errorf("v3 protobuf: %d %v", rec.Code, rec.Header())
	}
	if rec = get(t, h, url, "text/html"); rec.Code != http.StatusNotAcceptable {
		t.Errorf("text/html: %d", rec.Code)
	}
}

func walkRefs(s *spec.Schema, f func(string)) {
	if s == nil {
		return
	}
	if ref := s.Ref.String(); ref != "" {
		f(ref)
	}
	for i := range s.AllOf {
		walkRefs(&s.AllOf[i], f)
	}
	if s.Items != nil {
		walkRefs(s.Items.Schema, f)
	}
	if s.AdditionalProperties != nil {
		walkRefs(s.AdditionalProperties.Schema, f)
	}
	for _, p := range s.Properties {
		walkRefs(&p, f)
	}
}

func TestV2(t *testing.T) {
	h := NewHandler(resources.NewBuiltin(), "v1.37.2")
	rec := get(t, h, "/openapi/v2", "application/json")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Etag") == "" {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
	var doc spec.Swagger
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Swagger != "2.0" || doc.Info.Version != "1.37" {
		t.Errorf("swagger %q info %+v", doc.Swagger, doc.Info)
	}
	for name, s := range doc.Definitions {
		if s.Default != nil {
			t.Errorf("%s has a default", name)
		}
		for field, p := range s.Properties {
			if p.Default != nil {
				t.Errorf("%s.%s has a default", name, field)
			}
		}
		walkRefs(&s, func(ref string) {
			if _, ok := doc.Definitions[strings.TrimPrefix(ref, v2RefPrefix)]; !ok || !strings.HasPrefix(ref, v2RefPrefix) {
				t.Errorf("%s refers to missing %s", name, ref)
			}
		})
	}
	if c := doc.Definitions["io.k8s.api.core.v1.Container"].Properties["ports"]; c.Extensions[extListType] != "map" {
		t.Errorf("ports %+v", c)
	}
	patch := doc.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].Patch
	if patch == nil || patch.Extensions[extAction] != "patch" {
		t.Fatalf("deployment patch %+v", patch)
	}
	found := false
	for _, p := range patch.Parameters {
		if ref := p.Ref.String(); ref != "" {
			p = doc.Parameters[strings.TrimPrefix(ref, "#/parameters/")]
		}
		found = found || (p.Name == "fieldValidation" && p.In == "query")
	}
	if !found {
		t.Errorf("deployment patch parameters %+v", patch.Parameters)
	}
	// As kube-apiserver's: a sub-resource's name is described by its own
	// kind; a namespace's DELETE is documented as answering a Status; a
	// list that cannot be watched does not say it can; pretty is sorted
	// among a watch path's parameters.
	paramNamed := func(params []spec.Parameter, name string) spec.Parameter {
		for _, p := range params {
			if ref := p.Ref.String(); ref != "" {
				p = doc.Parameters[strings.TrimPrefix(ref, "#/parameters/")]
			}
			if p.Name == name {
				return p
			}
		}
		return spec.Parameter{}
	}
	if p := paramNamed(doc.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"].Parameters, "name"); p.Description != "name of the Scale" {
		t.Errorf("the scale's name: %q", p.Description)
	}
	if r := doc.Paths.Paths["/api/v1/namespaces/{name}"].Delete.Responses.StatusCodeResponses[200]; r.Schema.Ref.String() != v2RefPrefix+"io.k8s.apimachinery.pkg.apis.meta.v1.Status" {
		t.Errorf("a namespace's DELETE answers %s", r.Schema.Ref.String())
	}
	if d := doc.Paths.Paths["/api/v1/componentstatuses"].Get.Description; d != "list objects of kind ComponentStatus" {
		t.Errorf("component statuses' list: %q", d)
	}
	var names []string
	for _, p := range doc.Paths.Paths["/api/v1/watch/configmaps"].Parameters {
		if ref := p.Ref.String(); ref != "" {
			p = doc.Parameters[strings.TrimPrefix(ref, "#/parameters/")]
		}
		names = append(names, p.Name)
	}
	if !slices.IsSorted(names) || !slices.Contains(names, "pretty") {
		t.Errorf("watch parameters not sorted: %v", names)
	}

	// Protobuf, as kubectl asks for it.
	rec = get(t, h, "/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/com.github.proto-openapi.spec.v2.v1.0+protobuf" {
		t.Fatalf("protobuf: %d %v", rec.Code, rec.Header())
	}
	var pb openapi_v2.Document
	if err := proto.Unmarshal(rec.Body.Bytes(), &pb); err != nil {
		t.Fatal(err)
	}
	if len(pb.Definitions.AdditionalProperties) != len(doc.Definitions) {
		t.Errorf("protobuf has %d definitions, JSON %d", len(pb.Definitions.AdditionalProperties), len(doc.Definitions))
	}
	// A request with the entity tag is answered 304.
	req := httptest.NewRequest("GET", "/openapi/v2", nil)
	req.Header.Set("If-None-Match", rec.Header().Get("Etag"))
	rec2 := httptest.NewRecorder()
	h.ServeHTTP(rec2, req)
	if rec2.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", rec2.Code)
	}
}

// TestClients reads the documents the way kubectl does: client-go's
// OpenAPI v3 client (kubectl explain) and discovery's OpenAPI v2 schema
// (kubectl explain --output plaintext-openapiv2, client-side validation).
func TestClients(t *testing.T) {
	srv := httptest.NewServer(NewHandler(resources.NewBuiltin(), "v1.37.2"))
	defer srv.Close()
	config := &rest.Config{Host: srv.URL}

	dc := discovery.NewDiscoveryClientForConfigOrDie(config)
	root := openapi3.NewRoot(clientopenapi.NewClient(dc.RESTClient()))
	gvs, err := root.GroupVersions()
	if err != nil || len(gvs) < 15 {
		t.Fatalf("group versions %v: %v", gvs, err)
	}
	doc, err := root.GVSpec(schema.GroupVersion{Group: "apps", Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for name, s := range doc.Components.Schemas {
		var gvks []map[string]string
		if s.Extensions.GetObject(extGVK, &gvks) == nil {
			for _, gvk := range gvks {
				if gvk["group"] == "apps" && gvk["kind"] == "Deployment" && gvk["version"] == "v1" {
					found = name == "io.k8s.api.apps.v1.Deployment"
				}
			}
		}
	}
	if !found {
		t.Error("apps/v1 Deployment schema not found by its GVK")
	}

	pb, err := dc.OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	models, err := protomodels.NewOpenAPIData(pb)
	if err != nil {
		t.Fatal(err)
	}
	pod, ok := models.LookupModel("io.k8s.api.core.v1.Pod").(*protomodels.Kind)
	if !ok {
		t.Fatal("no Pod model")
	}
	spec, ok := pod.Fields["spec"].(protomodels.Reference)
	if !ok {
		t.Fatalf("Pod spec %T", pod.Fields["spec"])
	}
	if podSpec, ok := spec.SubSchema().(*protomodels.Kind); !ok || !podSpec.IsRequired("containers") {
		t.Errorf("PodSpec %+v", spec.SubSchema())
	}
}

// TestNotFound: paths under /openapi/ that are no document get
// kube-apiserver's mux's plain 404; a group-version v3 does not serve, an
// empty one.
func TestNotFound(t *testing.T) {
	h := NewHandler(resources.NewBuiltin(), "v1.37.2")
	for path, want := range map[string]string{
		"/openapi/v4": "404 page not found\n", "/openapi/": "404 page not found\n", "/openapi/v2/x": "404 page not found\n",
		"/openapi/v3/apis/nosuch/v1": "",
	} {
		rec := get(t, h, path, "")
		body, _ := io.ReadAll(rec.Body)
		if rec.Code != http.StatusNotFound || string(body) != want {
			t.Errorf("%s: %d %q, want 404 %q", path, rec.Code, body, want)
		}
	}
}

func TestCustomResources(t *testing.T) {
	infos := []*resources.Info{{Group: "stable.example.com", Version: "v1", Resource: "crontabs", Kind: "CronTab", Namespaced: true,
		Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}}}
	h := NewHandler(resources.New(infos), "v1.37.2")
	rec := get(t, h, "/openapi/v3/apis/stable.example.com/v1", "")
	var doc spec3.OpenAPI
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Components.Schemas["com.example.stable.v1.CronTab"]
	if s == nil || s.Extensions[extPreserve] != true || s.Properties["metadata"].AllOf == nil {
		t.Fatalf("CronTab schema %+v", s)
	}
	if !supportsFieldValidation(&doc, schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}) {
		t.Error("no PATCH with fieldValidation for CronTab")
	}
	if _, ok := doc.Paths.Paths["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"].Patch.RequestBody.Content["application/strategic-merge-patch+json"]; ok {
		t.Error("custom resources offer strategic merge patch")
	}
	// The built-in definitions are not changed by another registry's kinds.
	if _, ok := Definitions()["com.example.stable.v1.CronTab"]; ok {
		t.Error("CronTab leaked into Definitions")
	}
}

// TestPodLog: a pod's log is described as kube-apiserver describes it: its
// options as query parameters, a string in text or the API's media types.
func TestPodLog(t *testing.T) {
	h := NewHandler(resources.NewBuiltin(), "v1.37.2")
	rec := get(t, h, "/openapi/v3/api/v1", "")
	var doc struct {
		Paths map[string]struct {
			Parameters []struct {
				Name string `json:"name"`
				Ref  string `json:"$ref"`
			} `json:"parameters"`
			Get struct {
				Responses map[string]struct {
					Content map[string]struct {
						Schema map[string]any `json:"schema"`
					} `json:"content"`
				} `json:"responses"`
			} `json:"get"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	logPath := doc.Paths["/api/v1/namespaces/{namespace}/pods/{name}/log"]
	var params []string
	for _, p := range logPath.Parameters {
		params = append(params, p.Name+p.Ref)
	}
	if joined := strings.Join(params, " "); !strings.Contains(joined, "follow") || !strings.Contains(joined, "tailLines") {
		t.Errorf("pods/log parameters: %s", joined)
	}
	ok := logPath.Get.Responses["200"].Content
	if ok["text/plain"].Schema["type"] != "string" || ok["application/json"].Schema["type"] != "string" {
		t.Errorf("pods/log answers: %v", ok)
	}
}

// TestPathsOutsideGroups checks the paths kube-apiserver describes outside
// its groups: /version (with the definition of its answer) and the
// service account issuer's OpenID documents, in v2 and in v3 documents of
// their own.
func TestPathsOutsideGroups(t *testing.T) {
	h := NewHandler(resources.NewBuiltin(), "v1.37.2")
	var v2 spec.Swagger
	if err := json.Unmarshal(get(t, h, "/openapi/v2", "application/json").Body.Bytes(), &v2); err != nil {
		t.Fatal(err)
	}
	version := v2.Paths.Paths["/version/"].Get
	if version == nil || version.ID != "getCodeVersion" || !slices.Equal(version.Consumes, []string{"application/json"}) ||
		version.Responses.StatusCodeResponses[200].Schema.Ref.String() != "#/definitions/"+versionInfoDefinition {
		t.Errorf("/version/: %+v", version)
	}
	if info := v2.Definitions[versionInfoDefinition]; !slices.Contains(info.Required, "gitVersion") || info.Properties["emulationMinor"].Description == "" {
		t.Errorf("%s: %+v", versionInfoDefinition, info)
	}
	jwks := v2.Paths.Paths["/openid/v1/jwks/"].Get
	if jwks == nil || jwks.Consumes != nil || !slices.Equal(jwks.Produces, []string{"application/jwk-set+json"}) ||
		jwks.Responses.StatusCodeResponses[200].Schema.Type[0] != "string" {
		t.Errorf("/openid/v1/jwks/: %+v", jwks)
	}
	if oidc := v2.Paths.Paths["/.well-known/openid-configuration/"].Get; oidc == nil || oidc.ID != "getServiceAccountIssuerOpenIDConfiguration" {
		t.Errorf("/.well-known/openid-configuration/: %+v", oidc)
	}
	if api := v2.Paths.Paths["/api/"].Get; api == nil || !slices.Equal(api.Consumes, discoveryMediaTypes) {
		t.Errorf("/api/: %+v", api)
	}

	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(get(t, h, "/openapi/v3", "").Body.Bytes(), &index); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"version": "/version/", ".well-known/openid-configuration": "/.well-known/openid-configuration/", "openid/v1/jwks": "/openid/v1/jwks/"} {
		var doc struct {
			Paths      map[string]any `json:"paths"`
			Components map[string]any `json:"components"`
		}
		if err := json.Unmarshal(get(t, h, index.Paths[key].ServerRelativeURL, "application/json").Body.Bytes(), &doc); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		_, hasSchemas := doc.Components["schemas"]
		if len(doc.Paths) != 1 || doc.Paths[want] == nil || hasSchemas != (key == "version") {
			t.Errorf("v3 %s: %v", key, doc)
		}
	}
}
