// Package controllers runs, inside the server, the controllers that make
// the API behave as documented without a cluster. They act through the
// API's in-process entry points, never on storage behind its back.
package controllers

import (
	"context"
	"log"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/internal/cache"
)

// API is what the namespace controller needs from the server.
type API interface {
	WatchState(ctx context.Context, gvr schema.GroupVersionResource) (*cache.Watcher, []runtime.Object, error)
	FinalizeNamespace(ctx context.Context, name string) (bool, error)
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Namespaces is the namespace lifecycle: it empties and removes namespaces
// being deleted, retrying while finalizers hold their content, as
// kube-controller-manager's namespace controller does.
type Namespaces struct {
	API    API
	Logger *log.Logger
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
	w, existing, err := c.API.WatchState(ctx, namespacesGVR)
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
		gone, err := c.API.FinalizeNamespace(ctx, name)
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
