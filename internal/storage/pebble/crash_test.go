package pebble

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kapi-dev/kapi/internal/storage"
	"github.com/kapi-dev/kapi/internal/storage/storagetest"
)

// TestConformanceInMemory runs the suite on stores from the InMemory
// opener, as a server started with the memory backend gets them.
func TestConformanceInMemory(t *testing.T) {
	open := InMemory()
	storagetest.Run(t, func(t *testing.T) storage.Store {
		s, err := open()
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestAcknowledgedWritesSurviveACrash writes from several goroutines (so
// writes are committed in groups) on a filesystem that can simulate a
// crash, takes the state a crash at that moment would leave (only synced
// data), and reopens it: every acknowledged write is there at its
// revision, no key holds a value that was never written, and revisions go
// on from the last one.
func TestAcknowledgedWritesSurviveACrash(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewCrashableMem()
	s, err := OpenWith("db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	const writers, perWriter = 8, 40
	type ack struct {
		key   string
		value string
		rev   int64
	}
	acks := make([][]ack, writers)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("/k/%d", w)
			rev, err := s.Create(ctx, []byte(key), []byte("0"))
			if err != nil {
				t.Error(err)
				return
			}
			acks[w] = append(acks[w], ack{key, "0", rev})
			for i := 1; i < perWriter; i++ {
				value := strconv.Itoa(i)
				rev, err = s.Update(ctx, []byte(key), []byte(value), rev)
				if err != nil {
					t.Error(err)
					return
				}
				acks[w] = append(acks[w], ack{key, value, rev})
			}
		}()
	}
	wg.Wait()
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	s.Close()

	s, err = OpenWith("db", Options{FS: crashed})
	if err != nil {
		t.Fatalf("reopen after crash: %v", err)
	}
	defer s.Close()
	var last int64
	for _, history := range acks {
		final := history[len(history)-1]
		last = max(last, final.rev)
		kv, _, err := s.Get(ctx, []byte(final.key), 0)
		if err != nil {
			t.Fatalf("%s after crash: %v", final.key, err)
		}
		if string(kv.Value) != final.value || kv.ModRevision != final.rev {
			t.Errorf("%s after crash = %q at %d, want %q at %d", final.key, kv.Value, kv.ModRevision, final.value, final.rev)
		}
		for _, a := range history {
			kv, _, err := s.Get(ctx, []byte(a.key), a.rev)
			if err != nil || string(kv.Value) != a.value {
				t.Errorf("%s at revision %d after crash: %v %v, want %q", a.key, a.rev, kv, err, a.value)
			}
		}
	}
	if rev, _ := s.CurrentRevision(ctx); rev < last {
		t.Fatalf("revision after crash %d, below the last acknowledged %d", rev, last)
	}
	rev, err := s.Create(ctx, []byte("/k/after"), []byte("v"))
	if cur, _ := s.CurrentRevision(ctx); err != nil || rev != cur || rev <= last {
		t.Fatalf("create after crash: revision %d (current %d), err %v; want above %d", rev, cur, err, last)
	}
}

// TestUnsyncedStateIsConsistent crashes with part of the unsynced
// data kept: the reopened store must hold each key at a value that was
// written, never anything else.
func TestUnsyncedStateIsConsistent(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewCrashableMem()
	s, err := OpenWith("db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	rev, err := s.Create(ctx, []byte("/k"), []byte("0"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 50; i++ {
		if rev, err = s.Update(ctx, []byte("/k"), []byte(strconv.Itoa(i)), rev); err != nil {
			t.Fatal(err)
		}
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: newRand()})
	s.Close()
	s, err = OpenWith("db", Options{FS: crashed})
	if err != nil {
		t.Fatalf("reopen after crash: %v", err)
	}
	defer s.Close()
	kv, _, err := s.Get(ctx, []byte("/k"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if kv.ModRevision != rev || string(kv.Value) != "49" {
		t.Fatalf("after crash /k = %q at %d, want \"49\" at %d (every write was acknowledged)", kv.Value, kv.ModRevision, rev)
	}
	if _, err := s.Update(ctx, []byte("/k"), []byte("x"), rev-1); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("stale update after crash: %v, want a conflict", err)
	}
}

func newRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

// TestDeferredSyncs writes with syncs deferred: a crash before the
// deferral ends may lose those writes (it leaves a consistent store,
// holding none of them here, since nothing was synced), and once it ends
// every acknowledged write survives a crash, including those committed
// while it was ending and those after it.
func TestDeferredSyncs(t *testing.T) {
	ctx := context.Background()
	open := func(fs vfs.FS) *Store {
		t.Helper()
		s, err := OpenWith("db", Options{FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}

	fs := vfs.NewCrashableMem()
	s := open(fs)
	end := s.DeferSyncs()
	ws := startWriters(s, 6, 20, nil, func(int) {})
	ws.wait(t)
	crashed := open(fs.CrashClone(vfs.CrashCloneCfg{}))
	if rev, _ := crashed.CurrentRevision(ctx); rev != 0 {
		t.Errorf("a crash with syncs deferred left revision %d: the writes were synced", rev)
	}
	checkRecovered(t, crashed, ws, make([][]int64, len(ws.keys)))
	if err := end(); err != nil {
		t.Fatal(err)
	}
	checkRecovered(t, open(fs.CrashClone(vfs.CrashCloneCfg{})), ws, ws.acks())

	// The deferral ends while writers are at work.
	fs = vfs.NewCrashableMem()
	s = open(fs)
	end = s.DeferSyncs()
	ws = startWriters(s, 6, 60, nil, func(total int) {
		if total == 90 {
			if err := end(); err != nil {
				t.Error(err)
			}
		}
	})
	ws.wait(t)
	checkRecovered(t, open(fs.CrashClone(vfs.CrashCloneCfg{})), ws, ws.acks())
}
