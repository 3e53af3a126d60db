// Package share makes the equal parts of read-only objects one value.
//
// The pods of one ReplicaSet carry the same labels, containers, volumes,
// tolerations and node selector, and every version of an object carries
// most of the version before. Decoded, each object holds its own copy of
// every part. A Table remembers, for each kind of sibling (the objects of
// one controller, or else of one set of labels in a namespace), the last
// object it was given, and makes every part of the next sibling that is
// equal to the part in the same place of that object the very same
// string, slice, map or pointed-to struct. Comparing with one sibling
// costs one walk over the object: no table of all parts, no hashing.
//
// Sharing is safe only because the objects are read only from the moment
// they are given: the watch cache's objects are never written by anyone
// (informers, admission and the controllers copy an object before they
// change it), and a shared slice is given no spare capacity, so that even
// an append to it makes a copy.
package share

import (
	"hash/maphash"
	"reflect"
	"sync"
	"unsafe"
	"weak"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxSiblings bounds the kinds of sibling a table remembers an object
// for. Past it the table forgets the objects gone, and if none is, all.
const maxSiblings = 4096

// A Table shares the equal parts of sibling objects given to it. It is
// safe for concurrent use, but an object must be fully prepared (encoded
// once, so that the lazily filled caches of its parts are filled) before
// the next is given: a later object may share its parts from then on.
// The watch cache gives a table the objects of one resource, one at a
// time.
type Table struct {
	mu   sync.Mutex
	seed maphash.Seed
	last map[uint64]sibling
}

// sibling is the last object given of a kind of sibling, held weakly: a
// table keeps no object alive.
type sibling struct {
	typ reflect.Type
	obj weak.Pointer[byte]
}

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{seed: maphash.MakeSeed(), last: map[uint64]sibling{}}
}

// Parts makes the parts of obj (a pointer to a Kubernetes object) that
// are equal to the parts in the same place of its last sibling given
// before the very parts of that sibling, and remembers obj as the last of
// its siblings. obj must be read only from then on.
func (t *Table) Parts(obj any) {
	v := reflect.ValueOf(obj)
	m, ok := obj.(metav1.Object)
	if !ok || v.Kind() != reflect.Pointer || v.IsNil() || v.Type().Elem().Size() == 0 {
		return
	}
	key := t.siblingKey(m)
	t.mu.Lock()
	defer t.mu.Unlock()
	if last, ok := t.last[key]; ok && last.typ == v.Type() {
		if p := last.obj.Value(); p != nil {
			shareEqual(v.Elem(), reflect.NewAt(last.typ.Elem(), unsafe.Pointer(p)).Elem())
		}
	}
	t.remember(key, v)
}

func (t *Table) remember(key uint64, v reflect.Value) {
	if _, ok := t.last[key]; !ok && len(t.last) >= maxSiblings {
		for k, s := range t.last {
			if s.obj.Value() == nil {
				delete(t.last, k)
			}
		}
		if len(t.last) >= maxSiblings {
			clear(t.last)
		}
	}
	t.last[key] = sibling{typ: v.Type(), obj: weak.Make((*byte)(v.UnsafePointer()))}
}

// siblingKey names the objects likely to be alike: those of one
// controller (the pods of a ReplicaSet, the ReplicaSets of a Deployment),
// or else those of one namespace with the same labels.
func (t *Table) siblingKey(m metav1.Object) uint64 {
	if owner := metav1.GetControllerOfNoCopy(m); owner != nil {
		return maphash.String(t.seed, string(owner.UID))
	}
	key := maphash.String(t.seed, m.GetNamespace())
	for k, v := range m.GetLabels() { // in any order: the entries' hashes add up
		key += maphash.String(t.seed, k) ^ maphash.String(t.seed, v)<<1
	}
	return key
}

// shareEqual makes the parts of a that are deeply equal to the parts of b
// in the same place b's, wherever a can be set, and reports whether a and
// b are deeply equal. Unexported fields and map values are compared but
// not set.
func shareEqual(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.String:
		s := b.String()
		if a.String() != s {
			return false
		}
		if a.CanSet() {
			a.SetString(s)
		}
		return true
	case reflect.Struct:
		equal := true
		for i := range a.NumField() {
			// every field, after a first difference too: its other parts
			// may still be shared
			if !shareEqual(a.Field(i), b.Field(i)) {
				equal = false
			}
		}
		return equal
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() || a.Pointer() == b.Pointer() {
			return a.Pointer() == b.Pointer()
		}
		return setIfEqual(a, b, shareEqual(a.Elem(), b.Elem()))
	case reflect.Slice:
		return shareEqualSlices(a, b)
	case reflect.Map:
		return setIfEqual(a, b, equalMaps(a, b))
	case reflect.Array:
		equal := true
		for i := range a.Len() {
			if !shareEqual(a.Index(i), b.Index(i)) {
				equal = false
			}
		}
		return equal
	case reflect.Interface:
		return a.IsNil() && b.IsNil() // what an interface holds is not looked into
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	}
	return false // channels, functions, complex numbers: never in an API object
}

func shareEqualSlices(a, b reflect.Value) bool {
	n := a.Len()
	if a.IsNil() != b.IsNil() || n != b.Len() {
		return false
	}
	if n == 0 || a.Pointer() == b.Pointer() {
		return true
	}
	if a.Type().Elem().Kind() == reflect.Uint8 {
		return setIfEqual(a, b, string(a.Bytes()) == string(b.Bytes()))
	}
	equal := true
	for i := range n {
		if !shareEqual(a.Index(i), b.Index(i)) {
			equal = false
		}
	}
	return setIfEqual(a, b, equal)
}

// setIfEqual makes a (a pointer, slice or map) b if they are equal and a
// can be set; a slice without spare capacity.
func setIfEqual(a, b reflect.Value, equal bool) bool {
	if !equal || !a.CanSet() {
		return equal
	}
	if b.Kind() == reflect.Slice {
		b = b.Slice3(0, b.Len(), b.Len())
	}
	a.Set(b)
	return true
}

// equalMaps compares two maps' entries deeply.
func equalMaps(a, b reflect.Value) bool {
	if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
		return false
	}
	if a.Len() == 0 || a.Pointer() == b.Pointer() {
		return true
	}
	if !a.CanInterface() { // in an unexported field: compared the slow way
		for it := a.MapRange(); it.Next(); {
			bv := b.MapIndex(it.Key())
			if !bv.IsValid() || !shareEqual(it.Value(), bv) {
				return false
			}
		}
		return true
	}
	if am, ok := a.Interface().(map[string]string); ok { // labels, annotations, selectors, data
		bm := b.Interface().(map[string]string)
		for k, av := range am {
			if bv, ok := bm[k]; !ok || av != bv {
				return false
			}
		}
		return true
	}
	key, av := reflect.New(a.Type().Key()).Elem(), reflect.New(a.Type().Elem()).Elem()
	for it := a.MapRange(); it.Next(); {
		key.SetIterKey(it)
		bv := b.MapIndex(key)
		if !bv.IsValid() {
			return false
		}
		av.SetIterValue(it)
		if !shareEqual(av, bv) { // av is the table's own copy: sets in it go nowhere
			return false
		}
	}
	return true
}
