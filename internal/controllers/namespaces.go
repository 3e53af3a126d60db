// Package controllers runs, inside the server, the controllers that make
// the API behave as documented without a cluster. They read through the
// watch cache and write through the write pipeline, like any client,
// never to storage behind the API's back.
package controllers

import (
	"context"
	"fmt"
	"log"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/pipeline"
)

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// manager is the field manager the controller's writes are recorded
// under, as kube-controller-manager's namespace controller.
const manager = "kube-controller-manager"

// Namespaces is the namespace lifecycle: it empties and removes namespaces
// being deleted, retrying while finalizers hold their content, as
// kube-controller-manager's namespace controller does.
type Namespaces struct {
	Pipeline *pipeline.Pipeline
	Logger   *log.Logger
	// Retry is how often terminating namespaces are tried again.
	Retry time.Duration
}

// Run works until ctx ends, restarting its watch when the cache ends it.
func (c *Namespaces) Run(ctx context.Context) {
	if c.Retry <= 0 {
		c.Retry = 2 * time.Second
	}
	for ctx.Err() == nil {
		if err := c.watch(ctx); err != nil && ctx.Err() == nil {
			c.Logger.Printf("namespace controller: %v", err)
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
			}
		}
	}
}

func (c *Namespaces) watch(ctx context.Context) error {
	store := c.Pipeline.Registry().Snapshot().Lookup(namespacesGVR)
	if store == nil {
		return fmt.Errorf("namespaces are not served")
	}
	w, existing, _, _, err := store.Backend().Cache.WatchWithState(ctx, cache.Filter{Prefix: store.CollectionPrefix("")}, false)
	if err != nil {
		return err
	}
	defer w.Stop()
	terminating := map[string]bool{}
	handle := func(obj runtime.Object) {
		if ns, ok := obj.(*corev1.Namespace); ok && ns.DeletionTimestamp != nil {
			terminating[ns.Name] = true
		}
	}
	for _, obj := range existing {
		handle(obj)
	}
	retry := time.NewTicker(c.Retry)
	defer retry.Stop()
	for {
		c.finalize(ctx, terminating)
		select {
		case d := <-w.Deliveries():
			if d.Bookmark == 0 && d.Type != watch.Deleted {
				obj, _ := d.Object()
				handle(obj)
			}
		case <-retry.C:
		case <-w.Done():
			return w.Err()
		case <-ctx.Done():
			return nil
		}
	}
}

// finalize tries to remove every terminating namespace; those whose
// content is held by finalizers stay for the next try.
func (c *Namespaces) finalize(ctx context.Context, terminating map[string]bool) {
	for name := range terminating {
		gone, err := c.finalizeNamespace(ctx, name)
		if apierrors.IsNotFound(err) {
			gone, err = true, nil
		}
		if err != nil && ctx.Err() == nil {
			c.Logger.Printf("namespace controller: finalizing %s: %v", name, err)
		}
		if gone {
			delete(terminating, name)
		}
	}
}

// finalizeNamespace deletes every object in a terminating namespace, then
// removes the kubernetes finalizer so the namespace goes when nothing
// remains. It reports whether the namespace is gone.
func (c *Namespaces) finalizeNamespace(ctx context.Context, name string) (bool, error) {
	remaining, err := c.deleteContent(ctx, name)
	if err != nil || remaining > 0 {
		return false, err
	}
	namespaces := c.Pipeline.Registry().Snapshot().Lookup(namespacesGVR)
	ns, err := c.Pipeline.Update(ctx, namespaces, "", name, pipeline.Options{Subresource: "finalize", Manager: manager},
		func(obj runtime.Object) (runtime.Object, error) {
			ns := obj.(*corev1.Namespace)
			ns.Spec.Finalizers = slices.DeleteFunc(ns.Spec.Finalizers, func(f corev1.FinalizerName) bool {
				return f == corev1.FinalizerKubernetes
			})
			return ns, nil
		})
	if err != nil {
		return false, err
	}
	_, err = namespaces.Get(ctx, "", ns.(*corev1.Namespace).Name)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// deleteContent deletes every object of every namespaced resource in the
// namespace and counts those that finalizers keep.
func (c *Namespaces) deleteContent(ctx context.Context, namespace string) (int, error) {
	remaining := 0
	for _, backend := range c.Pipeline.Registry().Snapshot().Backends() {
		store := backend.Storage()
		if !store.Info.Namespaced || !slices.Contains(store.Info.Verbs, "delete") {
			continue
		}
		list, err := store.List(ctx, namespace, nil)
		if err != nil {
			return 0, err
		}
		items, _ := meta.ExtractList(list)
		for _, item := range items {
			m, _ := meta.Accessor(item)
			_, gone, err := c.Pipeline.Delete(ctx, store, namespace, m.GetName(), &metav1.DeleteOptions{}, false)
			if err != nil && !apierrors.IsNotFound(err) {
				return 0, err
			}
			if err == nil && !gone {
				remaining++
			}
		}
	}
	return remaining, nil
}
