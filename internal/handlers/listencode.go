package handlers

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/registry"
)

// A list response is assembled from its items' cached encodings instead of
// encoding every item again: the bytes are the same the serializer would
// write for the list.

// splicedList encodes a list of items in JSON or protobuf from the items'
// cached encodings; ok is false for other media types.
func splicedList(store *registry.Store, info runtime.SerializerInfo, listMeta *metav1.ListMeta, items []runtime.Object, encs []*cache.Encodings) (data []byte, ok bool, err error) {
	switch info.MediaType {
	case runtime.ContentTypeJSON:
		data, err = jsonList(store, info, listMeta, items, encs)
		return data, true, err
	case runtime.ContentTypeProtobuf:
		if store.Typed() {
			data, err = protobufList(store, listMeta, items, encs)
			return data, true, err
		}
	}
	return nil, false, nil
}

func jsonList(store *registry.Store, info runtime.SerializerInfo, listMeta *metav1.ListMeta, items []runtime.Object, encs []*cache.Encodings) ([]byte, error) {
	gvk := store.Info.GroupVersionKind()
	metaJSON, err := json.Marshal(listMeta)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, `{"kind":%q,"apiVersion":%q,"metadata":%s,"items":[`, gvk.Kind+"List", gvk.GroupVersion().String(), metaJSON)
	// Items of built-in lists carry no kind; custom resources' items do.
	typePrefix := []byte(fmt.Sprintf(`{"kind":%q,"apiVersion":%q,`, gvk.Kind, gvk.GroupVersion().String()))
	for i, item := range items {
		data, err := encs[i].Encode(info.Serializer, item)
		if err != nil {
			return nil, err
		}
		data = bytes.TrimRight(data, "\n")
		if store.Typed() && bytes.HasPrefix(data, typePrefix) {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteByte('{')
			buf.Write(data[len(typePrefix):])
			continue
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(data)
	}
	buf.WriteString("]}\n")
	return buf.Bytes(), nil
}

// protobufPrefix starts every protobuf-encoded Kubernetes object.
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

// protobufList writes the envelope (magic, then runtime.Unknown naming the
// list kind) around a list message: field 1 the ListMeta, field 2 each item.
func protobufList(store *registry.Store, listMeta *metav1.ListMeta, items []runtime.Object, encs []*cache.Encodings) ([]byte, error) {
	metaBytes, err := listMeta.Marshal()
	if err != nil {
		return nil, err
	}
	list := appendField(nil, 1, metaBytes)
	for i, item := range items {
		data, err := encs[i].Encode(codecs.ProtobufRaw, item)
		if err != nil {
			return nil, err
		}
		list = appendField(list, 2, data)
	}
	gvk := store.Info.GroupVersionKind()
	unknown := runtime.Unknown{
		TypeMeta: runtime.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind + "List"},
		Raw:      list,
	}
	envelope, err := unknown.Marshal()
	if err != nil {
		return nil, err
	}
	return append(append([]byte(nil), protobufPrefix...), envelope...), nil
}

// appendField appends a length-delimited protobuf field.
func appendField(b []byte, field int, data []byte) []byte {
	b = binary.AppendUvarint(b, uint64(field<<3|2))
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}
