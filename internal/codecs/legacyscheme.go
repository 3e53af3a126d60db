package codecs

import (
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
