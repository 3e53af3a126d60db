package codecs

import (
	"bytes"
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// Protobuf is Kubernetes' protobuf serializer: objects in its envelope
// (the magic number, then a runtime.Unknown naming the kind), as
// kube-apiserver stores them and clients send them.
var Protobuf = protobuf.NewSerializer(Scheme, Scheme)

// ProtobufMagic starts every object in Kubernetes' protobuf envelope.
var ProtobufMagic = []byte("k8s\x00")

// envelopes are reused to unwrap objects: the serializer's Decode copies
// an object's bytes out of its envelope, a garbage copy of every object
// read. The decoded object holds none of the envelope's memory
// (protobuf's decoders copy every string and byte field).
var envelopes = sync.Pool{New: func() any { return new(runtime.Unknown) }}

// maxEnvelope bounds the object bytes a pooled envelope keeps.
const maxEnvelope = 1 << 20

// errEmptyObject sends an envelope without object bytes to the serializer.
var errEmptyObject = errors.New("empty object in the protobuf envelope")

// DecodeProtobuf decodes data as Protobuf.Decode does, into into when it
// is of the envelope's kind (defaulted from gvk), else into a new object
// of that kind, and returns the kind the data names. It fails where the
// serializer fails, with the serializer's error.
func DecodeProtobuf(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	switch into.(type) {
	case nil, *runtime.Unknown, runtime.Unstructured:
		// Not a typed object: the serializer would hand an Unknown the
		// pooled envelope's bytes.
		return Protobuf.Decode(data, gvk, into)
	}
	if !bytes.HasPrefix(data, ProtobufMagic) {
		return Protobuf.Decode(data, gvk, into)
	}
	obj, actual, err := decodeInPooledEnvelope(data, gvk, into)
	if err != nil {
		// The serializer's own answer, whatever part of the data is wrong.
		return Protobuf.Decode(data, gvk, into)
	}
	return obj, actual, nil
}

func decodeInPooledEnvelope(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	envelope := envelopes.Get().(*runtime.Unknown)
	defer func() {
		if cap(envelope.Raw) <= maxEnvelope {
			envelopes.Put(envelope)
		}
	}()
	*envelope = runtime.Unknown{Raw: envelope.Raw[:0]} // Unmarshal appends to Raw
	if err := envelope.Unmarshal(data[len(ProtobufMagic):]); err != nil {
		return nil, nil, err
	}
	if len(envelope.Raw) == 0 {
		return nil, nil, errEmptyObject // the serializer decodes it, the raw one refuses it
	}
	actual := envelope.GroupVersionKind()
	if gvk != nil {
		if actual.Kind == "" {
			actual.Kind = gvk.Kind
		}
		if actual.Version == "" && gvk.Version != "" {
			actual.Group, actual.Version = gvk.Group, gvk.Version
		}
	}
	return ProtobufRaw.Decode(envelope.Raw, &actual, into)
}

// pooledProtobuf is the protobuf serializer of the built-in types'
// request bodies and responses: its own encoder (with its allocator), and
// DecodeProtobuf for decoding.
type pooledProtobuf struct{ *protobuf.Serializer }

func (pooledProtobuf) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	return DecodeProtobuf(data, gvk, into)
}
