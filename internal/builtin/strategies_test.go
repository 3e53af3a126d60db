package builtin

import (
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/internal/resources"
)

// TestEveryWritableSubresourceHasAStrategy: a sub-resource discovery says
// may be updated is written through its type's strategy for it (kube's
// registry gives each its own, status ones resetting everything but the
// status), or by the type's own action; without one its writes fail with
// a 500. CSINodes' status, new in 1.37, had none.
func TestEveryWritableSubresourceHasAStrategy(t *testing.T) {
	all := allStrategies(nil, nil)
	for _, g := range resources.NewBuiltin().Groups() {
		for _, v := range g.Versions {
			for _, info := range v.Resources {
				s := all[info.GroupResource()]
				for _, sub := range info.Subresources {
					if !sub.Served || !slices.Contains(sub.Verbs, "update") || handledApart[sub.Name] {
						continue
					}
					if s == nil || s.update[sub.Name] == nil && !s.byAction[sub.Name] {
						t.Errorf("%s/%s (%s) may be updated but has no strategy", info.Resource, sub.Name, info.GroupVersionResource().GroupVersion())
					}
				}
			}
		}
	}
}

// handledApart are sub-resources whose updates are no writes of the
// object: the proxies pass the request on.
var handledApart = map[string]bool{"proxy": true}
