// Package storage defines the revisioned key-value interface every kapi
// backend implements: the etcd v3 model of one global, strictly increasing
// revision, guarded writes, reads at past revisions, watch from a revision and
// compaction. It knows nothing about Kubernetes objects; values are opaque.
//
// # Choosing a backend
//
// A server picks its backend as an Opener: a function that opens the store
// when the server starts. The concrete Openers live in the backend packages
// (pebble.OnDisk(dir) keeps data on disk, pebble.InMemory() in memory until
// the store is closed), not here: a backend imports this package for the
// interface, so this package cannot import a backend without an import
// cycle. A server therefore imports only the backend package that provides
// its Openers, and everything after opening goes through Store.
package storage

import (
	"context"
	"errors"
)

// Opener opens a store: the choice of backend and of where its data lives,
// made once and carried to whatever starts the server. Each call opens the
// store anew; the caller closes what it returns.
type Opener func() (Store, error)

// KeyValue is one version of a key.
type KeyValue struct {
	Key   []byte
	Value []byte
	// CreateRevision is the revision at which the key was last created.
	CreateRevision int64
	// ModRevision is the revision that wrote this version.
	ModRevision int64
}

// EventType says what a committed write did to a key.
type EventType int

const (
	// EventPut is a create or an update; Event.IsCreate tells which.
	EventPut EventType = iota + 1
	// EventDelete removes a key; Event.KV.Value holds the value it had.
	EventDelete
	// EventProgress carries no write: it tells that every event up to
	// KV.ModRevision has been delivered. It answers RequestProgress.
	EventProgress
)

func (t EventType) String() string {
	switch t {
	case EventPut:
		return "PUT"
	case EventDelete:
		return "DELETE"
	case EventProgress:
		return "PROGRESS"
	}
	return "UNKNOWN"
}

// Event is one committed write, as a watcher sees it.
type Event struct {
	Type EventType
	// KV is the new version for a put. For a delete, Key and Value are the
	// deleted version's, CreateRevision is its creation revision and
	// ModRevision is the revision of the delete.
	KV KeyValue
}

// IsCreate reports whether a put created the key.
func (e Event) IsCreate() bool {
	return e.Type == EventPut && e.KV.CreateRevision == e.KV.ModRevision
}

// RangeOptions selects keys for Range.
type RangeOptions struct {
	// Prefix restricts the range to keys with this prefix.
	Prefix []byte
	// Start, if set, is the first key considered (inclusive); it must have
	// Prefix as prefix.
	Start []byte
	// Limit bounds the number of keys returned; 0 means no limit.
	Limit int
	// Revision is the revision to read at; 0 means the current revision.
	Revision int64
	// Count asks for the total number of keys in the range from Start.
	Count bool
}

// RangeResult is the answer to Range.
type RangeResult struct {
	KVs []KeyValue
	// More is true when Limit cut the result short.
	More bool
	// Count is the number of keys from Start to the end of the prefix,
	// including those returned, when RangeOptions.Count was set.
	Count int64
	// Revision is the revision the range was read at.
	Revision int64
}

// Store is a revisioned key-value store. Implementations are safe for
// concurrent use, and every write they acknowledge is durable.
type Store interface {
	// Get reads key at rev (0 for the current revision). It returns
	// ErrNotFound when the key does not exist at that revision, together
	// with the revision read at.
	Get(ctx context.Context, key []byte, rev int64) (*KeyValue, int64, error)
	// Range reads keys at a revision.
	Range(ctx context.Context, opts RangeOptions) (*RangeResult, error)
	// Create writes key if it does not exist, else ErrKeyExists.
	Create(ctx context.Context, key, value []byte) (int64, error)
	// Update writes key if its current ModRevision equals expectedRev. It
	// returns ErrNotFound if the key does not exist and ErrConflict if it
	// changed.
	Update(ctx context.Context, key, value []byte, expectedRev int64) (int64, error)
	// Delete removes key if its current ModRevision equals expectedRev
	// (any revision when expectedRev is 0), returning the revision of the
	// delete and the deleted version.
	Delete(ctx context.Context, key []byte, expectedRev int64) (int64, *KeyValue, error)
	// Watch streams every write to keys with prefix after fromRev (so the
	// first event has a revision > fromRev); pass CurrentRevision to see
	// only new writes. A fromRev ahead of the store waits for it. The
	// channel closes when ctx ends or the watch fails; Watcher.Err says why.
	Watch(ctx context.Context, prefix []byte, fromRev int64) (Watcher, error)
	// CurrentRevision is the revision of the last committed write.
	CurrentRevision(ctx context.Context) (int64, error)
	// Compact discards history before rev: reads at older revisions and
	// watches from them fail with ErrCompacted afterwards.
	Compact(ctx context.Context, rev int64) error
	// CompactedRevision is the revision of the last compaction (0 if none).
	CompactedRevision() int64
	// Close releases the store; pending watches end.
	Close() error
}

// Watcher is one running watch.
type Watcher interface {
	// Events delivers events in revision order; it is closed when the
	// watch ends.
	Events() <-chan Event
	// Err tells why Events was closed: nil after the context ended or the
	// store closed, ErrCompacted, ErrWatcherTooSlow or an I/O error.
	Err() error
	// RequestProgress asks for an EventProgress at a revision at least as
	// new as the store's current revision at the time of the call, sent
	// once every event up to it has been delivered. A consumer uses it to
	// learn that it is up to date when no write concerns its prefix.
	RequestProgress()
}

// MaxRequestBytes bounds a write's key and value, as etcd's default
// --max-request-bytes bounds its requests: every store refuses a larger
// one (ErrRequestTooLarge), so that an object kube-apiserver over etcd
// could not store cannot be stored here either.
const MaxRequestBytes = 1536 << 10

var (
	// ErrNotFound means the key does not exist.
	ErrNotFound = errors.New("storage: key not found")
	// ErrKeyExists means a create found the key already present.
	ErrKeyExists = errors.New("storage: key exists")
	// ErrConflict means a guarded write found a different ModRevision.
	ErrConflict = errors.New("storage: revision conflict")
	// ErrCompacted means the requested revision has been compacted away.
	ErrCompacted = errors.New("storage: revision compacted")
	// ErrFutureRevision means the requested revision has not been written.
	ErrFutureRevision = errors.New("storage: revision not yet written")
	// ErrWatcherTooSlow means a watcher fell too far behind and was ended.
	ErrWatcherTooSlow = errors.New("storage: watcher too slow")
	// ErrClosed means the store has been closed.
	ErrClosed = errors.New("storage: closed")
	// ErrRequestTooLarge means a write's key and value together are
	// larger than MaxRequestBytes. Its text is etcd's, which
	// kube-apiserver answers with as it is (a 500 without a reason).
	ErrRequestTooLarge = errors.New("etcdserver: request is too large")
	// ErrFailed means the store could not make a write durable (an I/O
	// error, a full disk) and takes no more writes until it is reopened.
	// The write that met the failure may or may not have been applied;
	// reopening the store tells. Reads and watches go on at the last
	// revision committed before the failure.
	ErrFailed = errors.New("storage: failed, reopen the store")
)
