package pebble

import (
	"context"
	"fmt"
	"testing"

	"github.com/kapi-dev/kapi/internal/storage"
	"github.com/kapi-dev/kapi/internal/storage/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		s, err := Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestReopenKeepsState checks that revisions, values, history and the
// compaction point survive closing and reopening the store.
func TestReopenKeepsState(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for i := 0; i < 5; i++ {
		if last, err = s.Create(ctx, []byte(fmt.Sprintf("/k/%d", i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Compact(ctx, 2); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rev, _ := s.CurrentRevision(ctx); rev != last {
		t.Fatalf("revision after reopen %d, want %d", rev, last)
	}
	if s.CompactedRevision() != 2 {
		t.Fatalf("compacted after reopen %d, want 2", s.CompactedRevision())
	}
	next, err := s.Create(ctx, []byte("/k/new"), []byte("v"))
	if err != nil || next != last+1 {
		t.Fatalf("create after reopen: rev %d err %v, want %d", next, err, last+1)
	}
	res, err := s.Range(ctx, storage.RangeOptions{Prefix: []byte("/k/"), Revision: 3})
	if err != nil || len(res.KVs) != 3 {
		t.Fatalf("range at 3 after reopen: %d keys, err %v", len(res.KVs), err)
	}
}

func TestDecodeRecordRejectsGarbage(t *testing.T) {
	for _, b := range [][]byte{nil, {0}, {9, 1}, {recordPut}, {recordPut, 0x80}} {
		if _, err := decodeRecord(b); err == nil {
			t.Errorf("decodeRecord(%x) accepted garbage", b)
		}
	}
}
