package server

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/admission"
	"github.com/kapi-dev/kapi/internal/registry"
)

// followKinds tells the webhooks the kind of every served version and
// sub-resource, as kube-apiserver's API installer does, before it returns;
// the function it returns does so again whenever the served resources
// change (a CRD), until ctx ends.
func followKinds(reg *registry.Registry, webhooks *admission.Webhooks) func(ctx context.Context) {
	snap := reg.Snapshot()
	registerKinds(snap, webhooks)
	return func(ctx context.Context) {
		for {
			select {
			case <-ctx.Done():
				return
			case <-snap.Replaced():
				snap = reg.Snapshot()
				registerKinds(snap, webhooks)
			}
		}
	}
}

func registerKinds(snap *registry.Snapshot, webhooks *admission.Webhooks) {
	for _, g := range snap.Resources.Groups() {
		for _, v := range g.Versions {
			for _, info := range v.Resources {
				gvr := info.GroupVersionResource()
				webhooks.RegisterKind(gvr, "", info.GroupVersionKind())
				for _, sub := range info.Subresources {
					kind := info.GroupVersionKind()
					if sub.Kind != "" {
						kind = schema.GroupVersionKind{Group: sub.Group, Version: sub.Version, Kind: sub.Kind}
						if sub.Group == "" && sub.Version == "" {
							kind.Group, kind.Version = info.Group, info.Version
						}
					}
					webhooks.RegisterKind(gvr, sub.Name, kind)
				}
			}
		}
	}
}
