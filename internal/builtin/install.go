package builtin

import (
	"context"
	"fmt"
	"maps"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/deprecation"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/kapi-dev/kapi/internal/auth"
	"github.com/kapi-dev/kapi/internal/authz"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/resources"
)

// Options are what the types' hooks need from the server.
type Options struct {
	// Authorizer answers reviews and RBAC's escalation checks (nil:
	// everything is allowed).
	Authorizer *authz.Authorizer
	// Tokens issues service account tokens (nil: serviceaccounts/token is
	// not served).
	Tokens *auth.ServiceAccountTokens
	// TokenReviewer authenticates the tokens of TokenReviews (nil: none
	// is authenticated).
	TokenReviewer authenticator.Request
	// Release is the Kubernetes release served: requests to a resource it
	// deprecates get kube-apiserver's warning (unset: every deprecated
	// resource warns).
	Release version.Info
	// ComponentStatuses reports the health of the control plane's
	// components, for the deprecated componentstatuses (nil: none).
	ComponentStatuses func(context.Context) []corev1.ComponentStatus
	// ServiceCIDR is the range ClusterIPs come from (zero:
	// DefaultServiceCIDR).
	ServiceCIDR netip.Prefix
}

func init() {
	// Bodies of built-in kinds only exchanged get Kubernetes' defaults.
	registry.DefaultBuiltin = legacyscheme.Scheme.Default
	registry.InternalType = func(gvk schema.GroupVersionKind) string {
		gvk.Version = runtime.APIVersionInternal
		obj, err := legacyscheme.Scheme.New(gvk)
		if err != nil {
			return ""
		}
		return fmt.Sprintf("%T", obj)
	}
}

// storageVersions names the version kube-apiserver stores a resource in
// where it serves more than one.
var storageVersions = map[schema.GroupResource]string{
	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}: "v2",
}

// hashedVersions name the older version kube-apiserver 1.37 stores some
// resources in (its storage factory's encoding overrides; CRDs in
// apiextensions' v1beta1), which discovery's storageVersionHash names.
var hashedVersions = map[schema.GroupResource]string{
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}:   "v1beta1",
	{Group: "certificates.k8s.io", Resource: "clustertrustbundles"}:          "v1beta1",
	{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}:       "v1beta1",
	{Group: "resource.k8s.io", Resource: "devicetaintrules"}:                 "v1beta2",
	{Group: "storagemigration.k8s.io", Resource: "storageversionmigrations"}: "v1beta1",
}

// storedAs names the resources whose objects kube-apiserver keeps as
// another resource's (its cohabiting resources), by that resource.
var storedAs = map[schema.GroupResource]schema.GroupVersionResource{
	{Group: "events.k8s.io", Resource: "events"}: {Version: "v1", Resource: "events"},
}

// Install adds a backend for every built-in resource to the registry p
// writes to, with its served versions, storage version and hooks.
func Install(p *pipeline.Pipeline, opts Options) error {
	if opts.Authorizer == nil {
		opts.Authorizer, _ = authz.New(authz.ModeAlwaysAllow, nil)
	}
	hooks := Hooks(p, opts)
	typeStrategies := allStrategies(p, opts.Authorizer)
	byGR := map[schema.GroupResource][]*resources.Info{}
	var order []schema.GroupResource
	for _, g := range resources.NewBuiltin().Groups() {
		for _, v := range g.Versions {
			for _, info := range v.Resources {
				gr := info.GroupVersionResource().GroupResource()
				if byGR[gr] == nil {
					order = append(order, gr)
				}
				useKubeFieldLabels(info)
				warnIfDeprecated(info, opts.Release)
				byGR[gr] = append(byGR[gr], info)
			}
		}
	}
	var specs []registry.Spec
	for _, gr := range order {
		versions := byGR[gr]
		storage := versions[0].Version
		if len(versions) > 1 {
			if storage = storageVersions[gr]; storage == "" {
				return fmt.Errorf("builtin: %s is served in %d versions and has no storage version", gr, len(versions))
			}
		}
		spec := registry.Spec{Versions: versions, StorageVersion: storage, Hooks: hooks[gr], HashedVersion: hashedVersions[gr]}
		if as, ok := storedAs[gr]; ok {
			spec.StoredAs = infoOf(byGR[as.GroupResource()], as.Version)
		}
		if s, ok := typeStrategies[gr]; ok {
			spec.Strategy = s
			for _, info := range versions {
				info.ResetFields = s.resetFields
			}
		}
		specs = append(specs, spec)
	}
	return p.Registry().Put(specs...)
}

// allStrategies are the strategies of every built-in type that has one.
func allStrategies(p *pipeline.Pipeline, az authorizer.UnconditionalAuthorizer) map[schema.GroupResource]*kubeStrategy {
	all := strategies(p, az)
	for _, more := range []map[schema.GroupResource]*kubeStrategy{draStrategies(p, az), policyBindingStrategies(p, az)} {
		maps.Copy(all, more)
	}
	return all
}

// infoOf is the Info of version among versions, nil if none.
func infoOf(versions []*resources.Info, version string) *resources.Info {
	for _, info := range versions {
		if info.Version == version {
			return info
		}
	}
	return nil
}

// warnIfDeprecated gives a resource whose kind the release deprecates
// kube-apiserver's warning for every request to it ("v1 Endpoints is
// deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice").
func warnIfDeprecated(info *resources.Info, release version.Info) {
	gvk := info.GroupVersionKind()
	obj, err := legacyscheme.Scheme.New(gvk)
	if err != nil {
		return
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	major, minor, _ := deprecation.MajorMinor(release)
	if deprecation.IsDeprecated(obj, major, minor) {
		info.Deprecated, info.RemovedRelease = true, deprecation.RemovedRelease(obj)
		info.Warnings = append(info.Warnings, deprecation.WarningMessage(obj))
	}
}

// useKubeFieldLabels makes a built-in resource convert field selector
// labels with the conversion func kube registers for its kind.
func useKubeFieldLabels(info *resources.Info) {
	gvk := info.GroupVersionKind()
	if !legacyscheme.Scheme.Recognizes(gvk) {
		return
	}
	info.FieldLabelConversion = func(label, value string) (string, string, error) {
		return legacyscheme.Scheme.ConvertFieldLabel(gvk, label, value)
	}
}
