package cache

import (
	"bytes"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// Encodings holds an immutable cached object's encoded bytes, one per
// encoder, so that a list or a watch event going to many clients is encoded
// once per media type (DESIGN, "codecs").
type Encodings struct {
	mu      sync.Mutex
	entries []encoded
}

type encoded struct {
	id   runtime.Identifier
	data []byte
	// read says whether a reader took the bytes since the last sweep.
	read bool
}

// Encode returns obj encoded by e, encoding it on first use. obj must be
// the object the Encodings belong to; the returned bytes must not be
// modified.
func (c *Encodings) Encode(e runtime.Encoder, obj runtime.Object) ([]byte, error) {
	if c == nil { // nothing keeps the bytes: no exact-size copy
		var buf bytes.Buffer
		err := e.Encode(obj, &buf)
		return buf.Bytes(), err
	}
	id := e.Identifier()
	c.mu.Lock()
	for i := range c.entries {
		if x := &c.entries[i]; x.id == id {
			x.read = true
			c.mu.Unlock()
			return x.data, nil
		}
	}
	c.mu.Unlock()
	data, err := encodeToKeep(e, obj)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.entries = append(c.entries, encoded{id: id, data: data, read: true})
	c.mu.Unlock()
	return data, nil
}

// MarkRead records a reader of the encoding by the encoder id, if one is
// kept, as Encode does: a list sent from its compressed section (package
// handlers) reads no item's bytes, yet its items' encodings are what the
// next list will need if an item changes.
func (c *Encodings) MarkRead(id runtime.Identifier) {
	if c == nil {
		return
	}
	c.mu.Lock()
	for i := range c.entries {
		if x := &c.entries[i]; x.id == id {
			x.read = true
		}
	}
	c.mu.Unlock()
}

// dropUnread drops the encodings no reader took since the last call, and
// returns the bytes dropped.
func (c *Encodings) dropUnread() (dropped int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.entries[:0]
	for _, x := range c.entries {
		if x.read {
			x.read = false
			kept = append(kept, x)
		} else {
			dropped += len(x.data)
		}
	}
	clear(c.entries[len(kept):]) // the dropped bytes go
	c.entries = kept
	if len(kept) == 0 {
		c.entries = nil
	}
	return dropped
}

// encodeBuffers are where objects whose encodings are kept are encoded
// before their bytes are copied out at their exact size: a buffer grown by
// doubling holds up to twice what it was written, and cached encodings
// live as long as their object.
var encodeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func encodeToKeep(e runtime.Encoder, obj runtime.Object) ([]byte, error) {
	if ea, ok := e.(runtime.EncoderWithAllocator); ok {
		return encodeExact(ea, obj)
	}
	buf := encodeBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 1<<20 { // a rare huge object's buffer is not kept
			buf.Reset()
			encodeBuffers.Put(buf)
		}
	}()
	if err := e.Encode(obj, buf); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil
}

// encodeExact encodes with an encoder that asks for its buffer (protobuf's,
// which sizes the message first): the bytes it writes at once from that
// buffer are kept as they are, with no copy.
func encodeExact(e runtime.EncoderWithAllocator, obj runtime.Object) ([]byte, error) {
	var w exactWriter
	if err := e.EncodeWithAllocator(obj, &w, &w); err != nil {
		return nil, err
	}
	return w.data, nil
}

// exactWriter allocates an encoder's buffer at the size asked and keeps
// what is written: the buffer itself when the encoder writes it whole in
// one write, else a copy.
type exactWriter struct {
	buf, data []byte
	copied    bool
}

func (w *exactWriter) Allocate(n uint64) []byte {
	w.buf = make([]byte, n)
	return w.buf
}

func (w *exactWriter) Write(p []byte) (int, error) {
	if w.data == nil && len(p) > 0 && len(p) == len(w.buf) && &p[0] == &w.buf[0] {
		w.data = p
		return len(p), nil
	}
	if !w.copied {
		w.data, w.copied = bytes.Clone(w.data), true
	}
	w.data = append(w.data, p...)
	return len(p), nil
}
