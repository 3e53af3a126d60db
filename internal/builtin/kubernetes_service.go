package builtin

import (
	"cmp"
	"context"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kapi-dev/kapi/internal/pipeline"
)

// EnsureKubernetesService creates the default/kubernetes Service that
// kube-apiserver's bootstrap controller maintains, if it is missing: the
// first address of the service range, port 443 (https) to the port the
// server listens on. Clients in a cluster (and the e2e framework) look the
// API up by it. As kube's controller, it never changes a Service that
// exists: servers sharing storage that listen on different ports would
// take turns rewriting it. Its endpoints are kept by the server (kube's
// endpoint reconciler).
func EnsureKubernetesService(ctx context.Context, p *pipeline.Pipeline, cidr netip.Prefix, port int32) error {
	want := kubernetesService(cmp.Or(cidr, DefaultServiceCIDR), port)
	store := p.Registry().Snapshot().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "services"})
	_, err := store.Get(ctx, metav1.NamespaceDefault, want.Name)
	if !apierrors.IsNotFound(err) {
		return err
	}
	_, err = p.CreateObject(ctx, want, "kube-apiserver")
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// kubernetesService is the Service kube-apiserver's bootstrap controller
// creates.
func kubernetesService(cidr netip.Prefix, port int32) *corev1.Service {
	first := cidr.Masked().Addr().Next().String()
	singleStack := corev1.IPFamilyPolicySingleStack
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: "kubernetes", Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"},
		},
		Spec: corev1.ServiceSpec{
			Type:            corev1.ServiceTypeClusterIP,
			ClusterIP:       first,
			IPFamilyPolicy:  &singleStack,
			SessionAffinity: corev1.ServiceAffinityNone,
			Ports: []corev1.ServicePort{{
				Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(port),
			}},
		},
	}
}
