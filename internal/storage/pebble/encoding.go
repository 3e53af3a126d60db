package pebble

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// On-disk layout. Every version of every key is kept until compaction:
//
//	'k' userKey 0x00 ^rev  -> record (one version; newest first within a key)
//	'r' rev                -> userKey (the revision log, for watch replay)
//	'm' name               -> metadata (current and compacted revision)
//
// Revisions are stored big-endian so that byte order is revision order; the
// version suffix is inverted so that seeking to (key, ^rev) lands on the
// newest version at or below rev.
const (
	prefixVersion = 'k'
	prefixLog     = 'r'
	prefixMeta    = 'm'
)

var (
	metaRevision  = []byte{prefixMeta, 'r', 'e', 'v'}
	metaCompacted = []byte{prefixMeta, 'c', 'm', 'p'}
	// metaCompactionDone is the last compaction that finished removing.
	metaCompactionDone = []byte{prefixMeta, 'c', 'd', 'n'}
)

const (
	recordPut       byte = 1
	recordTombstone byte = 2
)

var errCorrupt = errors.New("storage: corrupt record")

// record is one decoded version.
type record struct {
	tombstone      bool
	createRevision int64
	value          []byte
}

func encodeRecord(r record) []byte {
	return appendRecord(make([]byte, 0, recordSize(r)), r)
}

// recordSize is the length of r's encoding.
func recordSize(r record) int {
	var varint [binary.MaxVarintLen64]byte
	return 1 + len(binary.AppendUvarint(varint[:0], uint64(r.createRevision))) + len(r.value)
}

func appendRecord(buf []byte, r record) []byte {
	kind := recordPut
	if r.tombstone {
		kind = recordTombstone
	}
	buf = append(buf, kind)
	buf = binary.AppendUvarint(buf, uint64(r.createRevision))
	return append(buf, r.value...)
}

// decodeRecord parses b; the returned value aliases b.
func decodeRecord(b []byte) (record, error) {
	if len(b) < 2 || (b[0] != recordPut && b[0] != recordTombstone) {
		return record{}, errCorrupt
	}
	create, n := binary.Uvarint(b[1:])
	if n <= 0 || create > math.MaxInt64 {
		return record{}, errCorrupt
	}
	return record{tombstone: b[0] == recordTombstone, createRevision: int64(create), value: b[1+n:]}, nil
}

// versionPrefix is the prefix shared by every version of userKey.
func versionPrefix(userKey []byte) []byte {
	b := make([]byte, 0, len(userKey)+10)
	b = append(b, prefixVersion)
	b = append(b, userKey...)
	return append(b, 0)
}

// afterVersionsOf is the first key after every version of userKey.
func afterVersionsOf(userKey []byte) []byte {
	return append(versionPrefix(userKey)[:len(userKey)+1], 1)
}

// versionKey is the key of userKey's version written at rev.
func versionKey(userKey []byte, rev int64) []byte {
	return binary.BigEndian.AppendUint64(versionPrefix(userKey), ^uint64(rev))
}

// versionKeySize is the length of userKey's version keys.
func versionKeySize(userKey []byte) int { return len(userKey) + 10 }

func appendVersionKey(buf, userKey []byte, rev int64) []byte {
	buf = append(append(append(buf, prefixVersion), userKey...), 0)
	return binary.BigEndian.AppendUint64(buf, ^uint64(rev))
}

// parseVersionKey splits an on-disk version key.
func parseVersionKey(k []byte) (userKey []byte, rev int64, err error) {
	if len(k) < 10 || k[0] != prefixVersion || k[len(k)-9] != 0 {
		return nil, 0, fmt.Errorf("%w: bad version key %q", errCorrupt, k)
	}
	return k[1 : len(k)-9], int64(^binary.BigEndian.Uint64(k[len(k)-8:])), nil
}

func logKey(rev int64) []byte {
	return binary.BigEndian.AppendUint64([]byte{prefixLog}, uint64(rev))
}

func encodeRevision(rev int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(rev))
}

func decodeRevision(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, errCorrupt
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// prefixEnd is the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil // p is all 0xff: no upper bound
}
