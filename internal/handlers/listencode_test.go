package handlers

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/resources"
)

// TestSplicedListMatchesSerializer checks that a list assembled from cached
// item bytes is byte for byte what the serializer writes for the list.
func TestSplicedListMatchesSerializer(t *testing.T) {
	store := registry.NewStore(resources.NewBuiltin().Lookup("", "v1", "pods"), nil)
	var items []runtime.Object
	var encs []*cache.Encodings
	for _, name := range []string{"a", "b"} {
		pod := &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "7", Labels: map[string]string{"x": "y"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
		}
		items = append(items, pod)
		encs = append(encs, &cache.Encodings{})
	}
	remaining := int64(3)
	listMeta := &metav1.ListMeta{ResourceVersion: "9", Continue: "tok", RemainingItemCount: &remaining}
	for _, info := range store.Serializers()[:3] {
		if info.MediaType == "application/yaml" {
			continue
		}
		b, ok, err := splicedList(store, info, listMeta, items, encs)
		if err != nil || !ok {
			t.Fatalf("%s: spliced %v, %v", info.MediaType, ok, err)
		}
		spliced := b.bytes()
		list, _ := store.NewListOf(items)
		list.(*corev1.PodList).ListMeta = *listMeta
		var want bytes.Buffer
		if err := info.Serializer.Encode(list, &want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(spliced, want.Bytes()) {
			t.Fatalf("%s list differs:\n got %q\nwant %q", info.MediaType, spliced, want.Bytes())
		}
		// The second time, items come from the cached encodings.
		again, _, _ := splicedList(store, info, listMeta, items, encs)
		if !bytes.Equal(again.bytes(), spliced) {
			t.Fatalf("%s: cached encodings changed the list", info.MediaType)
		}
	}
}
