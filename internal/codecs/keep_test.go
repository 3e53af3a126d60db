package codecs

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// TestEncodeToKeepIsExact: kept encodings are the encoder's bytes at their
// exact size, whether the encoder asks for its memory (protobuf) or writes
// into a buffer (JSON), and encodings lent to a response are the same
// bytes.
func TestEncodeToKeepIsExact(t *testing.T) {
	plain, fieldSets := jsonSerializers(t)
	encoders := map[string]runtime.Encoder{
		"protobuf":         protobuf.NewSerializer(Scheme, Scheme),
		"json":             plain,
		"json, field sets": fieldSets,
	}
	for name, e := range encoders {
		for _, size := range []int{0, 100, 5000, 2 << 20} {
			cm := &corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
				ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns"},
				Data:       map[string]string{"k": strings.Repeat("x", size)},
			}
			var want bytes.Buffer
			if err := e.Encode(cm, &want); err != nil {
				t.Fatal(err)
			}
			kept, err := EncodeToKeep(e, cm)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(kept, want.Bytes()) || cap(kept) != len(kept) {
				t.Errorf("%s, %d bytes of data: kept %d bytes (capacity %d), want %d", name, size, len(kept), cap(kept), want.Len())
			}
			for range 2 { // the second time from reused memory
				var lent []byte
				if err := WithEncoding(e, cm, func(data []byte) { lent = bytes.Clone(data) }); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(lent, want.Bytes()) {
					t.Errorf("%s, %d bytes of data: lent %d bytes, want %d", name, size, len(lent), want.Len())
				}
			}
		}
	}
}
