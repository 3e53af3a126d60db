package handlers

import (
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/resources"
	"github.com/kapi-dev/kapi/internal/storage"
)

// TestTablesOfSharedObjectsDoNotWrite prints Table rows of one object, as
// the watch cache shares it, from several goroutines: the HPA printer calls
// (*Quantity).String on pointers into the object, which would cache the
// string in it (a write) for a stored form like "8Ki", had the cache not
// prepared the object (run with -race).
func TestTablesOfSharedObjectsDoNotWrite(t *testing.T) {
	info := resources.NewBuiltin().Lookup("autoscaling", "v2", "horizontalpodautoscalers")
	if info == nil {
		t.Skip("no autoscaling/v2 hpa")
	}
	store := registry.NewStore(info, nil)
	stored := `{"kind":"HorizontalPodAutoscaler","apiVersion":"autoscaling/v2","metadata":{"name":"h","namespace":"default"},
"spec":{"scaleTargetRef":{"kind":"Deployment","name":"d"},"maxReplicas":3,"metrics":[{"type":"Pods","pods":{"metric":{"name":"m"},"target":{"type":"AverageValue","averageValue":"8Ki"}}}]}}`
	obj, err := store.Decode(&storage.KeyValue{Key: []byte("/k"), Value: []byte(stored), ModRevision: 5})
	if err != nil {
		t.Fatal(err)
	}
	registry.PrepareShared(obj, &cache.Encodings{}) // what the cache does before sharing
	target := readTarget{includeObject: "None"}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := target.table(store, obj, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}
