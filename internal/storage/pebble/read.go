package pebble

import (
	"bytes"
	"context"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kapi-dev/kapi/internal/storage"
)

// readRevision resolves the revision a read asks for and checks that it is
// still held: 0 means the current revision.
func (s *Store) readRevision(rev int64) (int64, error) {
	current := s.revision.Load()
	if rev == 0 {
		rev = current
	}
	if rev > current {
		return 0, storage.ErrFutureRevision
	}
	if rev < s.compacted.Load() {
		return 0, storage.ErrCompacted
	}
	return rev, nil
}

// Get implements storage.Store.
func (s *Store) Get(ctx context.Context, key []byte, rev int64) (*storage.KeyValue, int64, error) {
	if err := checkKey(key); err != nil {
		return nil, 0, err
	}
	rev, err := s.readRevision(rev)
	if err != nil {
		return nil, 0, err
	}
	kv, err := versionAt(s.db, key, rev)
	if err == nil && rev < s.compacted.Load() {
		err = storage.ErrCompacted // compaction overtook the read
	}
	if err != nil {
		return nil, rev, err
	}
	if kv == nil {
		return nil, rev, storage.ErrNotFound
	}
	return kv, rev, nil
}

// versionAt reads the newest live version of key at or below rev; nil when
// the key does not exist at rev.
func versionAt(r pebble.Reader, key []byte, rev int64) (*storage.KeyValue, error) {
	prefix := versionPrefix(key)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	if !it.SeekGE(versionKey(key, rev)) {
		return nil, it.Error()
	}
	_, modRev, err := parseVersionKey(it.Key())
	if err != nil {
		return nil, err
	}
	rec, err := decodeRecord(it.Value())
	if err != nil || rec.tombstone {
		return nil, err
	}
	return &storage.KeyValue{
		Key:            append([]byte(nil), key...),
		Value:          append([]byte(nil), rec.value...),
		CreateRevision: rec.createRevision,
		ModRevision:    modRev,
	}, nil
}

// Range implements storage.Store.
func (s *Store) Range(ctx context.Context, opts storage.RangeOptions) (*storage.RangeResult, error) {
	rev, err := s.readRevision(opts.Revision)
	if err != nil {
		return nil, err
	}
	start := opts.Start
	if start == nil || bytes.Compare(start, opts.Prefix) < 0 {
		start = opts.Prefix
	}
	if !bytes.HasPrefix(start, opts.Prefix) {
		return &storage.RangeResult{Revision: rev}, nil
	}
	lower := append([]byte{prefixVersion}, start...)
	upper := prefixEnd(append([]byte{prefixVersion}, opts.Prefix...))
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	// The iterator is a snapshot; a compaction that began before it was
	// taken may already have removed versions this read needs.
	if rev < s.compacted.Load() {
		return nil, storage.ErrCompacted
	}

	res := &storage.RangeResult{Revision: rev}
	valid := it.First()
	for valid {
		userKey, _, err := parseVersionKey(it.Key())
		if err != nil {
			return nil, err
		}
		userKey = append([]byte(nil), userKey...)
		if bytes.Compare(userKey, start) < 0 {
			// start is userKey and a zero byte: its versions' keys sort
			// before the lower bound in the key encoding, userKey's after.
			valid = it.SeekGE(afterVersionsOf(userKey))
			continue
		}
		if !it.SeekGE(versionKey(userKey, rev)) {
			break
		}
		found, modRev, err := parseVersionKey(it.Key())
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(found, userKey) {
			continue // every version of userKey is newer than rev
		}
		rec, err := decodeRecord(it.Value())
		if err != nil {
			return nil, err
		}
		if !rec.tombstone {
			if opts.Limit > 0 && len(res.KVs) >= opts.Limit {
				res.More = true
				if !opts.Count {
					break
				}
			} else {
				res.KVs = append(res.KVs, storage.KeyValue{
					Key:            userKey,
					Value:          append([]byte(nil), rec.value...),
					CreateRevision: rec.createRevision,
					ModRevision:    modRev,
				})
			}
			res.Count++
		}
		valid = it.SeekGE(afterVersionsOf(userKey))
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	if !opts.Count {
		res.Count = 0
	}
	return res, nil
}
