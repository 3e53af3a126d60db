package webhook

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestResolveEndpoint: an ExternalName Service is reached at its name, and
// a missing Service is an error in kube-apiserver's resolver's words.
func TestResolveEndpoint(t *testing.T) {
	r := ServiceResolver{Client: fake.NewClientset(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "hooks", Name: "local"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
	})}
	u, err := r.ResolveEndpoint("hooks", "local", 8443)
	if err != nil || u.String() != "https://localhost:8443" {
		t.Errorf("an ExternalName Service: %v %v", u, err)
	}
	if _, err := r.ResolveEndpoint("hooks", "missing", 443); err == nil || err.Error() != `service "missing" not found` {
		t.Errorf("a missing Service: %v", err)
	}
}
