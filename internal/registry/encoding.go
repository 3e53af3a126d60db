package registry

import (
	"bytes"
	"io"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/kapi-dev/kapi/internal/codecs"
)

// Built-in objects are stored as kube-apiserver stores them in etcd: in
// Kubernetes' protobuf envelope, which decodes several times faster than
// JSON and takes less space. Objects stored in JSON (custom resources,
// and built-in objects written by kapi before it stored protobuf) are
// read as JSON: the envelope's magic number tells them apart.
var (
	protobufStorage = protobuf.NewSerializer(codecs.Scheme, codecs.Scheme)
	protobufMagic   = []byte("k8s\x00")
)

// storesProtobuf reports whether objects of kind can be stored in
// protobuf: built-in kinds have Go types with protobuf encodings.
func storesProtobuf(kind schema.GroupVersionKind) bool {
	obj, err := codecs.Scheme.New(kind)
	if err != nil {
		return false
	}
	return protobufStorage.Encode(obj, io.Discard) == nil
}

// decodeStored decodes stored bytes, protobuf or JSON.
func (s *Store) decodeStored(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, error) {
	if bytes.HasPrefix(data, protobufMagic) {
		return decodeProtobuf(data, gvk, into)
	}
	obj, _, err := s.codec.Decode(data, gvk, into)
	return obj, err
}

// storageEncoder encodes objects, in the storage version, as they are
// stored.
func (s *Store) storageEncoder() runtime.Encoder {
	if s.protobuf {
		return protobufStorage
	}
	return s.codec
}

// envelopes are reused to unwrap stored objects: the serializer's Decode
// copies an object's bytes out of its envelope, a garbage copy of every
// object read. The decoded object holds none of the envelope's memory
// (protobuf's decoders copy every string and byte field).
var envelopes = sync.Pool{New: func() any { return new(runtime.Unknown) }}

// maxEnvelope bounds the object bytes a pooled envelope keeps.
const maxEnvelope = 1 << 20

// decodeProtobuf decodes data, in Kubernetes' protobuf envelope, as
// protobufStorage.Decode does: into into when it is of the envelope's
// kind (defaulted from gvk and into), else into a new object of that kind.
func decodeProtobuf(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, error) {
	switch into.(type) {
	case nil, *runtime.Unknown, runtime.Unstructured:
		// Not a typed object: decoded by the serializer, which would hand
		// an Unknown the pooled envelope's bytes.
		obj, _, err := protobufStorage.Decode(data, gvk, into)
		return obj, err
	}
	envelope := envelopes.Get().(*runtime.Unknown)
	defer func() {
		if cap(envelope.Raw) <= maxEnvelope {
			envelopes.Put(envelope)
		}
	}()
	*envelope = runtime.Unknown{Raw: envelope.Raw[:0]} // Unmarshal appends to Raw
	if err := envelope.Unmarshal(data[len(protobufMagic):]); err != nil {
		return nil, err
	}
	if len(envelope.Raw) == 0 { // the raw serializer refuses what the other decodes as empty
		obj, _, err := protobufStorage.Decode(data, gvk, into)
		return obj, err
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
	obj, _, err := codecs.ProtobufRaw.Decode(envelope.Raw, &actual, into)
	return obj, err
}
