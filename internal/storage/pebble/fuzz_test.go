package pebble

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte{}, false, int64(0), []byte{})
	f.Add([]byte{recordPut, 0}, false, int64(1), []byte("value"))
	f.Add([]byte{recordTombstone, 5}, true, int64(5), []byte(nil))
	f.Add([]byte{recordPut, 0x80}, false, int64(math.MaxInt64), []byte{0, 0xff})
	f.Add([]byte{recordPut, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, false, int64(-1), []byte("x"))
	f.Add(encodeRecord(record{createRevision: 300, value: []byte(`{"kind":"Pod"}`)}), true, int64(1<<40), []byte(`{}`))
	f.Fuzz(func(t *testing.T, raw []byte, tombstone bool, createRev int64, value []byte) {
		// Arbitrary bytes: never a panic, and a success is self-consistent.
		rec, err := decodeRecord(raw)
		if err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("decodeRecord(%x) = %v, want errCorrupt", raw, err)
			}
		} else {
			if rec.createRevision < 0 {
				t.Fatalf("decodeRecord(%x) gave create revision %d", raw, rec.createRevision)
			}
			if rec.tombstone != (raw[0] == recordTombstone) {
				t.Fatalf("decodeRecord(%x) tombstone = %v", raw, rec.tombstone)
			}
			if !bytes.HasSuffix(raw, rec.value) {
				t.Fatalf("decodeRecord(%x) value %x is not the tail of the input", raw, rec.value)
			}
			// Re-encoding gives the canonical form, which decodes the same.
			again, err := decodeRecord(encodeRecord(rec))
			if err != nil || again.tombstone != rec.tombstone || again.createRevision != rec.createRevision || !bytes.Equal(again.value, rec.value) {
				t.Fatalf("decode(encode(decode(%x))) = %+v, %v; want %+v", raw, again, err, rec)
			}
		}

		// encode → decode round-trips every record with a valid (non-negative)
		// create revision.
		in := record{tombstone: tombstone, createRevision: createRev, value: value}
		enc := encodeRecord(in)
		if len(enc) != recordSize(in) { // the commit encodes into memory of this size
			t.Fatalf("encodeRecord(%+v) is %d bytes, recordSize says %d", in, len(enc), recordSize(in))
		}
		out, err := decodeRecord(enc)
		if createRev < 0 {
			if err == nil {
				t.Fatalf("record with create revision %d decoded as %+v", createRev, out)
			}
			return
		}
		if err != nil {
			t.Fatalf("decodeRecord(encodeRecord(%+v)) failed: %v", in, err)
		}
		if out.tombstone != in.tombstone || out.createRevision != in.createRevision || !bytes.Equal(out.value, in.value) {
			t.Fatalf("round trip of %+v gave %+v", in, out)
		}
	})
}

func FuzzParseVersionKey(f *testing.F) {
	f.Add([]byte{}, []byte("/registry/pods/default/p"), int64(1))
	f.Add(versionKey([]byte("/a"), 7), []byte(""), int64(0))
	f.Add([]byte{prefixVersion, 0, 0, 0, 0, 0, 0, 0, 0, 0}, []byte{0, 0}, int64(-1))
	f.Add([]byte{prefixLog, 1, 2, 3, 4, 5, 6, 7, 8, 9}, []byte{0xff}, int64(math.MaxInt64))
	f.Add(append([]byte{prefixVersion}, bytes.Repeat([]byte{0}, 20)...), []byte("a\x00b"), int64(math.MinInt64))
	f.Fuzz(func(t *testing.T, raw, userKey []byte, rev int64) {
		// Arbitrary bytes: never a panic; a parsed key rebuilds the input.
		key, r, err := parseVersionKey(raw)
		if err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("parseVersionKey(%x) = %v, want errCorrupt", raw, err)
			}
		} else if rebuilt := versionKey(key, r); !bytes.Equal(rebuilt, raw) {
			t.Fatalf("parseVersionKey(%x) = %q, %d, which rebuilds %x", raw, key, r, rebuilt)
		}

		// versionKey → parseVersionKey round-trips any user key and revision.
		enc := versionKey(userKey, rev)
		if len(enc) != versionKeySize(userKey) || !bytes.Equal(appendVersionKey(nil, userKey, rev), enc) {
			t.Fatalf("versionKey(%q, %d) = %x; its size %d, appended %x", userKey, rev, enc, versionKeySize(userKey), appendVersionKey(nil, userKey, rev))
		}
		if !bytes.HasPrefix(enc, versionPrefix(userKey)) {
			t.Fatalf("versionKey(%q, %d) = %x lacks the prefix %x", userKey, rev, enc, versionPrefix(userKey))
		}
		gotKey, gotRev, err := parseVersionKey(enc)
		if err != nil {
			t.Fatalf("parseVersionKey(versionKey(%q, %d)) failed: %v", userKey, rev, err)
		}
		if !bytes.Equal(gotKey, userKey) || gotRev != rev {
			t.Fatalf("round trip of %q, %d gave %q, %d", userKey, rev, gotKey, gotRev)
		}

		// Newer versions of one key sort first, so a seek to (key, ^rev)
		// lands on the newest version at or below rev.
		if rev > 0 {
			if older := versionKey(userKey, rev-1); bytes.Compare(enc, older) >= 0 {
				t.Fatalf("versionKey(%q, %d) sorts at or after the older revision %d", userKey, rev, rev-1)
			}
		}
		if len(enc) != len(userKey)+10 || binary.BigEndian.Uint64(enc[len(enc)-8:]) != ^uint64(rev) {
			t.Fatalf("versionKey(%q, %d) = %x has the wrong layout", userKey, rev, enc)
		}
	})
}
