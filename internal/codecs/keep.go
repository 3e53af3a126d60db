package codecs

import (
	"bytes"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// scratch is reusable memory to encode into: a buffer, and the memory an
// encoder that sizes its message first (protobuf's) asks for.
type scratch struct {
	buf   bytes.Buffer
	alloc []byte
}

// maxScratch bounds what a pooled scratch keeps: a rare huge object's
// memory goes with it.
const maxScratch = 1 << 20

var scratches = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratches.Get().(*scratch) }

func (s *scratch) release() {
	if s.buf.Cap() > maxScratch || cap(s.alloc) > maxScratch {
		return
	}
	s.buf.Reset()
	scratches.Put(s)
}

func (s *scratch) Allocate(n uint64) []byte {
	if uint64(cap(s.alloc)) < n {
		s.alloc = make([]byte, n)
	}
	return s.alloc[:n]
}

// WithEncoding encodes obj in reused memory and hands the encoding to use,
// which must not keep it: for bytes written out at once, as a response.
func WithEncoding(e runtime.Encoder, obj runtime.Object, use func([]byte)) error {
	s := getScratch()
	defer s.release()
	var err error
	if ea, ok := e.(runtime.EncoderWithAllocator); ok {
		err = ea.EncodeWithAllocator(obj, &s.buf, s)
	} else {
		err = e.Encode(obj, &s.buf)
	}
	if err != nil {
		return err
	}
	use(s.buf.Bytes())
	return nil
}

// EncodeToKeep returns obj's encoding in memory of its own, of its size
// (protobuf's within a few bytes of its encoder's estimate), for bytes
// that are kept (stored, or cached with their object): a buffer grown by
// doubling would hold up to twice what was written. Protobuf's encoder,
// which sizes the message first, encodes straight into the returned
// memory; other encoders write into reused memory whose bytes are copied
// out once.
func EncodeToKeep(e runtime.Encoder, obj runtime.Object) ([]byte, error) {
	if ea, ok := e.(runtime.EncoderWithAllocator); ok {
		return encodeExact(ea, obj)
	}
	s := getScratch()
	defer s.release()
	if err := e.Encode(obj, &s.buf); err != nil {
		return nil, err
	}
	kept := make([]byte, s.buf.Len()) // bytes.Clone would round the capacity up
	copy(kept, s.buf.Bytes())
	return kept, nil
}

// encodeExact encodes with an encoder that asks for its buffer: the bytes
// it writes at once from that buffer are kept as they are, with no copy.
func encodeExact(e runtime.EncoderWithAllocator, obj runtime.Object) ([]byte, error) {
	var w exactWriter
	if err := e.EncodeWithAllocator(obj, &w, &w); err != nil {
		return nil, err
	}
	return w.data, nil
}

// exactWriter allocates an encoder's buffer at the size asked and keeps
// what is written: the buffer itself when the encoder writes it, from its
// start, in one write; else a copy.
type exactWriter struct {
	buf, data []byte
	copied    bool
}

func (w *exactWriter) Allocate(n uint64) []byte {
	w.buf = make([]byte, n)
	return w.buf
}

func (w *exactWriter) Write(p []byte) (int, error) {
	if w.data == nil && len(p) > 0 && len(p) <= len(w.buf) && &p[0] == &w.buf[0] {
		// The encoder sizes its buffer from an estimate, so what it
		// writes may be a few bytes shorter.
		w.data = p[:len(p):len(p)]
		return len(p), nil
	}
	if !w.copied {
		w.data, w.copied = bytes.Clone(w.data), true
	}
	w.data = append(w.data, p...)
	return len(p), nil
}
