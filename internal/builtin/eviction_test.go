package builtin_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/pipeline/pipelinetest"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/storage"
	"github.com/kapi-dev/kapi/internal/storage/pebble"
)

// changedOnce is storage where another writer changes a key containing
// changing just before the first update of it lands, which then finds
// it changed.
type changedOnce struct {
	storage.Store
	changing string
	done     atomic.Bool
}

func (c *changedOnce) Update(ctx context.Context, key, value []byte, expectedRev int64) (int64, error) {
	if strings.Contains(string(key), c.changing) && c.done.CompareAndSwap(false, true) {
		current, _, err := c.Store.Get(ctx, key, 0)
		if err != nil {
			return 0, err
		}
		if _, err := c.Store.Update(ctx, key, current.Value, current.ModRevision); err != nil {
			return 0, err
		}
	}
	return c.Store.Update(ctx, key, value, expectedRev)
}

// TestEvictionRetriesAPodThatChanged: evicting a pod no budget counts
// (here a pending one) reads the pod again and retries when it changed
// under the eviction, as kube-apiserver does; with the client's own
// resourceVersion precondition the conflict is the client's answer.
func TestEvictionRetriesAPodThatChanged(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name          string
		preconditions *metav1.Preconditions
		wantConflict  bool
	}{
		{name: "no precondition"},
		{name: "the client's precondition", preconditions: &metav1.Preconditions{}, wantConflict: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := pebble.OpenInMemory()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			p := pipelinetest.NewOver(t, &changedOnce{Store: s, changing: "/pods/default/pending"}, cache.Options{})
			pods := p.Registry().Snapshot().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "pending", Namespace: "default"},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}},
			}
			created, err := p.Create(ctx, pods, pod, pipeline.Options{})
			if err != nil {
				t.Fatal(err)
			}
			eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "pending", Namespace: "default"}}
			if tc.preconditions != nil {
				rv := created.(*corev1.Pod).ResourceVersion
				tc.preconditions.ResourceVersion = &rv
				eviction.DeleteOptions = &metav1.DeleteOptions{Preconditions: tc.preconditions}
			}
			_, err = p.Act(ctx, pods, registry.StoreOfKind(policyv1.SchemeGroupVersion.WithKind("Eviction")), "default", "pending", eviction, pipeline.Options{Subresource: "eviction"})
			if tc.wantConflict {
				if !apierrors.IsConflict(err) {
					t.Errorf("eviction: %v, want the Conflict", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("eviction: %v, want it retried", err)
			}
			if _, err := pods.Get(ctx, "default", "pending"); !apierrors.IsNotFound(err) {
				t.Errorf("the evicted pod is still there: %v", err)
			}
		})
	}
}
