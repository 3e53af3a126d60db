// Package pebble is kapi's embedded storage backend: a revisioned key-value
// store on github.com/cockroachdb/pebble. Writes are serialised by one
// goroutine that commits them in synced groups (a server's start syncs
// once, see DeferSyncs); every version is kept until compaction, so reads
// at past revisions and watch replay come from disk.
//
// When a commit fails (Pebble could not write or sync its log) the store
// stops taking writes: the failed group may or may not be in the database,
// so its revisions cannot be handed out again. Every later write and
// compaction fails with an error wrapping storage.ErrFailed until the store
// is reopened, which recovers whatever reached the disk. Reads and watches
// go on at the last committed revision, which no longer moves.
package pebble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kapi-dev/kapi/internal/storage"
)

// Store implements storage.Store on a Pebble database.
type Store struct {
	db *pebble.DB

	// revision is the last committed revision; compacted the last compaction.
	revision  atomic.Int64
	compacted atomic.Int64

	writes  chan *writeOp
	stop    chan struct{}
	stopped chan struct{}
	closing sync.Once

	hub      hub
	watching sync.WaitGroup // running watch goroutines

	compactMu    sync.Mutex // one compaction at a time
	compactBatch int        // see compactBatch

	// commitMu makes commits one at a time; see commit.
	commitMu sync.Mutex
	// unsynced is set while writes skip syncing the log (read and
	// changed under commitMu); see DeferSyncs.
	unsynced bool
	// failed is set, once, when a commit fails; see fail.
	failed atomic.Pointer[error]
	// live is the writer's; see liveRevisions.
	live liveRevisions
}

var _ storage.Store = (*Store)(nil)

// Options configure a store.
type Options struct {
	// FS is the filesystem the database lives on; nil means the
	// operating system's. Tests pass Pebble's in-memory, crash-simulating
	// or error-injecting filesystems.
	FS vfs.FS
}

// Open opens or creates a store in dir on disk.
func Open(dir string) (*Store, error) { return OpenWith(dir, Options{}) }

// OpenInMemory opens an empty store that lives in memory only: what an
// in-process test server needs. Everything is lost on Close.
func OpenInMemory() (*Store, error) { return OpenWith("db", Options{FS: vfs.NewMem()}) }

// OnDisk is the storage.Opener of the store in dir on the operating
// system's filesystem.
func OnDisk(dir string) storage.Opener {
	return func() (storage.Store, error) {
		s, err := Open(dir)
		if err != nil {
			return nil, err // not a nil *Store in a non-nil interface
		}
		return s, nil
	}
}

// InMemory is the storage.Opener of in-memory stores: each call opens a
// new, empty one, see OpenInMemory.
func InMemory() storage.Opener {
	return func() (storage.Store, error) {
		s, err := OpenInMemory()
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// OpenWith opens or creates a store in dir on opts.FS.
func OpenWith(dir string, opts Options) (*Store, error) {
	popts := &pebble.Options{Logger: quietLogger{}, FS: opts.FS}
	db, err := pebble.Open(dir, popts)
	if err != nil {
		return nil, fmt.Errorf("open storage in %s: %w", dir, err)
	}
	s := &Store{
		db:           db,
		writes:       make(chan *writeOp, maxGroup),
		stop:         make(chan struct{}),
		stopped:      make(chan struct{}),
		compactBatch: compactBatch,
	}
	s.hub.init()
	for _, m := range []struct {
		key []byte
		dst *atomic.Int64
	}{{metaRevision, &s.revision}, {metaCompacted, &s.compacted}} {
		rev, err := s.readMeta(m.key)
		if err != nil {
			db.Close()
			return nil, err
		}
		m.dst.Store(rev)
	}
	if err := s.resumeCompaction(); err != nil {
		db.Close()
		return nil, err
	}
	go s.writeLoop()
	return s, nil
}

func (s *Store) readMeta(key []byte) (int64, error) {
	v, closer, err := s.db.Get(key)
	if err == pebble.ErrNotFound {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	return decodeRevision(v)
}

// Close stops the writer, ends every watch and closes the database.
func (s *Store) Close() error {
	var err error
	s.closing.Do(func() {
		close(s.stop)
		<-s.stopped
		s.hub.closeAll()
		// A watch replaying history holds a snapshot and an iterator;
		// closing the database under them would use freed memory.
		s.watching.Wait()
		s.compactMu.Lock()
		defer s.compactMu.Unlock()
		err = s.db.Close()
	})
	return err
}

// CurrentRevision implements storage.Store.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	return s.revision.Load(), nil
}

// CompactedRevision implements storage.Store.
func (s *Store) CompactedRevision() int64 { return s.compacted.Load() }

// SizeBytes is the space the database takes on its filesystem.
func (s *Store) SizeBytes() int64 { return int64(s.db.Metrics().DiskSpaceUsage()) }

func checkKey(key []byte) error {
	if len(key) == 0 || bytes.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("storage: invalid key %q", key)
	}
	return nil
}

// fail records that a commit failed with cause: from now on every write
// fails with the returned error, which wraps storage.ErrFailed and the
// first cause.
func (s *Store) fail(cause error) error {
	err := fmt.Errorf("%w: %w", storage.ErrFailed, cause)
	s.failed.CompareAndSwap(nil, &err)
	return s.failure()
}

// Healthy returns the error the store failed with (wrapping
// storage.ErrFailed), nil while it takes writes.
func (s *Store) Healthy() error { return s.failure() }

// failure is the error the store failed with, nil while it is healthy.
func (s *Store) failure() error {
	if p := s.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// DeferSyncs makes writes commit without syncing Pebble's log until the
// returned function syncs it once, for everything written so far, and
// makes later writes synced again. It is for a server's start: nothing
// outside the process sees those writes before it serves, and a crash
// before then loses only what the next start writes again, while each
// of a first start's few hundred writes would otherwise wait for a sync
// every few commits (a fifth of the start).
//
// While syncs are deferred, a failed log write is reported by the next
// commit, inside Pebble under its commit lock (see commit): the process
// ends instead of the store failing.
func (s *Store) DeferSyncs() (end func() error) {
	s.commitMu.Lock()
	s.unsynced = true
	s.commitMu.Unlock()
	return func() error {
		return s.commit(func() error {
			s.unsynced = false
			return s.db.LogData(nil, pebble.Sync)
		})
	}
}

// logSync is how a write commits: synced unless DeferSyncs says not yet.
// Called under commitMu.
func (s *Store) logSync() *pebble.WriteOptions {
	if s.unsynced {
		return pebble.NoSync
	}
	return pebble.Sync
}

// commit runs a synced write to the database (a batch commit, Set,
// DeleteRange) and returns its error, including a failed commit: Pebble
// reports that to its logger's Fatalf, which quietLogger turns into a
// commitFailure panic for this to recover. Any error fails the store, since
// the write may be applied in memory, or on disk at the next open.
//
// Every write goes through here, synced (but see DeferSyncs) and one at a
// time, and none starts once the store has failed. That keeps Pebble's
// log from meeting a write after an error it has not yet reported to
// anyone: Pebble panics then, holding its commit lock, which no recover
// could undo. (An unsynced commit returns before its log write fails, and
// concurrent commits can queue behind one whose write fails.)
func (s *Store) commit(write func() error) (err error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(*commitFailure)
			if !ok {
				panic(r)
			}
			err = f.err
		}
		if err != nil {
			err = s.fail(err)
		}
	}()
	if err := s.failure(); err != nil {
		return err
	}
	return write()
}

// commitFailure is what quietLogger panics with when Pebble reports a failed
// commit. Pebble does so in the committing goroutine, once the commit
// pipeline has let go of its locks, so recovering leaves the database
// usable for reads and for Close.
type commitFailure struct{ err error }

// fatalCommitPrefix starts the message of Pebble's Fatalf for a failed
// commit (DB.Apply in pebble/v2 db.go).
const fatalCommitPrefix = "pebble: fatal commit error"

// quietLogger keeps Pebble's informational messages out of kapi's log,
// writes its errors there (slog's default logger, which the kapi binary
// sets), and turns a failed commit into an error for Store.commit instead
// of an exit.
type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{}) {}
func (quietLogger) Errorf(format string, args ...interface{}) {
	slog.Error("storage error", "err", fmt.Sprintf(format, args...))
}
func (quietLogger) Fatalf(format string, args ...interface{}) {
	if strings.HasPrefix(format, fatalCommitPrefix) {
		cause := errors.New("commit failed")
		for _, a := range args {
			if err, ok := a.(error); ok {
				cause = err
				break
			}
		}
		panic(&commitFailure{err: fmt.Errorf("pebble: commit: %w", cause)})
	}
	slog.Error("fatal storage error", "err", fmt.Sprintf(format, args...))
	os.Exit(1)
}
