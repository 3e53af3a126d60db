package pebble

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/kapi-dev/kapi/internal/storage"
)

// The tests here drive a store with several concurrent writers, so that
// writes share group commits, and then break it: a simulated crash in the
// middle of the writes, or I/O errors on Pebble's write-ahead log. Each
// writer owns one key and writes the values v0 (a create), v1, v2, ... (each
// an update guarded by the previous revision), so any state of a key names
// the write that produced it.

// watchdog bounds every wait in these tests; it is never slept through.
const watchdog = 20 * time.Second

// writers records what a set of writers attempted and what the store
// acknowledged.
type writers struct {
	mu        sync.Mutex
	keys      []string
	attempted []int     // writes handed to the store, per writer
	acked     [][]int64 // revision of each acknowledged write, by value index
	errs      []error   // the error that stopped each writer, if any
	total     int       // acknowledged writes, all writers
	done      chan struct{}
}

func writerValue(i int) string { return "v" + strconv.Itoa(i) }

// parseValue is the index of the write that stored v, or -1 for garbage.
func parseValue(v []byte) int {
	if !strings.HasPrefix(string(v), "v") {
		return -1
	}
	i, err := strconv.Atoi(string(v[1:]))
	if err != nil || i < 0 {
		return -1
	}
	return i
}

// startWriters starts n writers of up to limit writes each. They stop at
// their first error or when stop closes; onAck runs after every
// acknowledged write with the total so far.
func startWriters(s *Store, n, limit int, stop <-chan struct{}, onAck func(total int)) *writers {
	ws := &writers{
		keys:      make([]string, n),
		attempted: make([]int, n),
		acked:     make([][]int64, n),
		errs:      make([]error, n),
		done:      make(chan struct{}),
	}
	var wg sync.WaitGroup
	for w := 0; w < n; w++ {
		ws.keys[w] = fmt.Sprintf("/k/%d", w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			key := []byte(ws.keys[w])
			var last int64
			for i := 0; i < limit; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ws.mu.Lock()
				ws.attempted[w] = i + 1
				ws.mu.Unlock()
				var rev int64
				var err error
				if i == 0 {
					rev, err = s.Create(ctx, key, []byte(writerValue(i)))
				} else {
					rev, err = s.Update(ctx, key, []byte(writerValue(i)), last)
				}
				ws.mu.Lock()
				if err != nil {
					ws.errs[w] = err
					ws.mu.Unlock()
					return
				}
				ws.acked[w] = append(ws.acked[w], rev)
				ws.total++
				total := ws.total
				ws.mu.Unlock()
				last = rev
				onAck(total)
			}
		}()
	}
	go func() {
		wg.Wait()
		close(ws.done)
	}()
	return ws
}

// acks copies the acknowledged revisions so far.
func (ws *writers) acks() [][]int64 {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	out := make([][]int64, len(ws.acked))
	for w, revs := range ws.acked {
		out[w] = append([]int64(nil), revs...)
	}
	return out
}

func (ws *writers) wait(t *testing.T) {
	t.Helper()
	waitFor(t, "the writers to stop", ws.done)
}

func waitFor(t *testing.T, what string, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(watchdog):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// checkRecovered checks a reopened store against the writers' record:
// every write in mustHave is there at its revision; each key holds one of
// its writes, no older than the last in mustHave, never one that was not
// attempted, and at the revision the store acknowledged if it did; the
// revision log replays, without gaps, exactly the writes the keys hold;
// and the next write takes the next revision.
func checkRecovered(t *testing.T, s *Store, ws *writers, mustHave [][]int64) {
	t.Helper()
	ctx := context.Background()
	eventually := ws.acks()
	cur, _ := s.CurrentRevision(ctx)
	final := make(map[string]int, len(ws.keys)) // key -> index of its value
	for w, key := range ws.keys {
		for i, rev := range mustHave[w] {
			if rev > cur {
				t.Fatalf("%s: acknowledged revision %d above the current %d", key, rev, cur)
			}
			kv, _, err := s.Get(ctx, []byte(key), rev)
			if err != nil || string(kv.Value) != writerValue(i) || kv.ModRevision != rev {
				t.Fatalf("%s at %d: %+v, %v; want the acknowledged %s", key, rev, kv, err, writerValue(i))
			}
		}
		kv, _, err := s.Get(ctx, []byte(key), 0)
		if errors.Is(err, storage.ErrNotFound) && len(mustHave[w]) == 0 {
			final[key] = -1 // no write of key landed
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		i := parseValue(kv.Value)
		if i < len(mustHave[w])-1 || i < 0 || i >= ws.attempted[w] {
			t.Fatalf("%s = %q at %d: not a write from v%d to v%d", key, kv.Value, kv.ModRevision, len(mustHave[w])-1, ws.attempted[w]-1)
		}
		if i < len(eventually[w]) && kv.ModRevision != eventually[w][i] {
			t.Fatalf("%s = %q at %d, acknowledged at %d", key, kv.Value, kv.ModRevision, eventually[w][i])
		}
		final[key] = i
	}

	// Replay the whole history: revisions 1..cur, each key's writes in
	// order, ending at the value Get returned.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watch, err := s.Watch(wctx, []byte("/k/"), 0)
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]int{}
	for rev := int64(1); rev <= cur; rev++ {
		var ev storage.Event
		select {
		case ev = <-watch.Events():
		case <-time.After(watchdog):
			t.Fatalf("replay: no event for revision %d (%v)", rev, watch.Err())
		}
		key := string(ev.KV.Key)
		if ev.Type != storage.EventPut || ev.KV.ModRevision != rev {
			t.Fatalf("replay: %v %s at %d, want a put at %d", ev.Type, key, ev.KV.ModRevision, rev)
		}
		i := parseValue(ev.KV.Value)
		if i != next[key] || ev.IsCreate() != (i == 0) {
			t.Fatalf("replay: %s = %q at %d, want %s", key, ev.KV.Value, rev, writerValue(next[key]))
		}
		w, _ := strconv.Atoi(strings.TrimPrefix(key, "/k/"))
		if i < len(eventually[w]) && eventually[w][i] != rev {
			t.Fatalf("replay: %s = %q at %d, acknowledged at %d", key, ev.KV.Value, rev, eventually[w][i])
		}
		next[key]++
	}
	for key, i := range final {
		if next[key] != i+1 {
			t.Fatalf("replay wrote %s %d times, but it holds v%d", key, next[key], i)
		}
	}

	rev, err := s.Create(ctx, []byte("/after"), []byte("x"))
	if err != nil || rev != cur+1 {
		t.Fatalf("create after reopening at revision %d: %d, %v; want %d", cur, rev, err, cur+1)
	}
}

// TestCrashWhileWriting crashes the filesystem while writers are busy:
// every write acknowledged before the crash is there after reopening, and
// writes in flight are either wholly there or wholly absent. It crashes
// with none of the unsynced data kept and with parts of it kept.
func TestCrashWhileWriting(t *testing.T) {
	for _, unsynced := range []int{0, 30, 80} {
		t.Run(fmt.Sprintf("unsynced%d", unsynced), func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			s, err := OpenWith("db", Options{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			const threshold = 150
			reached := make(chan struct{})
			var once sync.Once
			stop := make(chan struct{})
			ws := startWriters(s, 8, 1<<20, stop, func(total int) {
				if total >= threshold {
					once.Do(func() { close(reached) })
				}
			})
			waitFor(t, "acknowledged writes", reached)
			before := ws.acks() // acknowledged before the crash
			crashed := fs.CrashClone(vfs.CrashCloneCfg{
				UnsyncedDataPercent: unsynced,
				RNG:                 rand.New(rand.NewPCG(uint64(unsynced), 7)),
			})
			close(stop)
			ws.wait(t)
			for w, err := range ws.errs {
				if err != nil {
					t.Fatalf("writer %d: %v", w, err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			s, err = OpenWith("db", Options{FS: crashed})
			if err != nil {
				t.Fatalf("reopen after the crash: %v", err)
			}
			defer s.Close()
			cur, _ := s.CurrentRevision(context.Background())
			t.Logf("%d writes acknowledged before the crash, %d in all; %d survived", countAcks(before), countAcks(ws.acks()), cur)
			checkRecovered(t, s, ws, before)
		})
	}
}

// expectEvent takes w's next event and checks its type and revision.
func expectEvent(t *testing.T, w storage.Watcher, typ storage.EventType, rev int64) {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		if !ok {
			t.Fatalf("watch ended (%v), want a %v at %d", w.Err(), typ, rev)
		}
		if ev.Type != typ || ev.KV.ModRevision != rev {
			t.Fatalf("watch: %v at %d, want a %v at %d", ev.Type, ev.KV.ModRevision, typ, rev)
		}
	case <-time.After(watchdog):
		t.Fatalf("no %v at %d", typ, rev)
	}
}

func countAcks(acks [][]int64) (n int) {
	for _, a := range acks {
		n += len(a)
	}
	return n
}

// walFaults fails, once armed, the chosen operations on Pebble's
// write-ahead log files, after letting the first spare of them through.
type walFaults struct {
	kinds    map[errorfs.OpKind]bool
	armed    atomic.Bool
	spare    atomic.Int64
	injected atomic.Int64
}

func (f *walFaults) String() string { return "wal faults" }

func (f *walFaults) MaybeError(op errorfs.Op) error {
	if !f.armed.Load() || !f.kinds[op.Kind] || !strings.HasSuffix(op.Path, ".log") {
		return nil
	}
	if f.spare.Add(-1) >= 0 {
		return nil
	}
	f.injected.Add(1)
	return errorfs.ErrInjected
}

var faultKinds = []struct {
	name  string
	kinds []errorfs.OpKind
	// compaction is how many of these operations the compaction in
	// TestIOErrorInTheMiddleOfACompaction makes (for Pebble v2.1).
	compaction int64
}{
	{"write", []errorfs.OpKind{errorfs.OpFileWrite, errorfs.OpFileWriteAt}, 8},
	{"sync", []errorfs.OpKind{errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo}, 5},
}

// openFaulty opens a store on an error-injecting filesystem over base, a
// crash-simulating one (a new one when nil), so that what was synced can
// be checked afterwards.
func openFaulty(t *testing.T, kinds []errorfs.OpKind, base *vfs.MemFS) (*Store, *walFaults, *vfs.MemFS) {
	t.Helper()
	faults := &walFaults{kinds: map[errorfs.OpKind]bool{}}
	for _, k := range kinds {
		faults.kinds[k] = true
	}
	if base == nil {
		base = vfs.NewCrashableMem()
	}
	s, err := OpenWith("db", Options{FS: errorfs.Wrap(base, faults)})
	if err != nil {
		t.Fatal(err)
	}
	return s, faults, base
}

// TestIOErrorFailsWrites injects write or sync errors into the log while
// writers are busy. No write that met the error may report success; the
// store fails every write after it instead of panicking or hanging, and
// keeps answering reads and watches; and reopened on a healthy filesystem,
// both as synced before the error and as the store left it, it holds every
// acknowledged write and goes on from there.
func TestIOErrorFailsWrites(t *testing.T) {
	for _, fk := range faultKinds {
		t.Run(fk.name, func(t *testing.T) {
			ctx := context.Background()
			s, faults, base := openFaulty(t, fk.kinds, nil)
			watchCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			watch, err := s.Watch(watchCtx, []byte("/k/"), 0)
			if err != nil {
				t.Fatal(err)
			}

			const arm = 60
			ws := startWriters(s, 6, 1<<20, nil, func(total int) {
				if total == arm {
					faults.armed.Store(true)
				}
			})
			ws.wait(t) // every writer stops at its first error
			if faults.injected.Load() == 0 {
				t.Fatal("no error was injected")
			}
			injectedSeen := false
			for w, err := range ws.errs {
				if !errors.Is(err, storage.ErrFailed) {
					t.Fatalf("writer %d stopped with %v, want storage.ErrFailed", w, err)
				}
				injectedSeen = injectedSeen || errors.Is(err, errorfs.ErrInjected)
			}
			if !injectedSeen {
				t.Errorf("no writer's error names the injected one: %v", ws.errs)
			}

			// The store stays failed, even with the disk healthy again.
			faults.armed.Store(false)
			if _, err := s.Create(ctx, []byte("/k/new"), []byte("v")); !errors.Is(err, storage.ErrFailed) {
				t.Fatalf("create after the failure: %v, want storage.ErrFailed", err)
			}
			// The revision stops at the last acknowledged write.
			acked := ws.acks()
			var lastAcked int64
			for _, revs := range acked {
				for _, rev := range revs {
					lastAcked = max(lastAcked, rev)
				}
			}
			cur, _ := s.CurrentRevision(ctx)
			if cur != lastAcked {
				t.Fatalf("revision after the failure %d, want the last acknowledged %d", cur, lastAcked)
			}
			if err := s.Compact(ctx, cur); !errors.Is(err, storage.ErrFailed) {
				t.Fatalf("compact after the failure: %v, want storage.ErrFailed", err)
			}
			// Watches go on: the running one has every committed write
			// and is told it is current; a new one replays them.
			for rev := int64(1); rev <= cur; rev++ {
				expectEvent(t, watch, storage.EventPut, rev)
			}
			watch.RequestProgress()
			expectEvent(t, watch, storage.EventProgress, cur)
			replay, err := s.Watch(watchCtx, []byte("/k/"), cur-1)
			if err != nil {
				t.Fatalf("watch after the failure: %v", err)
			}
			expectEvent(t, replay, storage.EventPut, cur)
			// Reads answer from the state before the failure.
			for w, revs := range acked {
				if len(revs) == 0 {
					continue
				}
				kv, _, err := s.Get(ctx, []byte(ws.keys[w]), 0)
				if err != nil || kv.ModRevision != revs[len(revs)-1] {
					t.Fatalf("read after the failure: %+v, %v; want revision %d", kv, err, revs[len(revs)-1])
				}
			}
			synced := base.CrashClone(vfs.CrashCloneCfg{})
			closed := make(chan struct{})
			go func() {
				defer close(closed)
				t.Logf("close after the failure: %v", s.Close())
			}()
			waitFor(t, "Close", closed)

			for _, reopen := range []struct {
				name string
				fs   vfs.FS
			}{{"synced", synced}, {"as left", base}} {
				s, err := OpenWith("db", Options{FS: reopen.fs})
				if err != nil {
					t.Fatalf("reopen %s: %v", reopen.name, err)
				}
				checkRecovered(t, s, ws, acked)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestIOErrorDuringCompaction fails a compaction's writes: Compact returns
// the error, the store fails further writes, and reopened on a healthy
// filesystem it holds every write and takes new ones.
func TestIOErrorDuringCompaction(t *testing.T) {
	for _, fk := range faultKinds {
		t.Run(fk.name, func(t *testing.T) {
			ctx := context.Background()
			s, faults, base := openFaulty(t, fk.kinds, nil)
			ws := startWriters(s, 4, 10, nil, func(int) {})
			ws.wait(t)
			for w, err := range ws.errs {
				if err != nil {
					t.Fatalf("writer %d: %v", w, err)
				}
			}
			cur, _ := s.CurrentRevision(ctx)
			faults.armed.Store(true)
			if err := s.Compact(ctx, cur); !errors.Is(err, storage.ErrFailed) {
				t.Fatalf("compact with a failing log: %v, want storage.ErrFailed", err)
			}
			faults.armed.Store(false)
			if _, err := s.Create(ctx, []byte("/k/new"), []byte("v")); !errors.Is(err, storage.ErrFailed) {
				t.Fatalf("create after the failure: %v, want storage.ErrFailed", err)
			}
			synced := base.CrashClone(vfs.CrashCloneCfg{})
			s.Close()

			for _, fs := range []vfs.FS{synced, base} {
				s, err := OpenWith("db", Options{FS: fs})
				if err != nil {
					t.Fatal(err)
				}
				for w, revs := range ws.acks() {
					kv, _, err := s.Get(ctx, []byte(ws.keys[w]), 0)
					if err != nil || kv.ModRevision != revs[len(revs)-1] || string(kv.Value) != writerValue(len(revs)-1) {
						t.Fatalf("%s after reopening: %+v, %v", ws.keys[w], kv, err)
					}
				}
				if rev, err := s.Create(ctx, []byte("/after"), []byte("x")); err != nil || rev != cur+1 {
					t.Fatalf("create after reopening: %d, %v; want %d", rev, err, cur+1)
				}
				if err := s.Compact(ctx, cur); err != nil {
					t.Fatalf("compact after reopening: %v", err)
				}
				s.Close()
			}
		})
	}
}

// TestIOErrorInTheMiddleOfACompaction fails the log a few operations into
// a compaction, alone or racing writers, so that the failure lands in each
// of the compaction's commits in turn or in a writer's group. Nothing
// panics, every failed write says so, and reopened on a healthy filesystem
// the store holds every acknowledged write.
func TestIOErrorInTheMiddleOfACompaction(t *testing.T) {
	ctx := context.Background()
	// One store with two compaction batches' worth of old versions,
	// copied for every case. Long keys make each batch span several of
	// the log's 32KiB blocks, as a real compaction's 4096 deletions do.
	const batch = 200
	const keys = batch + batch/2
	prefix := "/c/" + strings.Repeat("x", 250) + "/"
	filled := vfs.NewCrashableMem()
	s, err := OpenWith("db", Options{FS: filled})
	if err != nil {
		t.Fatal(err)
	}
	fillDeletable(t, s, prefix, keys)
	cur, _ := s.CurrentRevision(ctx)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for _, fk := range faultKinds {
		for _, writersN := range []int{0, 4} {
			// Alone, the compaction meets the failure in each of its
			// operations in turn, or not at all; with writers, which
			// operation fails is up to the scheduler.
			spares, step := fk.compaction, int64(1)
			if writersN > 0 {
				step = 2
			}
			for spare := int64(0); spare <= spares; spare += step {
				t.Run(fmt.Sprintf("%s/writers%d/after%d", fk.name, writersN, spare), func(t *testing.T) {
					s, faults, base := openFaulty(t, fk.kinds, filled.CrashClone(vfs.CrashCloneCfg{}))
					s.compactBatch = batch
					faults.spare.Store(spare)
					faults.armed.Store(true)
					ws := startWriters(s, writersN, 1<<20, nil, func(int) {})
					compactErr := s.Compact(ctx, cur)
					ws.wait(t) // the writers stop at their first error
					if compactErr != nil && !errors.Is(compactErr, storage.ErrFailed) {
						t.Fatalf("compact: %v, want nil or storage.ErrFailed", compactErr)
					}
					for w, err := range ws.errs {
						if !errors.Is(err, storage.ErrFailed) {
							t.Fatalf("writer %d stopped with %v, want storage.ErrFailed", w, err)
						}
					}
					acked := ws.acks()
					faults.armed.Store(false)
					synced := base.CrashClone(vfs.CrashCloneCfg{})
					s.Close()

					for _, fs := range []vfs.FS{synced, base} {
						s, err := OpenWith("db", Options{FS: fs})
						if err != nil {
							t.Fatal(err)
						}
						checkLatest(t, s, ws, acked)
						for i := 0; i < keys; i += 7 {
							key := fmt.Sprintf("%s%05d", prefix, i)
							if kv, _, err := s.Get(ctx, []byte(key), 0); err != nil || string(kv.Value) != "v2" {
								t.Fatalf("%s after reopening: %+v, %v", key, kv, err)
							}
						}
						if err := s.Compact(ctx, cur); err != nil {
							t.Fatalf("compact after reopening: %v", err)
						}
						s.Close()
					}
				})
			}
		}
	}
}

// checkLatest checks each writer's key in a reopened store: it holds the
// last write in mustHave or a later one that was attempted, at the
// acknowledged revision if there was one; and new writes follow on.
func checkLatest(t *testing.T, s *Store, ws *writers, mustHave [][]int64) {
	t.Helper()
	ctx := context.Background()
	eventually := ws.acks()
	cur, _ := s.CurrentRevision(ctx)
	for w, key := range ws.keys {
		kv, _, err := s.Get(ctx, []byte(key), 0)
		if errors.Is(err, storage.ErrNotFound) && len(mustHave[w]) == 0 {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		i := parseValue(kv.Value)
		if i < len(mustHave[w])-1 || i < 0 || i >= ws.attempted[w] {
			t.Fatalf("%s = %q at %d: not a write from v%d to v%d", key, kv.Value, kv.ModRevision, len(mustHave[w])-1, ws.attempted[w]-1)
		}
		if i < len(eventually[w]) && kv.ModRevision != eventually[w][i] {
			t.Fatalf("%s = %q at %d, acknowledged at %d", key, kv.Value, kv.ModRevision, eventually[w][i])
		}
	}
	rev, err := s.Create(ctx, []byte("/after"), []byte("x"))
	if err != nil || rev != cur+1 {
		t.Fatalf("create after reopening at revision %d: %d, %v; want %d", cur, rev, err, cur+1)
	}
}
