package pebble

import (
	"context"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kapi-dev/kapi/internal/storage"
)

// compactBatch bounds the deletions one compaction batch holds; a batch
// only ever ends between keys. (Store.compactBatch holds it, so that tests
// can get several batches from few keys.)
const compactBatch = 4096

// Compact implements storage.Store. After Compact(rev), reads at revisions
// below rev fail and watches must start at rev-1 or later. For each key it
// keeps every version from rev on and the newest older version (unless that
// is a deletion), which is what reads at rev and the events of revisions
// from rev on need.
//
// A compaction that is interrupted (a shutdown, a crash) leaves every key
// either untouched or fully compacted, since each key's deletions commit
// together; the store finishes it when it next opens. Its batches are
// synced like every other commit (see Store.commit): a log error then fails
// the compaction and the store instead of crashing Pebble's next commit.
func (s *Store) Compact(ctx context.Context, rev int64) error {
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	if rev > s.revision.Load() {
		return storage.ErrFutureRevision
	}
	if rev <= s.compacted.Load() {
		return nil
	}
	if err := s.failure(); err != nil {
		return err
	}
	// Refuse reads below rev before removing anything they could need.
	s.compacted.Store(rev)
	if err := s.commit(func() error { return s.db.Set(metaCompacted, encodeRevision(rev), pebble.Sync) }); err != nil {
		return err
	}
	return s.finishCompaction(ctx, rev)
}

// finishCompaction removes what compaction to rev makes unreadable and then
// records that it is done; c.compactMu is held.
func (s *Store) finishCompaction(ctx context.Context, rev int64) error {
	if err := s.compactVersions(ctx, rev); err != nil {
		return err
	}
	if err := s.commit(func() error { return s.db.DeleteRange(logKey(0), logKey(rev), pebble.Sync) }); err != nil {
		return err
	}
	return s.commit(func() error { return s.db.Set(metaCompactionDone, encodeRevision(rev), pebble.Sync) })
}

// resumeCompaction finishes a compaction a previous process began.
func (s *Store) resumeCompaction() error {
	done, err := s.readMeta(metaCompactionDone)
	if err != nil {
		return err
	}
	if rev := s.compacted.Load(); done < rev {
		s.compactMu.Lock()
		defer s.compactMu.Unlock()
		return s.finishCompaction(context.Background(), rev)
	}
	return nil
}

// compactVersions deletes the versions no read at or after rev can see,
// one key at a time: a key's deletions always share a batch.
func (s *Store) compactVersions(ctx context.Context, rev int64) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixVersion}, UpperBound: []byte{prefixVersion + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	batch := s.db.NewBatch()
	defer func() { batch.Close() }()

	var lastKey []byte
	keptOlder := false // whether lastKey's newest version below rev was seen
	for valid := it.First(); valid; valid = it.Next() {
		userKey, vrev, err := parseVersionKey(it.Key())
		if err != nil {
			return err
		}
		if string(userKey) != string(lastKey) {
			// A new key: the previous key's deletions are all in the batch.
			if int(batch.Count()) >= s.compactBatch {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := s.commit(func() error { return batch.Commit(pebble.Sync) }); err != nil {
					return err
				}
				batch.Close()
				batch = s.db.NewBatch()
			}
			lastKey = append(lastKey[:0], userKey...)
			keptOlder = false
		}
		if vrev >= rev {
			continue
		}
		if !keptOlder {
			keptOlder = true
			rec, err := decodeRecord(it.Value())
			if err != nil {
				return err
			}
			if !rec.tombstone {
				continue
			}
		}
		if err := batch.Delete(it.Key(), nil); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	return s.commit(func() error { return batch.Commit(pebble.Sync) })
}
