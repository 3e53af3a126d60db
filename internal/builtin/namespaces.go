package builtin

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/registry"
)

// namespaceHooks keep a deleted namespace, Terminating, until the namespace
// controller has emptied it and removed the kubernetes finalizer from
// spec.finalizers (through the finalize sub-resource); then the namespace
// goes. As in kube-apiserver, the first delete always marks it, even one
// whose spec.finalizers are empty already (it goes with the next).
func namespaceHooks() registry.Hooks {
	return registry.Hooks{
		PrepareDelete: func(current runtime.Object) (bool, error) {
			ns, ok := current.(*corev1.Namespace)
			if !ok {
				return false, nil
			}
			ns.Status.Phase = corev1.NamespaceTerminating
			return ns.DeletionTimestamp == nil || len(ns.Spec.Finalizers) > 0, nil
		},
	}
}
