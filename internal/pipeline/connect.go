package pipeline

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/admission"
	"github.com/kapi-dev/kapi/internal/registry"
)

// AdmitConnect admits a connection through a sub-resource (a container's
// exec, a pod's proxy) as kube-apiserver's connect handler does, before it
// connects: mutating, then validating admission of a CONNECT whose object
// is the connection's options, of their kind. Nothing is stored, so what
// mutating plugins change goes nowhere.
func (p *Pipeline) AdmitConnect(ctx context.Context, store *registry.Store, subresource, namespace, name string, opts runtime.Object, kind schema.GroupVersionKind) error {
	attrs := attributes(admission.Connect, store, namespace, name, opts, nil, Options{Subresource: subresource})
	attrs.Kind = kind
	if err := p.admission.Admit(ctx, attrs); err != nil {
		return err
	}
	return p.admission.Validate(ctx, attrs)
}
