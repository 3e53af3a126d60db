package loopback

import "k8s.io/apimachinery/pkg/api/meta"

// TrimManagedFields drops an object's managed fields before an in-process
// informer caches it, as the informers of kube-apiserver,
// kube-controller-manager and kube-scheduler do: nothing reading those
// caches uses them, and they are a large part of every object. Use it as
// the informer factories' transform (informers.WithTransform).
func TrimManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
