package handlers

import (
	"bytes"
	"io"
	"net/http"
	"reflect"
	"sync"
	"time"
	"unsafe"
	"weak"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/respond"
)

// Compressing is most of what a large list costs once its items are
// encoded (gzip about two thirds of a cached JSON list of 10,000 pods).
// The items section of a list sent gzipped is kept compressed, as a
// deflate run of its own (see gzipWriter), and a later list of the same
// items in the same encoding sends that run again: only the list's
// metadata around it is compressed anew, since its resourceVersion and
// continue token change when the items do not.
//
// Items are the watch cache's objects, which are immutable: a changed
// object is a new one. So the same items are the same objects, compared
// by identity. A kept section refers to its items through weak pointers:
// it keeps no object alive (deleted ones would otherwise stay as long as
// the section), and a weak pointer to an object that is gone matches no
// object that later takes its address.

const (
	// segmentIdle is how long a section no list sent is kept.
	segmentIdle = time.Minute
	// segmentBudget bounds the compressed bytes kept; the least recently
	// sent section goes first.
	segmentBudget = 64 << 20
)

// listSegments are the compressed items sections kept.
type listSegments struct {
	mu      sync.Mutex
	entries map[segmentKey]*listSegment
	bytes   int
	sweep   *time.Timer // armed while entries are kept
	now     func() time.Time
}

// segmentKey finds the section kept for a list (by the addresses of its
// first and last items, which it does not keep alive); the list's items
// must then be the section's, one by one.
type segmentKey struct {
	store       *registry.Store
	encoder     runtime.Identifier
	first, last uintptr
	n           int
}

// keyFor returns the key of a list of items, ok false for no items or
// an item that is not a pointer (every Kubernetes object is one).
func keyFor(store *registry.Store, info runtime.SerializerInfo, items []runtime.Object) (key segmentKey, ok bool) {
	if len(items) == 0 {
		return key, false
	}
	first, ok1 := address(items[0])
	last, ok2 := address(items[len(items)-1])
	return segmentKey{
		store: store, encoder: info.Serializer.Identifier(), n: len(items),
		first: uintptr(unsafe.Pointer(first)), last: uintptr(unsafe.Pointer(last)),
	}, ok1 && ok2
}

type listSegment struct {
	items    []weak.Pointer[byte]
	deflated []byte
	run      deflated
	sent     time.Time
}

// address returns the address of the object obj points to; ok is false
// if obj is not a pointer.
func address(obj runtime.Object) (p *byte, ok bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil, false
	}
	return (*byte)(v.UnsafePointer()), true
}

// get returns the section kept for items in info's encoding, if any. It
// allocates nothing: it runs for every list a client could take gzipped.
func (s *listSegments) get(store *registry.Store, info runtime.SerializerInfo, items []runtime.Object) *listSegment {
	key, ok := keyFor(store, info, items)
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seg := s.entries[key]
	if seg == nil {
		return nil
	}
	for i, item := range items {
		if p, _ := address(item); seg.items[i].Value() != p || p == nil {
			return nil
		}
	}
	seg.sent = s.clock()
	return seg
}

// put keeps a section of items compressed as deflated, replacing any
// other kept for the same key.
func (s *listSegments) put(store *registry.Store, info runtime.SerializerInfo, items []runtime.Object, data []byte, run deflated) {
	key, ok := keyFor(store, info, items)
	if !ok || len(data) > segmentBudget/4 {
		return
	}
	seg := &listSegment{items: make([]weak.Pointer[byte], len(items)), deflated: bytes.Clone(data), run: run}
	for i, item := range items {
		p, ok := address(item)
		if !ok {
			return
		}
		seg.items[i] = weak.Make(p)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seg.sent = s.clock()
	if s.entries == nil {
		s.entries = make(map[segmentKey]*listSegment)
	}
	s.drop(key)
	for s.bytes+len(data) > segmentBudget {
		s.drop(s.leastRecent())
	}
	s.entries[key] = seg
	s.bytes += len(data)
	if s.sweep == nil {
		s.sweep = time.AfterFunc(segmentIdle, s.dropIdle)
	}
}

func (s *listSegments) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

func (s *listSegments) drop(key segmentKey) {
	if seg, ok := s.entries[key]; ok {
		s.bytes -= len(seg.deflated)
		delete(s.entries, key)
	}
}

func (s *listSegments) leastRecent() (oldest segmentKey) {
	var at time.Time
	for key, seg := range s.entries {
		if at.IsZero() || seg.sent.Before(at) {
			oldest, at = key, seg.sent
		}
	}
	return oldest
}

// dropIdle drops the sections no list sent for segmentIdle, and checks
// again while any is left.
func (s *listSegments) dropIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropSentBefore(s.clock().Add(-segmentIdle))
	if len(s.entries) == 0 {
		s.sweep = nil
		return
	}
	s.sweep.Reset(segmentIdle)
}

func (s *listSegments) dropSentBefore(t time.Time) {
	for key, seg := range s.entries {
		if seg.sent.Before(t) {
			s.drop(key)
		}
	}
}

// writeSplicedList sends a list made of its items' cached encodings (see
// spliceList). A large list for a client that accepts gzip is compressed
// in three runs, the items section on its own, taken from an earlier list
// of the same items when one kept it; keep says whether this list keeps
// its own for the next (a deletecollection's deleted items are not listed
// again).
func (a *API) writeSplicedList(w http.ResponseWriter, r *http.Request, store *registry.Store, info runtime.SerializerInfo, listMeta *metav1.ListMeta, items []runtime.Object, encs []*cache.Encodings, keep bool) {
	if prettyJSON(r, info.MediaType) {
		a.writeIndentedList(w, r, store, info, listMeta, items, encs)
		return
	}
	gzip := respond.AcceptsGzip(r)
	if gzip {
		if seg := a.segments.get(store, info, items); seg != nil {
			markRead(encs, itemEncoder(info).Identifier())
			head, tail, err := listFrame(store, info, listMeta, seg.run.size)
			if err != nil {
				writeError(w, r, apierrors.NewInternalError(err))
				return
			}
			writeGzipHeader(w, http.StatusOK, info.MediaType)
			g := newGzipWriter(w)
			g.deflate([][]byte{head}, false, nil)
			g.raw(seg.deflated, seg.run)
			g.deflate([][]byte{tail}, true, nil)
			g.close()
			return
		}
	}
	l, err := spliceList(store, info, listMeta, items, encs)
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	size := len(l.head) + l.items.size + len(l.tail)
	if !gzip || size <= respond.GzipThreshold {
		writePlain(w, http.StatusOK, info.MediaType, size, [][]byte{l.head}, l.items.parts, [][]byte{l.tail})
		return
	}
	writeGzipHeader(w, http.StatusOK, info.MediaType)
	g := newGzipWriter(w)
	g.deflate([][]byte{l.head}, false, nil)
	var kept *bytes.Buffer
	var keepTo io.Writer // nil, not a nil *bytes.Buffer, when nothing is kept
	if keep {
		kept = keepBuffers.Get().(*bytes.Buffer)
		keepTo = kept
	}
	run := g.deflate(l.items.parts, false, keepTo)
	g.deflate([][]byte{l.tail}, true, nil)
	if g.close() == nil && keep {
		a.segments.put(store, info, items, kept.Bytes(), run)
	}
	if keep {
		kept.Reset()
		keepBuffers.Put(kept)
	}
}

// markRead keeps the items' encodings as if the list had read them: while
// lists of the items go on, a change to one of them re-encodes that one
// alone.
func markRead(encs []*cache.Encodings, id runtime.Identifier) {
	for _, enc := range encs {
		enc.MarkRead(id)
	}
}

// keepBuffers collect a compressed items section before it is copied out
// at its exact size.
var keepBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeIndentedList sends a list a client asked to read indented, made of
// its items' compact encodings and indented whole (kept sections hold
// compact bytes).
func (a *API) writeIndentedList(w http.ResponseWriter, r *http.Request, store *registry.Store, info runtime.SerializerInfo, listMeta *metav1.ListMeta, items []runtime.Object, encs []*cache.Encodings) {
	l, err := spliceList(store, info, listMeta, items, encs)
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	b := &body{}
	b.add(l.head)
	b.add(l.items.parts...)
	b.add(l.tail)
	writeBody(w, r, http.StatusOK, b, info.MediaType)
}
