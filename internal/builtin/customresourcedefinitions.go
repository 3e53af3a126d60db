package builtin

import (
	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/registry"
)

// crdHooks keep a deleted CustomResourceDefinition, as kube-apiserver's
// CRD storage does: the first delete only adds the cleanup finalizer and
// the Terminating condition (whatever propagation it asks for); the CRD
// goes once apiextensions' finalizer controller has deleted its custom
// resources and removed the finalizer.
func crdHooks() registry.Hooks {
	return registry.Hooks{
		OwnDelete: &registry.OwnDelete{Mark: markCRDDeleted, PreconditionFailed: "precondition failed"},
	}
}

func markCRDDeleted(obj runtime.Object, _ *metav1.DeleteOptions) {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return
	}
	if !apiextensionshelpers.CRDHasFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer) {
		crd.Finalizers = append(crd.Finalizers, apiextensionsv1.CustomResourceCleanupFinalizer)
	}
	apiextensionshelpers.SetCRDCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type:    apiextensionsv1.Terminating,
		Status:  apiextensionsv1.ConditionTrue,
		Reason:  "InstanceDeletionPending",
		Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
	})
}
