package pipeline

import (
	"runtime"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kapi-dev/kapi/internal/openapi"
	"github.com/kapi-dev/kapi/internal/resources"
)

// widgetInfo is the Info of a custom resource with the schema
// apiextensions' builder makes for it, as internal/crd serves it.
func widgetInfo(t *testing.T) *resources.Info {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", XPreserveUnknownFields: ptrTo(true)}},
				}}}},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{AcceptedNames: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"}},
	}
	doc, err := builder.BuildOpenAPIV3(crd, "v1", builder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	v3 := doc.Components.Schemas[openapi.CustomDefinitionName(gvk)]
	return &resources.Info{Group: gvk.Group, Version: gvk.Version, Resource: "widgets", Kind: gvk.Kind, Namespaced: true,
		OpenAPI: func() (*spec.Schema, *spec.Schema, error) { return v3, nil, nil }}
}

func ptrTo[T any](v T) *T { return &v }

// TestCustomConverterKnowsObjectMetadata: a custom resource's type
// converter holds the object metadata definitions its schema refers to,
// so that ownerReferences merge by uid (a list keyed by it) as with
// kube-apiserver, and none it does not refer to.
func TestCustomConverterKnowsObjectMetadata(t *testing.T) {
	info := widgetInfo(t)
	v3, _, _ := info.Schemas()
	models := openapi.DefinitionsFor(openapi.CustomDefinitionName(info.GroupVersionKind()), v3)
	for _, want := range []string{"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
		"io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry", "io.k8s.apimachinery.pkg.apis.meta.v1.Time"} {
		if models[want] == nil {
			t.Errorf("the definitions of a custom resource lack %s", want)
		}
	}
	if models["io.k8s.api.core.v1.Pod"] != nil {
		t.Errorf("the definitions of a custom resource hold io.k8s.api.core.v1.Pod, which its schema does not refer to")
	}

	var f fieldManagers
	m, err := f.get(info, "")
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]interface{}{"name": "w", "namespace": "default",
			"ownerReferences": []interface{}{map[string]interface{}{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u1"}}},
		"spec": map[string]interface{}{"size": int64(1)}}}
	live := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Widget"}}
	updated, err := m.Update(live, obj, "test")
	if err != nil {
		t.Fatal(err)
	}
	entries := updated.(*unstructured.Unstructured).GetManagedFields()
	if len(entries) != 1 || !strings.Contains(string(entries[0].FieldsV1.Raw), `"k:{\"uid\":\"u1\"}"`) {
		t.Errorf("managed fields of a custom resource with an owner reference: %v; want the owner keyed by uid", entries)
	}
}

// TestFieldManagersGoWithTheirInfo: the managers made for a custom
// resource's Info, and their type converters, are dropped once nothing
// holds that Info (its CRD changed or went).
func TestFieldManagersGoWithTheirInfo(t *testing.T) {
	var f fieldManagers
	for range 3 {
		if _, err := f.get(widgetInfo(t), ""); err != nil {
			t.Fatal(err)
		}
	}
	held := func() int {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.managers)
	}
	for i := 0; held() > 0; i++ {
		if i == 100 {
			t.Fatalf("%d field managers are still held after 100 collections; their Infos are gone", held())
		}
		runtime.GC()
		runtime.Gosched()
	}
}
