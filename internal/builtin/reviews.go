package builtin

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/registry/authentication/selfsubjectreview"
	"k8s.io/kubernetes/pkg/registry/authentication/tokenreview"
	"k8s.io/kubernetes/pkg/registry/authorization/localsubjectaccessreview"
	"k8s.io/kubernetes/pkg/registry/authorization/selfsubjectaccessreview"
	"k8s.io/kubernetes/pkg/registry/authorization/selfsubjectrulesreview"
	"k8s.io/kubernetes/pkg/registry/authorization/subjectaccessreview"

	_ "k8s.io/kubernetes/pkg/apis/authentication/install"
	_ "k8s.io/kubernetes/pkg/apis/authorization/install"

	"github.com/kapi-dev/kapi/internal/registry"
)

// reviewHooks serve the reviews of authentication.k8s.io and
// authorization.k8s.io: creates that are answered, never stored, by
// kube-apiserver's own REST storages of them (validation, status). They
// review against the server's authorizer and token authenticators (the
// API's audiences are the service account issuer's).
func reviewHooks(opts Options) map[schema.GroupResource]registry.Hooks {
	a := opts.Authorizer
	var audiences []string
	if opts.Tokens != nil {
		audiences = opts.Tokens.Audiences
	}
	authn := func(r string) schema.GroupResource {
		return schema.GroupResource{Group: "authentication.k8s.io", Resource: r}
	}
	authz := func(r string) schema.GroupResource {
		return schema.GroupResource{Group: "authorization.k8s.io", Resource: r}
	}
	return map[schema.GroupResource]registry.Hooks{
		authn("tokenreviews"):              review(tokenreview.NewREST(opts.TokenReviewer, audiences)),
		authn("selfsubjectreviews"):        review(selfsubjectreview.NewREST()),
		authz("subjectaccessreviews"):      review(subjectaccessreview.NewREST(a, legacyscheme.Scheme)),
		authz("selfsubjectaccessreviews"):  review(selfsubjectaccessreview.NewREST(a, legacyscheme.Scheme)),
		authz("localsubjectaccessreviews"): review(localsubjectaccessreview.NewREST(a, legacyscheme.Scheme)),
		authz("selfsubjectrulesreviews"):   review(selfsubjectrulesreview.NewREST(a)),
	}
}

// review answers a create of a review with the review and its status,
// from kube's storage of it, which works on internal objects.
func review(storage rest.Creater) registry.Hooks {
	return registry.Hooks{Actions: map[string]registry.Action{"": func(ctx context.Context, namespace, _ string, obj runtime.Object, _ bool) (runtime.Object, error) {
		gv := obj.GetObjectKind().GroupVersionKind().GroupVersion()
		internal, err := toInternal(obj)
		if err != nil {
			return nil, err
		}
		ctx = genericapirequest.WithNamespace(ctx, namespace)
		out, err := storage.Create(ctx, internal, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		if err != nil {
			return nil, err
		}
		return legacyscheme.Scheme.ConvertToVersion(out, gv)
	}}}
}
