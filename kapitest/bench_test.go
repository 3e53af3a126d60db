package kapitest_test

import (
	"fmt"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkStart measures starting a server and stopping it.
func BenchmarkStart(b *testing.B) { startAndStop(b, nil) }

// BenchmarkStartRequestStop measures what a test that makes requests
// pays: a start, one request, and a stop with the client's connection
// still open.
func BenchmarkStartRequestStop(b *testing.B) {
	startAndStop(b, func(env *kapitest.Env) {
		client := kubernetes.NewForConfigOrDie(env.Config)
		if _, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkStartWithCRDs measures a start that installs 20 CRDs, each
// with a schema of some size (60 fields of three properties each), and
// the stop after it.
func BenchmarkStartWithCRDs(b *testing.B) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for i := range 20 {
		crds = append(crds, benchCRD(i))
	}
	startAndStop(b, nil, kapitest.WithCRDObjects(crds...))
}

// startAndStop starts a server with opts, runs use (if any) and stops
// the server, once per iteration, each server in a directory of its own.
func startAndStop(b *testing.B, use func(*kapitest.Env), opts ...kapitest.Option) {
	dir := b.TempDir()
	for i := 0; b.Loop(); i++ {
		env, err := kapitest.New(filepath.Join(dir, fmt.Sprint(i)), opts...)
		if err != nil {
			b.Fatal(err)
		}
		if use != nil {
			use(env)
		}
		if err := env.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchCRD is the i-th CRD of BenchmarkStartWithCRDs: a namespaced kind
// with a status sub-resource, whose spec and status have 30 object
// fields each.
func benchCRD(i int) *apiextensionsv1.CustomResourceDefinition {
	fields := map[string]apiextensionsv1.JSONSchemaProps{}
	for j := range 30 {
		fields[fmt.Sprintf("field%d", j)] = apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"name":  {Type: "string"},
			"count": {Type: "integer"},
			"tags":  {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
		}}
	}
	kind := fmt.Sprintf("Thing%d", i)
	plural := fmt.Sprintf("things%d", i)
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: fmt.Sprintf("thing%d", i), Kind: kind, ListKind: kind + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", Properties: fields},
						"status": {Type: "object", Properties: fields},
					},
				}},
			}},
		},
	}
}
