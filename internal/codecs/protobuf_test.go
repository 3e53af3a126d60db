package codecs

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// protobufSamples are objects with every kind of field protobuf's
// decoders fill: strings, byte slices, maps of byte slices, raw
// extensions.
func protobufSamples() []runtime.Object {
	return []runtime.Object{
		&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"app": "a"}},
			Data:       map[string]string{"k": "value"},
			BinaryData: map[string][]byte{"b": []byte("binary value")},
		},
		&corev1.Secret{
			TypeMeta:   metav1.TypeMeta{Kind: "Secret", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"},
			Data:       map[string][]byte{"password": []byte("hunter2")},
		},
		&appsv1.ControllerRevision{
			TypeMeta:   metav1.TypeMeta{Kind: "ControllerRevision", APIVersion: "apps/v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{}}`)}}}},
			Data:       runtime.RawExtension{Raw: []byte(`{"spec":{"template":{}}}`)},
			Revision:   3,
		},
	}
}

// TestDecodeProtobufAsTheSerializer: objects decode as the serializer
// decodes them, and an object decoded earlier keeps its content while
// later ones reuse the envelope's memory.
func TestDecodeProtobufAsTheSerializer(t *testing.T) {
	var earlier []runtime.Object
	for range 2 {
		for _, obj := range protobufSamples() {
			data, err := EncodeToKeep(Protobuf, obj)
			if err != nil {
				t.Fatal(err)
			}
			gvk := obj.GetObjectKind().GroupVersionKind()
			into, _ := Scheme.New(gvk)
			got, gotKind, err := DecodeProtobuf(data, &schema.GroupVersionKind{Version: gvk.Version, Kind: gvk.Kind}, into)
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := Protobuf.Decode(data, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got, want) || !equality.Semantic.DeepEqual(got, obj) {
				t.Errorf("decoded %#v\nserializer %#v", got, want)
			}
			if *gotKind != gvk {
				t.Errorf("kind %v, want %v", gotKind, gvk)
			}
			earlier = append(earlier, got)
		}
	}
	samples := protobufSamples()
	for i, obj := range earlier {
		if !equality.Semantic.DeepEqual(obj, samples[i%len(samples)]) {
			t.Errorf("an object decoded earlier changed: %#v", obj)
		}
	}
}

// FuzzDecodeProtobuf: whatever bytes a client sends or storage holds,
// DecodeProtobuf fails where the serializer fails, with its error, and
// decodes what it decodes, naming the same kind.
func FuzzDecodeProtobuf(f *testing.F) {
	for _, obj := range protobufSamples() {
		data, err := EncodeToKeep(Protobuf, obj)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("k8s\x00"))
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
		got, gotKind, gotErr := DecodeProtobuf(data, &gvk, &corev1.ConfigMap{})
		want, wantKind, wantErr := Protobuf.Decode(data, &gvk, &corev1.ConfigMap{})
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("DecodeProtobuf: %v; the serializer: %v", gotErr, wantErr)
		}
		if (gotKind == nil) != (wantKind == nil) || (gotKind != nil && *gotKind != *wantKind) {
			t.Fatalf("kind %v; the serializer: %v", gotKind, wantKind)
		}
		if gotErr == nil && !equality.Semantic.DeepEqual(got, want) {
			t.Fatalf("decoded %#v\nserializer %#v", got, want)
		}
	})
}

// TestTypedProtobufDecodesPooled: the built-in types' protobuf entry
// decodes through DecodeProtobuf, strictly or not, and keeps its encoder's
// allocator (the kept encodings and responses use it).
func TestTypedProtobufDecodesPooled(t *testing.T) {
	var info *runtime.SerializerInfo
	for i := range TypedSerializers {
		if TypedSerializers[i].MediaType == runtime.ContentTypeProtobuf {
			info = &TypedSerializers[i]
		}
	}
	if info == nil {
		t.Fatal("no protobuf serializer among the typed ones")
	}
	for name, s := range map[string]runtime.Serializer{"serializer": info.Serializer, "strict": info.StrictSerializer} {
		if _, ok := s.(pooledProtobuf); !ok {
			t.Errorf("%s is %T, want the pooled decoder", name, s)
		}
	}
	if _, ok := info.Serializer.(runtime.EncoderWithAllocator); !ok {
		t.Errorf("%T lost the encoder's allocator", info.Serializer)
	}
	for _, obj := range protobufSamples() {
		data, err := EncodeToKeep(info.Serializer, obj)
		if err != nil {
			t.Fatal(err)
		}
		gvk := obj.GetObjectKind().GroupVersionKind()
		into, _ := Scheme.New(gvk)
		got, kind, err := info.Serializer.Decode(data, &gvk, into)
		if err != nil || *kind != gvk || !equality.Semantic.DeepEqual(got, obj) {
			t.Errorf("decoded %#v (%v, %v), want %#v", got, kind, err, obj)
		}
	}
}
