package flowcontrol

import (
	"context"
	"sync"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	flowcontrolbootstrap "k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	flowcontrollisters "k8s.io/client-go/listers/flowcontrol/v1"
	"k8s.io/client-go/tools/cache"
)

// TestSeedOnlyAFreshCluster: with no configuration at all, every
// bootstrap object is written once, as its producer's field manager, and
// the ensurer is left nothing to do; any configuration already there, or
// an object made meanwhile by another server, leaves the work to the
// ensurer.
func TestSeedOnlyAFreshCluster(t *testing.T) {
	want := len(flowcontrolbootstrap.SuggestedPriorityLevelConfigurations) + len(flowcontrolbootstrap.MandatoryPriorityLevelConfigurations) +
		len(flowcontrolbootstrap.SuggestedFlowSchemas) + len(flowcontrolbootstrap.MandatoryFlowSchemas)
	for _, c := range []struct {
		name       string
		existing   []runtime.Object
		madeByPeer string
		writes     int
		seeded     bool
	}{
		{name: "fresh", writes: want, seeded: true},
		{name: "configured", existing: []runtime.Object{flowcontrolbootstrap.MandatoryFlowSchemaExempt.DeepCopy()}},
		{name: "made meanwhile", madeByPeer: flowcontrolbootstrap.MandatoryFlowSchemaExempt.Name, writes: want},
	} {
		t.Run(c.name, func(t *testing.T) {
			schemas := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			levels := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			for _, obj := range c.existing {
				if _, ok := obj.(*flowcontrolv1.FlowSchema); ok {
					schemas.Add(obj)
				} else {
					levels.Add(obj)
				}
			}
			var mu sync.Mutex
			written := map[string]int{}
			create := func(_ context.Context, obj runtime.Object, manager string) error {
				mu.Lock()
				defer mu.Unlock()
				if manager != "api-priority-and-fairness-config-producer-v1" {
					t.Errorf("written as %q", manager)
				}
				var name string
				switch o := obj.(type) {
				case *flowcontrolv1.FlowSchema:
					name = "flowschema/" + o.Name
					if o.Name == c.madeByPeer {
						return apierrors.NewAlreadyExists(flowcontrolv1.Resource("flowschemas"), o.Name)
					}
				case *flowcontrolv1.PriorityLevelConfiguration:
					name = "prioritylevel/" + o.Name
				}
				written[name]++
				return nil
			}
			seeded, err := seed(context.Background(), flowcontrollisters.NewFlowSchemaLister(schemas),
				flowcontrollisters.NewPriorityLevelConfigurationLister(levels), create)
			if err != nil {
				t.Fatal(err)
			}
			writes := 0
			for name, n := range written {
				if n != 1 {
					t.Errorf("%s written %d times", name, n)
				}
				writes += n
			}
			if c.madeByPeer != "" {
				writes++ // the refused one
			}
			if seeded != c.seeded || writes != c.writes {
				t.Errorf("seeded %t after %d writes, want %t after %d", seeded, writes, c.seeded, c.writes)
			}
		})
	}
}
