package cache

import (
	"bytes"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/codecs"
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
	if data, ok := c.take(id); ok {
		return data, nil
	}
	data, err := codecs.EncodeToKeep(e, obj)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Readers that raced here each encoded the object: the first one's
	// bytes are kept, once.
	if kept, ok := c.takeLocked(id); ok {
		return kept, nil
	}
	c.entries = append(c.entries, encoded{id: id, data: data, read: true})
	return data, nil
}

// take returns the kept encoding by the encoder id, marking it read.
func (c *Encodings) take(id runtime.Identifier) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.takeLocked(id)
}

func (c *Encodings) takeLocked(id runtime.Identifier) ([]byte, bool) {
	for i := range c.entries {
		if x := &c.entries[i]; x.id == id {
			x.read = true
			return x.data, true
		}
	}
	return nil, false
}

// MarkRead records a reader of the encoding by the encoder id, if one is
// kept, as Encode does: a list sent from its compressed section (package
// handlers) reads no item's bytes, yet its items' encodings are what the
// next list will need if an item changes.
func (c *Encodings) MarkRead(id runtime.Identifier) {
	if c == nil {
		return
	}
	c.take(id)
}

// size returns the bytes of the encodings kept.
func (c *Encodings) size() (n int) {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, x := range c.entries {
		n += len(x.data)
	}
	return n
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
