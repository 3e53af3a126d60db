package pipeline

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/registry"
)

// strategyOf is the write rules of a store's type: its backend's, or the
// generic ones.
func strategyOf(store *registry.Store) registry.Strategy {
	if s := store.Backend().Strategy; s != nil {
		return s
	}
	return genericStrategy{}
}

// genericStrategy is what kube-apiserver's generic registry does for every
// type, from the type's resources.Info: system fields, status reset on
// create and kept on update where status is a sub-resource, status
// updates that change only status, generation, metadata validation.
type genericStrategy struct{}

func (genericStrategy) Default(runtime.Object) {}

func (genericStrategy) AllowUnconditionalUpdate(context.Context, string) bool { return true }

func (genericStrategy) AllowCreateOnUpdate(context.Context) bool { return false }

func (genericStrategy) GarbageCollectionPolicy(context.Context, registry.Write) string {
	return DeleteDependents
}

func (genericStrategy) Create(_ context.Context, w registry.Write, obj runtime.Object) (runtime.Object, error) {
	w.Info.PrepareForCreate(obj)
	if errs := w.Info.ValidateCreate(obj); len(errs) > 0 {
		return nil, apierrors.NewInvalid(w.Info.GroupVersionKind().GroupKind(), w.Name, errs)
	}
	return obj, nil
}

func (genericStrategy) Update(_ context.Context, w registry.Write, next, current runtime.Object) (runtime.Object, error) {
	info := w.Info
	if w.Subresource == "status" {
		next = info.PrepareForStatusUpdate(next, current)
	}
	keepSystemFields(mustAccessor(next), mustAccessor(current))
	if w.Subresource == "" || w.Subresource == "scale" {
		info.PrepareForUpdate(next, current)
	}
	if errs := info.ValidateUpdate(next, current); len(errs) > 0 {
		return nil, apierrors.NewInvalid(info.GroupVersionKind().GroupKind(), w.Name, errs)
	}
	return next, nil
}

// keepSystemFields carries over what an update may not change.
func keepSystemFields(next, cur metav1.Object) {
	if next.GetUID() == "" {
		next.SetUID(cur.GetUID())
	}
	next.SetCreationTimestamp(cur.GetCreationTimestamp())
	next.SetDeletionTimestamp(cur.GetDeletionTimestamp())
	next.SetDeletionGracePeriodSeconds(cur.GetDeletionGracePeriodSeconds())
	next.SetResourceVersion(cur.GetResourceVersion())
	next.SetSelfLink("")
}
