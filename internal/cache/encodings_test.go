package cache

import (
	"bytes"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/codecs"
)

// TestKeptEncodingsAreTheEncoders checks that what Encodings keep is what
// each encoder writes: protobuf's bare message kept in the buffer it was
// marshalled into, the enveloped one (written in parts) and JSON copied.
func TestKeptEncodingsAreTheEncoders(t *testing.T) {
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", ResourceVersion: "3", Labels: map[string]string{"a": "b"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
	}
	encoders := []runtime.Encoder{codecs.ProtobufRaw}
	for _, info := range codecs.Factory.SupportedMediaTypes() {
		encoders = append(encoders, info.Serializer)
	}
	for _, e := range encoders {
		var want bytes.Buffer
		if err := e.Encode(pod, &want); err != nil {
			t.Fatal(err)
		}
		var enc Encodings
		got, err := enc.Encode(e, pod)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: kept %q, the encoder writes %q", e.Identifier(), got, want.Bytes())
		}
		// A copy's capacity is rounded up to an allocation size class;
		// the marshalled buffer's is the size the encoder asked for.
		if e == codecs.ProtobufRaw && cap(got) != len(got) {
			t.Errorf("the bare protobuf message was copied (capacity %d for %d bytes)", cap(got), len(got))
		}
	}
}

// TestMarkedEncodingsAreKept checks that an encoding marked read outlives
// a sweep as one Encode read does, and that marking another encoder's
// leaves it to go.
func TestMarkedEncodingsAreKept(t *testing.T) {
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	json := codecs.Factory.SupportedMediaTypes()[0].Serializer
	var enc Encodings
	if _, err := enc.Encode(json, pod); err != nil {
		t.Fatal(err)
	}
	enc.dropUnread() // the sweep after the read: kept, now unread
	enc.MarkRead(json.Identifier())
	if dropped := enc.dropUnread(); dropped != 0 {
		t.Fatalf("a marked encoding was dropped (%d bytes)", dropped)
	}
	enc.MarkRead(codecs.ProtobufRaw.Identifier())
	if dropped := enc.dropUnread(); dropped == 0 {
		t.Error("marking another encoder's kept this one")
	}
	var none *Encodings
	none.MarkRead(json.Identifier()) // an object whose encodings are not kept
}

// TestRacingReadersKeepOneEncoding: readers that encode an object at once
// all get the bytes that are kept, and one copy is kept.
func TestRacingReadersKeepOneEncoding(t *testing.T) {
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
	}
	for range 20 {
		var enc Encodings
		got := make([][]byte, 8)
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() {
				data, err := enc.Encode(codecs.ProtobufRaw, pod)
				if err != nil {
					t.Error(err)
				}
				got[i] = data
			})
		}
		wg.Wait()
		if len(enc.entries) != 1 {
			t.Fatalf("%d encodings kept", len(enc.entries))
		}
		for _, data := range got {
			if &data[0] != &enc.entries[0].data[0] {
				t.Fatal("a reader got bytes other than the kept ones")
			}
		}
	}
}
