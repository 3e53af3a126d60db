package registry

import (
	"bytes"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/codecs"
)

// TestEmptyCollectionsReadAsFromStorage: the answer to a write shows what a
// protobuf round trip through storage leaves of empty lists and maps, for
// fields JSON shows empty or null, at the top and within lists.
func TestEmptyCollectionsReadAsFromStorage(t *testing.T) {
	for name, obj := range map[string]runtime.Object{
		"cluster role without rules": &rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{}, Finalizers: []string{}},
			Rules:      []rbacv1.PolicyRule{},
		},
		"rule without verbs": &rbacv1.Role{
			TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			Rules:    []rbacv1.PolicyRule{{Verbs: []string{}, Resources: []string{"pods"}}, {Verbs: []string{"get"}}},
		},
		"slice without endpoints": &discoveryv1.EndpointSlice{
			TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{}}},
			Ports:       []discoveryv1.EndpointPort{},
		},
		"pod with an empty container list and data": &corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			Spec: corev1.PodSpec{
				Containers:   []corev1.Container{{Name: "c", Args: []string{}, Env: []corev1.EnvVar{}}},
				NodeSelector: map[string]string{},
			},
		},
		"config map with empty binary data": &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			BinaryData: map[string][]byte{"empty": {}},
		},
		"custom resource definition": &apiextensionsv1.CustomResourceDefinition{
			TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: "v1",
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type:       "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "string", Enum: []apiextensionsv1.JSON{}}},
					}},
				}},
			},
			Status: apiextensionsv1.CustomResourceDefinitionStatus{StoredVersions: []string{}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var stored bytes.Buffer
			if err := codecs.Protobuf.Encode(obj, &stored); err != nil {
				t.Fatal(err)
			}
			roundTripped, _, err := codecs.DecodeProtobuf(stored.Bytes(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			clearEmptyCollections(obj)
			got, want := jsonOf(t, obj), jsonOf(t, roundTripped)
			if got != want {
				t.Errorf("answer\n%s\nread from storage\n%s", got, want)
			}
		})
	}
}

func jsonOf(t *testing.T, obj runtime.Object) string {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func BenchmarkClearEmptyCollectionsPod(b *testing.B) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}}
	for b.Loop() {
		clearEmptyCollections(pod)
	}
}
