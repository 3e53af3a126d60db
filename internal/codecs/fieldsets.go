package codecs

import (
	"bytes"
	"io"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// The standard library's JSON encoder checks and compacts what every
// json.Marshaler returns, byte by byte, through its scanner. An object's
// managed fields carry their field sets as raw JSON (FieldsV1), often a
// quarter of the object's bytes, so that check was a third of the CPU of
// encoding a pod. The field sets the field manager writes are compact
// already; a field set that is plainly compact, valid and has nothing the
// encoder would escape is written as it is, and the rest of the object is
// encoded as before, so the bytes are the serializer's.

// TypedSerializers are the serializers of the built-in types: the codec
// factory's, with JSON writing field sets as they are and protobuf
// decoding objects without copying them out of their envelope. (Set once
// Factory is, in init.)
var TypedSerializers []runtime.SerializerInfo

func typedSerializers(factory []runtime.SerializerInfo) []runtime.SerializerInfo {
	infos := slices.Clone(factory)
	for i := range infos {
		switch infos[i].MediaType {
		case runtime.ContentTypeJSON:
			infos[i].Serializer = fieldSetsJSON{infos[i].Serializer}
		case runtime.ContentTypeProtobuf:
			if plain, ok := infos[i].Serializer.(*protobuf.Serializer); ok {
				// Protobuf has no strict decoding: the factory's strict
				// serializer is the same one.
				if infos[i].StrictSerializer == infos[i].Serializer {
					infos[i].StrictSerializer = pooledProtobuf{plain}
				}
				infos[i].Serializer = pooledProtobuf{plain}
			}
		}
	}
	return infos
}

// fieldSetsJSON is the JSON serializer, encoding an object's field sets
// without passing them through the encoder's check.
type fieldSetsJSON struct{ runtime.Serializer }

// placeholder stands for a field set while the object is encoded: the
// encoder writes it as `"fieldsV1":0`, which no string can hold unescaped.
var (
	placeholder     = metav1.FieldsV1{Raw: []byte("0")}
	placeholderJSON = []byte(`"fieldsV1":0`)
)

func (s fieldSetsJSON) Encode(obj runtime.Object, w io.Writer) error {
	stand, sets := withPlaceholders(obj)
	if stand == nil {
		return s.Serializer.Encode(obj, w)
	}
	scratch := getScratch()
	defer scratch.release()
	if err := s.Serializer.Encode(stand, &scratch.buf); err != nil {
		return err
	}
	encoded := scratch.buf.Bytes()
	if bytes.Count(encoded, placeholderJSON) != len(sets) {
		return s.Serializer.Encode(obj, w)
	}
	return substitute(w, encoded, sets)
}

// withPlaceholders returns a shallow copy of obj whose field sets are
// placeholders, and the field sets in order; nil when obj has none, or
// one the encoder would write differently from its bytes.
func withPlaceholders(obj runtime.Object) (runtime.Object, [][]byte) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	managed := accessor.GetManagedFields()
	if len(managed) == 0 {
		return nil, nil
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, nil
	}
	sets := make([][]byte, 0, len(managed))
	managed = slices.Clone(managed)
	for i := range managed {
		if managed[i].FieldsV1 == nil {
			continue
		}
		raw := managed[i].FieldsV1.Raw
		if !plainFieldSet(raw) {
			return nil, nil
		}
		sets = append(sets, raw)
		managed[i].FieldsV1 = &placeholder
	}
	if len(sets) == 0 {
		return nil, nil
	}
	stand := reflect.New(v.Elem().Type())
	stand.Elem().Set(v.Elem())
	copied := stand.Interface().(runtime.Object)
	copiedAccessor, err := meta.Accessor(copied)
	if err != nil {
		return nil, nil
	}
	copiedAccessor.SetManagedFields(managed)
	return copied, sets
}

// substitute writes encoded with each field set where its placeholder
// was written, the placeholders being as many as the sets.
func substitute(w io.Writer, encoded []byte, sets [][]byte) error {
	for _, set := range sets {
		i := bytes.Index(encoded, placeholderJSON) + len(placeholderJSON) - 1
		if _, err := w.Write(encoded[:i]); err != nil {
			return err
		}
		if _, err := w.Write(set); err != nil {
			return err
		}
		encoded = encoded[i+1:]
	}
	_, err := w.Write(encoded)
	return err
}

// plainFieldSet says whether a field set is JSON the encoder would write
// as it is: objects of objects, keyed by strings (the form FieldsV1 has),
// with no space between tokens and none of what the encoder escapes for
// HTML (<, >, &, and U+2028 and U+2029, whose encodings start with 0xE2).
// Anything else is left to the encoder.
func plainFieldSet(raw []byte) bool {
	end, ok := plainObject(raw, 0, 0)
	return ok && end == len(raw)
}

const maxFieldSetDepth = 256

// plainObject reads an object of objects from raw[i:] and returns where it
// ends.
func plainObject(raw []byte, i, depth int) (int, bool) {
	if depth > maxFieldSetDepth || i >= len(raw) || raw[i] != '{' {
		return 0, false
	}
	i++
	if i < len(raw) && raw[i] == '}' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = plainString(raw, i); !ok || i >= len(raw) || raw[i] != ':' {
			return 0, false
		}
		if i, ok = plainObject(raw, i+1, depth+1); !ok || i >= len(raw) {
			return 0, false
		}
		switch raw[i] {
		case ',':
			i++
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// plainString reads a string from raw[i:] and returns where it ends.
func plainString(raw []byte, i int) (int, bool) {
	if i >= len(raw) || raw[i] != '"' {
		return 0, false
	}
	for i++; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20, c == '<', c == '>', c == '&', c == 0xE2:
			return 0, false
		case c == '\\':
			i++
			if i >= len(raw) {
				return 0, false
			}
			switch raw[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(raw) || !isHex(raw[i+1]) || !isHex(raw[i+2]) || !isHex(raw[i+3]) || !isHex(raw[i+4]) {
					return 0, false
				}
				i += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
