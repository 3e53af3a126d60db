package server

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/admission"
	"github.com/kapi-dev/kapi/internal/registry"
)

// registerKinds tells admission the kind of every served version and
// sub-resource of snap, as kube-apiserver's API installer does, and the
// resources stored as others.
func registerKinds(snap *registry.Snapshot, objects *admission.Objects) {
	for _, b := range snap.Backends() {
		if !b.StoredAs.Empty() {
			objects.StoredAs(b.GroupResource, b.StoredAs)
		}
	}
	for _, g := range snap.Resources.Groups() {
		for _, v := range g.Versions {
			for _, info := range v.Resources {
				gvr := info.GroupVersionResource()
				objects.RegisterKind(gvr, "", info.GroupVersionKind())
				for _, sub := range info.Subresources {
					kind := info.GroupVersionKind()
					if sub.Kind != "" {
						kind = schema.GroupVersionKind{Group: sub.Group, Version: sub.Version, Kind: sub.Kind}
						if sub.Group == "" && sub.Version == "" {
							kind.Group, kind.Version = info.Group, info.Version
						}
					}
					objects.RegisterKind(gvr, sub.Name, kind)
				}
			}
		}
	}
}
