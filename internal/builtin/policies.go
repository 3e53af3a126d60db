package builtin

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicybinding"

	"github.com/kapi-dev/kapi/internal/pipeline"
)

// policyBindingStrategies are the strategies of admission policy
// bindings. A binding with a paramRef is checked, by az, against what its
// creator may read of the policy's parameter kind, as kube-apiserver
// checks it: the strategies read the policy and resolve its kind to a
// resource in kapi's registry.
func policyBindingStrategies(p *pipeline.Pipeline, az authorizer.UnconditionalAuthorizer) map[schema.GroupResource]*kubeStrategy {
	policies := policyReader{p: p}
	kinds := kindResolver{p: p}
	const group = "admissionregistration.k8s.io"
	return map[schema.GroupResource]*kubeStrategy{
		{Group: group, Resource: "validatingadmissionpolicybindings"}: strategy(validatingadmissionpolicybinding.NewStrategy(az, policies, kinds), nil),
		{Group: group, Resource: "mutatingadmissionpolicybindings"}:   strategy(mutatingadmissionpolicybinding.NewStrategy(az, policies, kinds), nil),
	}
}

// kindResolver resolves a kind to the resource that serves it.
type kindResolver struct{ p *pipeline.Pipeline }

func (k kindResolver) Resolve(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	store := k.p.Registry().Snapshot().ForKind(gvk)
	if store == nil {
		return schema.GroupVersionResource{}, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
	return store.Info.GroupVersionResource(), nil
}

// policyReader reads admission policies, as internal objects.
type policyReader struct{ p *pipeline.Pipeline }

func (r policyReader) GetValidatingAdmissionPolicy(ctx context.Context, name string) (*admissionregistration.ValidatingAdmissionPolicy, error) {
	obj, err := r.get(ctx, "validatingadmissionpolicies", name)
	if err != nil {
		return nil, err
	}
	policy, ok := obj.(*admissionregistration.ValidatingAdmissionPolicy)
	if !ok {
		return nil, fmt.Errorf("validating admission policy %s is a %T", name, obj)
	}
	return policy, nil
}

func (r policyReader) GetMutatingAdmissionPolicy(ctx context.Context, name string) (*admissionregistration.MutatingAdmissionPolicy, error) {
	obj, err := r.get(ctx, "mutatingadmissionpolicies", name)
	if err != nil {
		return nil, err
	}
	policy, ok := obj.(*admissionregistration.MutatingAdmissionPolicy)
	if !ok {
		return nil, fmt.Errorf("mutating admission policy %s is a %T", name, obj)
	}
	return policy, nil
}

func (r policyReader) get(ctx context.Context, resource, name string) (runtime.Object, error) {
	gvr := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: resource}
	store := r.p.Registry().Snapshot().Lookup(gvr)
	if store == nil {
		return nil, fmt.Errorf("%s are not served", resource)
	}
	obj, err := store.Get(ctx, "", name)
	if err != nil {
		return nil, err
	}
	return legacyscheme.Scheme.ConvertToVersion(obj, runtime.InternalGroupVersioner)
}
