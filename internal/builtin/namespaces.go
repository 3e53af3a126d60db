package builtin

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/registry"
)

// namespaceHooks keep a deleted namespace, Terminating, until the namespace
// controller has emptied it and removed the kubernetes finalizer from
// spec.finalizers (through the finalize sub-resource); then the namespace
// goes. As in kube-apiserver, the first delete only marks it, even one
// whose spec.finalizers are empty already (it goes with the next).
func namespaceHooks() registry.Hooks {
	return registry.Hooks{
		PrepareDelete: func(current runtime.Object) (bool, error) {
			ns, ok := current.(*corev1.Namespace)
			return ok && (ns.DeletionTimestamp == nil || len(ns.Spec.Finalizers) > 0), nil
		},
		OwnDelete: &registry.OwnDelete{Mark: markNamespaceDeleted, PreconditionFailed: "Precondition failed"},
	}
}

// markNamespaceDeleted marks a namespace on its first delete, as
// kube-apiserver's namespace storage does: Terminating, with the garbage
// collector's finalizers the options ask for. Unlike the generic
// registry's, orphanDependents: false asks for the foreground deletion.
func markNamespaceDeleted(obj runtime.Object, opts *metav1.DeleteOptions) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return
	}
	ns.Status.Phase = corev1.NamespaceTerminating
	if opts == nil {
		return
	}
	orphan := slices.Contains(ns.Finalizers, metav1.FinalizerOrphanDependents)
	foreground := slices.Contains(ns.Finalizers, metav1.FinalizerDeleteDependents)
	//nolint:staticcheck // the deprecated field still decides, as in kube-apiserver
	switch {
	case opts.OrphanDependents != nil:
		orphan, foreground = *opts.OrphanDependents, !*opts.OrphanDependents
	case opts.PropagationPolicy != nil:
		orphan = *opts.PropagationPolicy == metav1.DeletePropagationOrphan
		foreground = *opts.PropagationPolicy == metav1.DeletePropagationForeground
	}
	ns.Finalizers = withFinalizer(ns.Finalizers, metav1.FinalizerOrphanDependents, orphan)
	ns.Finalizers = withFinalizer(ns.Finalizers, metav1.FinalizerDeleteDependents, foreground)
}

// withFinalizer returns finalizers with f in it or not, as want says;
// the others keep their order.
func withFinalizer(finalizers []string, f string, want bool) []string {
	has := slices.Contains(finalizers, f)
	switch {
	case want && !has:
		return append(finalizers, f)
	case !want && has:
		return slices.DeleteFunc(finalizers, func(x string) bool { return x == f })
	}
	return finalizers
}
