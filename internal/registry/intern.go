package registry

import (
	"bytes"
	"hash/maphash"
	"runtime"
	"sync"
	"unsafe"
	"weak"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fieldSets interns the bytes of managed fields' field sets. They name
// fields, not values, so every object one manager wrote the same way
// (the pods of one template, say) carries the same bytes: held once per
// object, they were an eighth of the watch cache's memory. Decoded objects
// are read-only to everyone, their managed fields included: the bytes
// they share are never written.
var fieldSets = newInternTable()

// internManagedFields makes the field sets of a decoded object's managed
// fields share the bytes of equal ones.
func internManagedFields(m metav1.Object) {
	entries := m.GetManagedFields() // a typed object's own slice
	for i := range entries {
		if f := entries[i].FieldsV1; f != nil {
			f.Raw = fieldSets.intern(f.Raw)
		}
	}
}

// minInterned is the size below which bytes are kept as they are: small
// allocations share blocks, where weak pointers and cleanups do not work
// per object, and save little.
const minInterned = 64

// internTable maps contents to the one copy in use, without keeping any
// alive: an entry goes when the last slice of its bytes does.
type internTable struct {
	seed    maphash.Seed
	mu      sync.Mutex
	entries map[uint64]internEntry
}

type internEntry struct {
	first weak.Pointer[byte]
	len   int
}

func newInternTable() *internTable {
	return &internTable{seed: maphash.MakeSeed(), entries: map[uint64]internEntry{}}
}

// intern returns bytes equal to b: an earlier copy still in use, or b,
// which later calls then share. b must not be written afterwards.
func (t *internTable) intern(b []byte) []byte {
	if len(b) < minInterned {
		return b
	}
	h := maphash.Bytes(t.seed, b)
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.entries[h]; ok {
		if first := e.first.Value(); first != nil {
			if held := unsafe.Slice(first, e.len); bytes.Equal(held, b) {
				return held
			}
			return b // another content with the same hash: not interned
		}
	}
	t.entries[h] = internEntry{first: weak.Make(&b[0]), len: len(b)}
	runtime.AddCleanup(&b[0], t.forget, h)
	return b
}

// forget drops the entry of a hash once its bytes are gone (unless it was
// taken over by other bytes since).
func (t *internTable) forget(h uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.entries[h]; ok && e.first.Value() == nil {
		delete(t.entries, h)
	}
}
