package codecs

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiregistrationinstall "k8s.io/kube-aggregator/pkg/apis/apiregistration/install"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// The registry strategies, validation and printers of built-in types work
// on internal objects from k8s.io/kubernetes' legacyscheme, which its
// groups' install packages fill as a side effect of being imported. The
// two groups served by kube-apiserver's other servers (apiextensions, the
// aggregator's apiregistration) install with a function instead; kapi
// serves them from the same scheme.
func init() {
	apiextensionsinstall.Install(legacyscheme.Scheme)
	apiregistrationinstall.Install(legacyscheme.Scheme)
}

// Empty returns an empty object of gvk as kube-apiserver's watch cache
// makes one for a bookmark: the internal type's zero converted to gvk, so
// that what the conversion fills in for a zero internal object (a
// Deployment's spec.replicas of 0, a DaemonSet's template generation
// annotation) is there as kube-apiserver sends it. Kinds with no internal
// type are simply new.
func Empty(gvk schema.GroupVersionKind) (runtime.Object, error) {
	internalKind := schema.GroupVersionKind{Group: gvk.Group, Version: runtime.APIVersionInternal, Kind: gvk.Kind}
	if !legacyscheme.Scheme.Recognizes(internalKind) {
		return Scheme.New(gvk)
	}
	internal, err := legacyscheme.Scheme.New(internalKind)
	if err != nil {
		return nil, err
	}
	return legacyscheme.Scheme.ConvertToVersion(internal, gvk.GroupVersion())
}
