package server

import (
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kapi-dev/kapi/internal/loopback"
	"github.com/kapi-dev/kapi/internal/registry"
)

// informerTransform is the transform of the server's in-process informers
// (admission's, the controllers', the scheduler's). They list and watch
// over the loopback connection like any client, but what they decode is
// then swapped for the watch cache's own copy of the same version of the
// object, so that the server holds each object once, not once more per
// informer watching it; an object the cache has moved past, or holds in
// another type, is kept without its managed fields.
func informerTransform(reg *registry.Registry) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		if o, ok := obj.(runtime.Object); ok {
			if cached := reg.Snapshot().Cached(o); cached != nil {
				return cached, nil
			}
		}
		return loopback.TrimManagedFields(obj)
	}
}
