package cache

import (
	"bytes"
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
