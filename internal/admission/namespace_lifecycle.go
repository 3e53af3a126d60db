package admission

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	apiadmission "k8s.io/apiserver/pkg/admission"
)

// NamespaceLifecycle refuses content in namespaces that do not exist or
// are being deleted, and the deletion of the namespaces every cluster
// keeps, as kube-apiserver's plugin of that name does.
//
// As kube-apiserver's plugin reads its namespace informer, it reads the
// namespaces' watch cache, and storage only when that cannot be trusted:
// the namespace is not there (created a moment ago), is not active, or
// was deleted through this server in the last 30 seconds (the cache may
// not have seen it become Terminating yet).
type NamespaceLifecycle struct {
	// live reads a namespace at the current revision.
	live func(ctx context.Context, name string) (*corev1.Namespace, error)
	// cached returns the watch cache's namespace (read-only), or nil.
	cached func(name string) *corev1.Namespace
	// deleted are the namespaces deleted lately, by name.
	deleted *utilcache.LRUExpireCache
}

// forceLiveLookupTTL is how long after a namespace's deletion its state is
// read from storage, as kube-apiserver's plugin does.
const forceLiveLookupTTL = 30 * time.Second

// NewNamespaceLifecycle returns the plugin over live, which reads a
// namespace from storage, and cached, which returns the watch cache's
// (nil when it does not hold it).
func NewNamespaceLifecycle(live func(ctx context.Context, name string) (*corev1.Namespace, error), cached func(name string) *corev1.Namespace) *NamespaceLifecycle {
	return &NamespaceLifecycle{live: live, cached: cached, deleted: utilcache.NewLRUExpireCache(1024)}
}

// immortalNamespaces may not be deleted.
var immortalNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic}

var (
	namespacesResource = schema.GroupResource{Resource: "namespaces"}
	localAccessReviews = schema.GroupResource{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}
)

// Admit implements Mutator: kube-apiserver runs the plugin in the mutating
// phase, so a create in a missing namespace is refused before validation.
func (l *NamespaceLifecycle) Admit(ctx context.Context, a *Attributes) error {
	isNamespace := a.Resource.GroupResource() == namespacesResource
	if a.Operation == Delete && isNamespace && a.Subresource == "" {
		if slices.Contains(immortalNamespaces, a.Name) {
			return apierrors.NewForbidden(namespacesResource, a.Name, fmt.Errorf("this namespace may not be deleted"))
		}
		l.deleted.Add(a.Name, true, forceLiveLookupTTL)
	}
	// An access review is always allowed, as in kube: refusing it would
	// tell the namespace's state.
	if a.Operation != Create || a.Namespace == "" || isNamespace || a.Resource.GroupResource() == localAccessReviews {
		return nil
	}
	ns, err := l.namespace(ctx, a.Namespace)
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(namespacesResource, a.Namespace)
	}
	if err != nil {
		return err
	}
	if ns.Status.Phase == corev1.NamespaceTerminating {
		// Named as kube's admission names a refused object: by its name,
		// else the prefix of the name to generate, else "Unknown". The
		// cause tells controllers (the root CA publisher) not to retry.
		err := apiadmission.NewForbidden(kubeAttributes(ctx, a), fmt.Errorf(
			"unable to create new content in namespace %s because it is being terminated", ns.Name)).(*apierrors.StatusError)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    corev1.NamespaceTerminatingCause,
			Message: fmt.Sprintf("namespace %s is being terminated", ns.Name),
			Field:   "metadata.namespace",
		})
		return err
	}
	return nil
}

// namespace returns the watch cache's namespace when it is active and
// was not deleted lately, else storage's.
func (l *NamespaceLifecycle) namespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	if ns := l.cached(name); ns != nil && ns.Status.Phase == corev1.NamespaceActive {
		if _, deleted := l.deleted.Get(name); !deleted {
			return ns, nil
		}
	}
	return l.live(ctx, name)
}
