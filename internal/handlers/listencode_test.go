package handlers

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/codecs"
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
		ok := splices(store, info)
		b, err := spliceList(store, info, listMeta, items, encs)
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
		again, _ := spliceList(store, info, listMeta, items, encs)
		if !bytes.Equal(again.bytes(), spliced) {
			t.Fatalf("%s: cached encodings changed the list", info.MediaType)
		}
	}
}

// TestProtobufWatchEventMatchesSerializer checks that a protobuf watch
// frame framed around an object's bare message is byte for byte what the
// stream serializer writes for the event of the enveloped object.
func TestProtobufWatchEventMatchesSerializer(t *testing.T) {
	store := registry.NewStore(resources.NewBuiltin().Lookup("", "v1", "pods"), nil)
	var info runtime.SerializerInfo
	for _, i := range store.Serializers() {
		if i.MediaType == runtime.ContentTypeProtobuf {
			info = i
		}
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("n", 200), Namespace: "ns", ResourceVersion: "7"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: strings.Repeat("i", 300)}}},
	}
	status := &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: 410}
	for _, tc := range []struct {
		typ watch.EventType
		obj runtime.Object
	}{{watch.Added, pod}, {watch.Deleted, pod}, {watch.Error, status}} {
		var object, want bytes.Buffer
		if err := info.Serializer.Encode(tc.obj, &object); err != nil {
			t.Fatal(err)
		}
		stream := streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(&want), info.StreamSerializer.Serializer)
		if err := stream.Encode(&metav1.WatchEvent{Type: string(tc.typ), Object: runtime.RawExtension{Raw: object.Bytes()}}); err != nil {
			t.Fatal(err)
		}
		bare, err := (*cache.Encodings)(nil).Encode(codecs.ProtobufRaw, tc.obj)
		if err != nil {
			t.Fatal(err)
		}
		got := appendProtobufWatchEvent([]byte("kept"), tc.typ, tc.obj.GetObjectKind().GroupVersionKind(), bare)
		if !bytes.Equal(got[4:], want.Bytes()) || string(got[:4]) != "kept" {
			t.Fatalf("%s event differs:\n got %q\nwant %q", tc.typ, got[4:], want.Bytes())
		}
	}
}
