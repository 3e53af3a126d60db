package builtin

import (
	"context"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	authenticationtokenjwt "k8s.io/apiserver/pkg/authentication/token/jwt"
	genericfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	authenticationapi "k8s.io/kubernetes/pkg/apis/authentication"
	authenticationvalidation "k8s.io/kubernetes/pkg/apis/authentication/validation"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/features"
	token "k8s.io/kubernetes/pkg/serviceaccount"

	"github.com/kapi-dev/kapi/internal/auth"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
)

var tokenRequestKind = authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")

// tokenIssuer serves serviceaccounts/token (TokenRequest) as
// kube-apiserver does: audiences default to the API's, a request for
// longer than --service-account-max-token-expiration is shortened to it,
// and with --service-account-extend-token-expiration pod-bound tokens
// asking for kube's default hour and seven seconds last a year but warn
// after the hour.
type tokenIssuer struct {
	objects objectGetter
	tokens  *auth.ServiceAccountTokens
}

// prepareRequest completes a request for a token of the service account
// name as kube's TokenRequest storage does before validating admission:
// the service account's name, namespace and UID, the API's audiences
// when it names none, and its creation time.
func (t *tokenIssuer) prepareRequest(ctx context.Context, namespace, name string, obj runtime.Object) (runtime.Object, error) {
	req, err := toInternalTokenRequest(obj)
	if err != nil {
		return nil, err
	}
	if err := matchServiceAccount(req, namespace, name); err != nil {
		return nil, err
	}
	sa := &api.ServiceAccount{}
	if err := t.objects.get(ctx, "serviceaccounts", namespace, name, sa); err != nil {
		return nil, err
	}
	if len(req.UID) > 0 && req.UID != sa.UID {
		if utilfeature.DefaultFeatureGate.Enabled(genericfeatures.TokenRequestServiceAccountUIDValidation) {
			return nil, apierrors.NewConflict(schema.GroupResource{Group: tokenRequestKind.Group, Resource: tokenRequestKind.Kind}, name,
				fmt.Errorf("the UID in the token request (%s) does not match the UID of the service account (%s)", req.UID, sa.UID))
		}
		audit.AddAuditAnnotation(ctx, "authentication.k8s.io/token-request-uid-mismatch",
			fmt.Sprintf("the UID in the token request (%s) does not match the UID of the service account (%s)", req.UID, sa.UID))
		warning.AddWarning(ctx, "", fmt.Sprintf("the UID in the token request (%s) does not match the UID of the service account (%s) but TokenRequestServiceAccountUIDValidation is not enabled. In the future, this will return a conflict error", req.UID, sa.UID))
	}
	if len(req.Spec.Audiences) == 0 {
		req.Spec.Audiences = t.tokens.Audiences
	}
	req.Name, req.Namespace = sa.Name, sa.Namespace
	if len(req.UID) == 0 {
		req.UID = sa.UID
	}
	// Taken before the token is made, so that the expiration answered is
	// no later than the token's.
	req.CreationTimestamp = metav1.Now()
	req.Status = authenticationapi.TokenRequestStatus{}
	if errs := authenticationvalidation.ValidateTokenRequest(req); len(errs) != 0 {
		return nil, apierrors.NewInvalid(tokenRequestKind.GroupKind(), "", errs)
	}
	out, err := toVersionedTokenRequest(req)
	if err != nil {
		return nil, err
	}
	out.SetGroupVersionKind(tokenRequestKind) // what admission sees has its kind
	return out, nil
}

// requestToken issues a token for the service account name, on a request
// prepareRequest completed and validating admission let through.
func (t *tokenIssuer) requestToken(ctx context.Context, namespace, name string, obj runtime.Object, _ bool) (runtime.Object, error) {
	req, err := toInternalTokenRequest(obj)
	if err != nil {
		return nil, err
	}
	sa := &api.ServiceAccount{}
	if err := t.objects.get(ctx, "serviceaccounts", namespace, name, sa); err != nil {
		return nil, err
	}
	now := req.CreationTimestamp.Time
	bound, err := t.boundObjects(ctx, req, namespace, name)
	if err != nil {
		return nil, err
	}
	if limit := t.tokens.MaxExpirationSeconds; limit > 0 && req.Spec.ExpirationSeconds > limit {
		warning.AddWarning(ctx, "", fmt.Sprintf("requested expiration of %d seconds shortened to %d seconds", req.Spec.ExpirationSeconds, limit))
		req.Spec.ExpirationSeconds = limit
	}
	exp, warnAfter := req.Spec.ExpirationSeconds, int64(0)
	if t.tokens.ExtendExpiration && bound.pod != nil && exp == token.WarnOnlyBoundTokenExpirationSeconds && sets.New(t.tokens.Audiences...).HasAll(req.Spec.Audiences...) {
		warnAfter, exp = exp, token.ExpirationExtensionSeconds
	}
	sc, pc, err := token.Claims(*sa, bound.pod, bound.secret, bound.node, nil, nil, exp, warnAfter, req.Spec.Audiences, nil)
	if err != nil {
		return nil, err
	}
	signed, err := t.tokens.Generator.GenerateToken(ctx, sc, pc)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("failed to generate token: %v", err))
	}
	req.Status = authenticationapi.TokenRequestStatus{
		Token:               signed,
		ExpirationTimestamp: metav1.Time{Time: now.Add(time.Duration(req.Spec.ExpirationSeconds) * time.Second)},
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.ServiceAccountTokenJTI) && len(sc.ID) > 0 {
		audit.AddAuditAnnotation(ctx, serviceaccount.IssuedCredentialIDAuditAnnotationKey, authenticationtokenjwt.CredentialIDForJTI(sc.ID))
	}
	return toVersionedTokenRequest(req)
}

func toVersionedTokenRequest(req *authenticationapi.TokenRequest) (*authenticationv1.TokenRequest, error) {
	out := &authenticationv1.TokenRequest{}
	if err := legacyscheme.Scheme.Convert(req, out, nil); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}

// toInternalTokenRequest converts a request, which the pipeline has
// given its defaults (an hour) as it decoded it.
func toInternalTokenRequest(obj runtime.Object) (*authenticationapi.TokenRequest, error) {
	req := &authenticationapi.TokenRequest{}
	if err := legacyscheme.Scheme.Convert(obj, req, nil); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return req, nil
}

// matchServiceAccount refuses a request whose body names another service
// account than the URL.
func matchServiceAccount(req *authenticationapi.TokenRequest, namespace, name string) error {
	if len(req.Name) > 0 && req.Name != name {
		return apierrors.NewInvalid(tokenRequestKind.GroupKind(), name, field.ErrorList{field.Invalid(
			field.NewPath("metadata").Child("name"), req.Name, "must match the service account name if specified")})
	}
	if len(req.Namespace) > 0 && req.Namespace != namespace {
		return apierrors.NewInvalid(tokenRequestKind.GroupKind(), name, field.ErrorList{field.Invalid(
			field.NewPath("metadata").Child("namespace"), req.Namespace, "must match the service account namespace if specified")})
	}
	return nil
}

// boundObjects are what a token is bound to: it stops authenticating when
// they are gone.
type boundObjects struct {
	pod    *api.Pod
	secret *api.Secret
	node   *api.Node
}

// boundObjects reads the object a request binds its token to, and the
// node of a bound pod.
func (t *tokenIssuer) boundObjects(ctx context.Context, req *authenticationapi.TokenRequest, namespace, name string) (boundObjects, error) {
	var b boundObjects
	ref := req.Spec.BoundObjectRef
	if ref == nil {
		return b, nil
	}
	var uid types.UID
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	switch {
	case gvk.Group == "" && gvk.Kind == "Pod":
		b.pod = &api.Pod{}
		if err := t.objects.get(ctx, "pods", namespace, ref.Name, b.pod); err != nil {
			return b, err
		}
		if name != b.pod.Spec.ServiceAccountName {
			return b, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", name))
		}
		uid = b.pod.UID
		if nodeName := b.pod.Spec.NodeName; nodeName != "" && utilfeature.DefaultFeatureGate.Enabled(features.ServiceAccountTokenPodNodeInfo) {
			b.node = &api.Node{}
			if err := t.objects.get(ctx, "nodes", "", nodeName, b.node); apierrors.IsNotFound(err) {
				b.node = &api.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}
			} else if err != nil {
				return b, apierrors.NewInternalError(err)
			}
		}
	case gvk.Group == "" && gvk.Kind == "Node":
		if !utilfeature.DefaultFeatureGate.Enabled(features.ServiceAccountTokenNodeBinding) {
			return b, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to a Node object as the %q feature-gate is disabled", features.ServiceAccountTokenNodeBinding))
		}
		b.node = &api.Node{}
		if err := t.objects.get(ctx, "nodes", "", ref.Name, b.node); err != nil {
			return b, err
		}
		uid = b.node.UID
	case gvk.Group == "" && gvk.Kind == "Secret":
		b.secret = &api.Secret{}
		if err := t.objects.get(ctx, "secrets", namespace, ref.Name, b.secret); err != nil {
			return b, err
		}
		uid = b.secret.UID
	default:
		// Tokens bound to admission webhook configurations are not issued.
		return b, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
	}
	if ref.UID != "" && uid != ref.UID {
		return b, apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	return b, nil
}

// objectGetter reads the core objects tokens name from the write
// pipeline's registry.
type objectGetter struct{ p *pipeline.Pipeline }

// get reads the current object of a core resource into the internal
// object into.
func (g objectGetter) get(ctx context.Context, resource, namespace, name string, into runtime.Object) error {
	obj, err := g.current(ctx, schema.GroupVersionResource{Version: "v1", Resource: resource}, namespace, name)
	if err != nil {
		return err
	}
	if err := legacyscheme.Scheme.Convert(obj, into, nil); err != nil {
		return apierrors.NewInternalError(err)
	}
	return nil
}

func (g objectGetter) current(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	store := g.p.Registry().Snapshot().Lookup(gvr)
	if store == nil {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return store.Get(ctx, namespace, name)
}

// TokenGetter looks up, for the validation of service account tokens, the
// objects they name, in p's registry.
func TokenGetter(p *pipeline.Pipeline) token.ServiceAccountTokenGetter { return objectGetter{p} }

func (g objectGetter) GetServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	return typed[*corev1.ServiceAccount](g.current(ctx, schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, namespace, name))
}

func (g objectGetter) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	return typed[*corev1.Pod](g.current(ctx, schema.GroupVersionResource{Version: "v1", Resource: "pods"}, namespace, name))
}

func (g objectGetter) GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return typed[*corev1.Secret](g.current(ctx, schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, namespace, name))
}

func (g objectGetter) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	return typed[*corev1.Node](g.current(ctx, schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, "", name))
}

func (g objectGetter) GetValidatingWebhookConfiguration(ctx context.Context, name string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return typed[*admissionregistrationv1.ValidatingWebhookConfiguration](g.current(ctx,
		admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"), "", name))
}

func (g objectGetter) GetMutatingWebhookConfiguration(ctx context.Context, name string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return typed[*admissionregistrationv1.MutatingWebhookConfiguration](g.current(ctx,
		admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"), "", name))
}

// typed is obj as a T, passing err on.
func typed[T runtime.Object](obj runtime.Object, err error) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	t, ok := obj.(T)
	if !ok {
		return zero, apierrors.NewInternalError(fmt.Errorf("unexpected %T", obj))
	}
	return t, nil
}

// tokenHooks serve serviceaccounts/token, when the server issues tokens.
func tokenHooks(p *pipeline.Pipeline, tokens *auth.ServiceAccountTokens) map[schema.GroupResource]registry.Hooks {
	if tokens == nil {
		return nil
	}
	issuer := &tokenIssuer{objects: objectGetter{p}, tokens: tokens}
	return map[schema.GroupResource]registry.Hooks{
		{Resource: "serviceaccounts"}: {
			Actions:        map[string]registry.Action{"token": issuer.requestToken},
			PrepareActions: map[string]registry.PrepareAction{"token": issuer.prepareRequest},
		},
	}
}
