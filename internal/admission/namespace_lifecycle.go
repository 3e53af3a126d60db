package admission

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NamespaceLifecycle refuses content in namespaces that do not exist or
// are being deleted, and the deletion of the namespaces every cluster
// keeps, as kube-apiserver's plugin of that name does.
type NamespaceLifecycle struct {
	// Namespace reads a namespace at the current revision.
	Namespace func(ctx context.Context, name string) (*corev1.Namespace, error)
}

// immortalNamespaces may not be deleted.
var immortalNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic}

var namespacesResource = schema.GroupResource{Resource: "namespaces"}

// Admit implements Mutator: kube-apiserver runs the plugin in the mutating
// phase, so a create in a missing namespace is refused before validation.
func (l *NamespaceLifecycle) Admit(ctx context.Context, a *Attributes) error {
	isNamespace := a.Resource.GroupResource() == namespacesResource
	if a.Operation == Delete && isNamespace && a.Subresource == "" && slices.Contains(immortalNamespaces, a.Name) {
		return apierrors.NewForbidden(namespacesResource, a.Name, fmt.Errorf("this namespace may not be deleted"))
	}
	if a.Operation != Create || a.Namespace == "" || isNamespace {
		return nil
	}
	ns, err := l.Namespace(ctx, a.Namespace)
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(namespacesResource, a.Namespace)
	}
	if err != nil {
		return err
	}
	if ns.Status.Phase == corev1.NamespaceTerminating {
		// The cause tells controllers (the root CA publisher) not to retry.
		err := apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, fmt.Errorf(
			"unable to create new content in namespace %s because it is being terminated", ns.Name))
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    corev1.NamespaceTerminatingCause,
			Message: fmt.Sprintf("namespace %s is being terminated", ns.Name),
			Field:   "metadata.namespace",
		})
		return err
	}
	return nil
}
