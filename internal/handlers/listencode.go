package handlers

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/registry"
)

// A list response is assembled from its items' cached encodings instead of
// encoding every item again: the bytes are the same the serializer would
// write for the list. They are never copied into one buffer: the response
// is a sequence of parts, most of them the cached item bytes themselves,
// written (and compressed) one after another.

// body is an encoded response in parts; size is their total length.
type body struct {
	parts [][]byte
	size  int
}

func (b *body) add(parts ...[]byte) {
	for _, p := range parts {
		b.parts = append(b.parts, p)
		b.size += len(p)
	}
}

// bytes joins the parts, for tests.
func (b *body) bytes() []byte { return slices.Concat(b.parts...) }

// splicedList is a list response made of its items' cached encodings: its
// items section and, around it, what the list itself adds.
type splicedList struct {
	head, tail []byte
	items      *body
}

// bytes joins the list, for tests.
func (l *splicedList) bytes() []byte {
	return slices.Concat(l.head, l.items.bytes(), l.tail)
}

// spliceList encodes a list of items from the items' cached encodings, in
// a media type that splices (JSON, or protobuf for built-in types).
func spliceList(store *registry.Store, info runtime.SerializerInfo, listMeta *metav1.ListMeta, items []runtime.Object, encs []*cache.Encodings) (l *splicedList, err error) {
	l = &splicedList{}
	if l.items, err = listItems(store, info, items, encs); err != nil {
		return nil, err
	}
	l.head, l.tail, err = listFrame(store, info, listMeta, l.items.size)
	return l, err
}

// splices says whether lists of store in info's media type are spliced.
func splices(store *registry.Store, info runtime.SerializerInfo) bool {
	switch info.MediaType {
	case runtime.ContentTypeJSON:
		return true
	case runtime.ContentTypeProtobuf:
		return store.Typed()
	}
	return false
}

// listItems encodes the items section of a list: every item, as the
// list's encoder writes it there, and what separates them.
func listItems(store *registry.Store, info runtime.SerializerInfo, items []runtime.Object, encs []*cache.Encodings) (*body, error) {
	if info.MediaType == runtime.ContentTypeProtobuf {
		return protobufItems(items, encs)
	}
	return jsonItems(store, info, items, encs)
}

// itemEncoder is the encoder of a list's items in info's media type: a
// protobuf list holds each item's bare message.
func itemEncoder(info runtime.SerializerInfo) runtime.Encoder {
	if info.MediaType == runtime.ContentTypeProtobuf {
		return codecs.ProtobufRaw
	}
	return info.Serializer
}

// listFrame encodes what a list adds around an items section of
// itemsSize bytes.
func listFrame(store *registry.Store, info runtime.SerializerInfo, listMeta *metav1.ListMeta, itemsSize int) (head, tail []byte, err error) {
	if info.MediaType == runtime.ContentTypeProtobuf {
		return protobufFrame(store, listMeta, itemsSize)
	}
	return jsonFrame(store, listMeta)
}

var (
	comma      = []byte{','}
	openBrace  = []byte{'{'}
	listCloser = []byte("]}\n")
)

func jsonFrame(store *registry.Store, listMeta *metav1.ListMeta) (head, tail []byte, err error) {
	gvk := store.Info.ListGroupVersionKind()
	metaJSON, err := listMetaJSON(store, listMeta)
	if err != nil {
		return nil, nil, err
	}
	head = fmt.Appendf(nil, `{"kind":%q,"apiVersion":%q,"metadata":%s,"items":[`, gvk.Kind, gvk.GroupVersion().String(), metaJSON)
	return head, listCloser, nil
}

// listMetaJSON encodes a list's metadata. A custom resource's list is
// unstructured in kube-apiserver, whose metadata always holds its continue
// token, empty on a last page.
func listMetaJSON(store *registry.Store, listMeta *metav1.ListMeta) ([]byte, error) {
	if store.Typed() {
		return json.Marshal(listMeta)
	}
	meta := map[string]any{"continue": listMeta.Continue, "resourceVersion": listMeta.ResourceVersion}
	if listMeta.RemainingItemCount != nil {
		meta["remainingItemCount"] = *listMeta.RemainingItemCount
	}
	return json.Marshal(meta)
}

func jsonItems(store *registry.Store, info runtime.SerializerInfo, items []runtime.Object, encs []*cache.Encodings) (*body, error) {
	gvk := store.Info.GroupVersionKind()
	b := &body{parts: make([][]byte, 0, 3*len(items))}
	// Items of built-in lists carry no kind; custom resources' items do.
	typePrefix := fmt.Appendf(nil, `{"kind":%q,"apiVersion":%q,`, gvk.Kind, gvk.GroupVersion().String())
	for i, item := range items {
		data, err := encs[i].Encode(itemEncoder(info), item)
		if err != nil {
			return nil, err
		}
		for len(data) > 0 && data[len(data)-1] == '\n' {
			data = data[:len(data)-1]
		}
		if i > 0 {
			b.add(comma)
		}
		if store.Typed() && len(data) > len(typePrefix) && string(data[:len(typePrefix)]) == string(typePrefix) {
			b.add(openBrace, data[len(typePrefix):])
			continue
		}
		b.add(data)
	}
	return b, nil
}

// protobufPrefix starts every protobuf-encoded Kubernetes object.
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

// unknownTrailer ends a runtime.Unknown whose contentEncoding (field 3) and
// contentType (field 4) are empty, as its generated marshaller writes them.
var unknownTrailer = []byte{0x1a, 0x00, 0x22, 0x00}

// A protobuf list is the envelope (magic, then runtime.Unknown naming the
// list kind) around a list message, field 1 the ListMeta and field 2 each
// item, as runtime.Unknown's marshaller would write it: its typeMeta
// (field 1), the list as raw (field 2), then the empty fields 3 and 4.

// protobufFrame encodes the envelope and the list's metadata before an
// items section of itemsSize bytes, and the envelope's end after it.
func protobufFrame(store *registry.Store, listMeta *metav1.ListMeta, itemsSize int) (head, tail []byte, err error) {
	metaBytes, err := listMeta.Marshal()
	if err != nil {
		return nil, nil, err
	}
	size := fieldSize(1, len(metaBytes)) + itemsSize
	head = appendEnvelopeHeader(nil, store.Info.ListGroupVersionKind(), size)
	return appendField(head, 1, metaBytes), unknownTrailer, nil
}

func protobufItems(items []runtime.Object, encs []*cache.Encodings) (*body, error) {
	b := &body{parts: make([][]byte, 0, 2*len(items))}
	// The items' field headers share one buffer, made large enough that
	// appending never moves what earlier parts point into.
	headers := make([]byte, 0, maxFieldHeader*len(items))
	for i, item := range items {
		data, err := encs[i].Encode(codecs.ProtobufRaw, item)
		if err != nil {
			return nil, err
		}
		start := len(headers)
		headers = appendFieldHeader(headers, 2, len(data))
		b.add(headers[start:len(headers):len(headers)], data)
	}
	return b, nil
}

// appendEnvelopeHeader appends what precedes a bare protobuf message of
// size bytes in the envelope of an object of kind gvk: the magic prefix,
// then runtime.Unknown's typeMeta (field 1) and the header of its raw
// field (2). unknownTrailer follows the message.
func appendEnvelopeHeader(b []byte, gvk schema.GroupVersionKind, size int) []byte {
	apiVersion, kind := gvk.GroupVersion().String(), gvk.Kind
	typeMetaSize := fieldSize(1, len(apiVersion)) + fieldSize(2, len(kind))
	b = append(b, protobufPrefix...)
	b = appendFieldHeader(b, 1, typeMetaSize)
	b = appendField(b, 1, apiVersion)
	b = appendField(b, 2, kind)
	return appendFieldHeader(b, 2, size)
}

// appendProtobufWatchEvent appends one frame of a protobuf watch stream,
// as the stream serializer writes it: the frame's length (4 bytes, big
// endian), then a WatchEvent of typ whose object (field 2, a RawExtension
// whose raw bytes are field 1) is the bare message wrapped in the envelope
// of kind gvk.
func appendProtobufWatchEvent(b []byte, typ watch.EventType, gvk schema.GroupVersionKind, bare []byte) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = appendField(b, 1, string(typ))
	var scratch [128]byte
	envelope := appendEnvelopeHeader(scratch[:0], gvk, len(bare))
	objectSize := len(envelope) + len(bare) + len(unknownTrailer)
	b = appendFieldHeader(b, 2, fieldSize(1, objectSize))
	b = appendFieldHeader(b, 1, objectSize)
	b = append(append(append(b, envelope...), bare...), unknownTrailer...)
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b
}

// fieldSize is the encoded size of a length-delimited field of n bytes.
func fieldSize(field, n int) int {
	return uvarintSize(uint64(field<<3|2)) + uvarintSize(uint64(n)) + n
}

func uvarintSize(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// maxFieldHeader is the longest tag and length of a field below 16.
const maxFieldHeader = 1 + binary.MaxVarintLen64

// appendFieldHeader appends the tag and length of a length-delimited
// protobuf field.
func appendFieldHeader(b []byte, field, length int) []byte {
	b = binary.AppendUvarint(b, uint64(field<<3|2))
	return binary.AppendUvarint(b, uint64(length))
}

// appendField appends a length-delimited protobuf field.
func appendField[T []byte | string](b []byte, field int, data T) []byte {
	return append(appendFieldHeader(b, field, len(data)), data...)
}
