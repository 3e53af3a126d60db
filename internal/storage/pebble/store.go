// Package pebble is kapi's embedded storage backend: a revisioned key-value
// store on github.com/cockroachdb/pebble. Writes are serialised by one
// goroutine that commits them in synced groups; every version is kept until
// compaction, so reads at past revisions and watch replay come from disk.
package pebble

import (
	"bytes"
	"context"
	"fmt"
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

	hub hub

	compactMu sync.Mutex // one compaction at a time
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

// OpenWith opens or creates a store in dir on opts.FS.
func OpenWith(dir string, opts Options) (*Store, error) {
	popts := &pebble.Options{Logger: quietLogger{}, FS: opts.FS}
	db, err := pebble.Open(dir, popts)
	if err != nil {
		return nil, fmt.Errorf("open storage in %s: %w", dir, err)
	}
	s := &Store{
		db:      db,
		writes:  make(chan *writeOp, maxGroup),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
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

func checkKey(key []byte) error {
	if len(key) == 0 || bytes.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("storage: invalid key %q", key)
	}
	return nil
}

// quietLogger keeps Pebble's informational messages out of kapi's log.
type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{}) {}
func (quietLogger) Errorf(format string, args ...interface{}) {
	pebble.DefaultLogger.Errorf(format, args...)
}
func (quietLogger) Fatalf(format string, args ...interface{}) {
	pebble.DefaultLogger.Fatalf(format, args...)
}
