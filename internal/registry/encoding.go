package registry

import (
	"bytes"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/codecs"
)

// Built-in objects are stored as kube-apiserver stores them in etcd: in
// Kubernetes' protobuf envelope, which decodes several times faster than
// JSON and takes less space. Objects stored in JSON (custom resources,
// and built-in objects written by kapi before it stored protobuf) are
// read as JSON: the envelope's magic number tells them apart.
//
// storesProtobuf reports whether objects of kind can be stored in
// protobuf: built-in kinds have Go types with protobuf encodings.
func storesProtobuf(kind schema.GroupVersionKind) bool {
	obj, err := codecs.Scheme.New(kind)
	if err != nil {
		return false
	}
	return codecs.Protobuf.Encode(obj, io.Discard) == nil
}

// decodeStored decodes stored bytes, protobuf or JSON.
func (s *Store) decodeStored(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, error) {
	if bytes.HasPrefix(data, codecs.ProtobufMagic) {
		obj, _, err := codecs.DecodeProtobuf(data, gvk, into)
		return obj, err
	}
	obj, _, err := s.codec.Decode(data, gvk, into)
	return obj, err
}

// storageEncoder encodes objects, in the storage version, as they are
// stored.
func (s *Store) storageEncoder() runtime.Encoder {
	if s.protobuf {
		return codecs.Protobuf
	}
	return s.codec
}
