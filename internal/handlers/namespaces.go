package handlers

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/registry"
)

// immortalNamespaces may not be deleted.
var immortalNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic}

// admitNamespace refuses objects in a namespace that does not exist or is
// being deleted, as kube-apiserver's NamespaceLifecycle admission does.
func (a *API) admitNamespace(ctx context.Context, store *registry.Store, m metav1.Object) error {
	if !store.Info.Namespaced {
		return nil
	}
	obj, err := a.namespaces.Get(ctx, "", m.GetNamespace())
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, m.GetNamespace())
	}
	if err != nil {
		return err
	}
	if ns := obj.(*corev1.Namespace); ns.Status.Phase == corev1.NamespaceTerminating {
		return apierrors.NewForbidden(store.GroupResource(), m.GetName(), fmt.Errorf(
			"unable to create new content in namespace %s because it is being terminated", ns.Name))
	}
	return nil
}

// deleteNamespace marks the namespace Terminating; the namespace controller
// then deletes its content and removes it (FinalizeNamespace).
func (a *API) deleteNamespace(ctx context.Context, name string, opts *metav1.DeleteOptions, dry bool) (runtime.Object, bool, error) {
	if slices.Contains(immortalNamespaces, name) {
		return nil, false, apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, name,
			fmt.Errorf("this namespace may not be deleted"))
	}
	current, err := a.namespaces.Get(ctx, "", name)
	if err != nil {
		return nil, false, err
	}
	if err := checkPreconditions(a.namespaces, opts, current); err != nil {
		return nil, false, err
	}
	terminate := func(obj runtime.Object) (runtime.Object, error) {
		if err := checkPreconditions(a.namespaces, opts, obj); err != nil {
			return nil, err
		}
		markDeleting(obj)
		obj.(*corev1.Namespace).Status.Phase = corev1.NamespaceTerminating
		return obj, nil
	}
	if dry {
		obj, err := terminate(current)
		return obj, false, err
	}
	marked, err := a.namespaces.Update(ctx, "", name, terminate)
	return marked, false, err
}

// FinalizeNamespace deletes every object in a terminating namespace, then
// the namespace itself when nothing remains. It reports whether it is gone.
func (a *API) FinalizeNamespace(ctx context.Context, name string) (bool, error) {
	remaining := 0
	for _, store := range a.stores {
		if !store.Info.Namespaced || !slices.Contains(store.Info.Verbs, "delete") {
			continue
		}
		list, err := store.List(ctx, name, nil)
		if err != nil {
			return false, err
		}
		items, _ := meta.ExtractList(list)
		for _, item := range items {
			_, gone, err := a.deleteObject(ctx, store, name, mustAccessor(item).GetName(), &metav1.DeleteOptions{}, false)
			if err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
			if err == nil && !gone {
				remaining++
			}
		}
	}
	if remaining > 0 {
		return false, nil
	}
	ns, err := a.namespaces.Update(ctx, "", name, func(obj runtime.Object) (runtime.Object, error) {
		ns := obj.(*corev1.Namespace)
		ns.Spec.Finalizers = slices.DeleteFunc(ns.Spec.Finalizers, func(f corev1.FinalizerName) bool {
			return f == corev1.FinalizerKubernetes
		})
		return ns, nil
	})
	if err != nil {
		return false, err
	}
	m := mustAccessor(ns)
	if len(ns.(*corev1.Namespace).Spec.Finalizers) > 0 || len(m.GetFinalizers()) > 0 {
		return false, nil
	}
	_, err = a.namespaces.Delete(ctx, "", name, nil)
	if apierrors.IsNotFound(err) {
		err = nil
	}
	return err == nil, err
}
