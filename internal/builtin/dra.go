package builtin

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaim"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaimtemplate"

	"github.com/kapi-dev/kapi/internal/pipeline"
)

// draStrategies are the strategies of ResourceClaims and their templates,
// which read the claim's namespace (a namespace labelled for admin access
// allows admin-access device requests) and ask the authorizer.
//
// The authorizer is the server's: changing a claim's allocation or
// reservations needs the resourceclaims/binding permission.
func draStrategies(p *pipeline.Pipeline, az authorizer.UnconditionalAuthorizer) map[schema.GroupResource]*kubeStrategy {
	namespaces := namespaceReader{p: p}
	claims := resourceclaim.NewStrategy(namespaces, az)
	return map[schema.GroupResource]*kubeStrategy{
		{Group: "resource.k8s.io", Resource: "resourceclaims"}:         strategy(claims, status(resourceclaim.NewStatusStrategy(claims))),
		{Group: "resource.k8s.io", Resource: "resourceclaimtemplates"}: strategy(resourceclaimtemplate.NewStrategy(namespaces), nil),
	}
}

// namespaceReader is the namespace client kube's DRA strategies take. They
// only ever Get a namespace, which it reads from the registry; the
// embedded interface is nil, so any other call would panic, and none is
// made.
type namespaceReader struct {
	corev1client.NamespaceInterface
	p *pipeline.Pipeline
}

func (n namespaceReader) Get(ctx context.Context, name string, _ metav1.GetOptions) (*corev1.Namespace, error) {
	store := n.p.Registry().Snapshot().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	if store == nil {
		return nil, fmt.Errorf("namespaces are not served")
	}
	obj, err := store.Get(ctx, "", name)
	if err != nil {
		return nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, fmt.Errorf("namespace %s is a %T", name, obj)
	}
	return ns, nil
}
