// Package webhook finds where the webhooks kapi calls (admission and
// conversion webhooks) listen.
package webhook

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/kubernetes"
)

// ServiceResolver resolves the Service a webhook configuration names.
// kube-apiserver reaches SERVICE.NAMESPACE.svc through the cluster
// network, which kapi does not have; an ExternalName Service (a webhook
// on kapi's machine: "localhost") is reached at its name, as
// kube-apiserver does for ExternalName Services.
type ServiceResolver struct{ Client kubernetes.Interface }

// ResolveEndpoint implements k8s.io/apiserver's webhook.ServiceResolver.
func (r ServiceResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	svc, err := r.Client.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// In the words of kube-apiserver's resolver, which reads a lister.
		return nil, apierrors.NewNotFound(corev1.Resource("service"), name)
	}
	if err == nil && svc.Spec.Type == corev1.ServiceTypeExternalName {
		return &url.URL{Scheme: "https", Host: net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port)))}, nil
	}
	return webhook.NewDefaultServiceResolver().ResolveEndpoint(namespace, name, port)
}
