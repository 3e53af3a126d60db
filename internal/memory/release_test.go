package memory

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestReleaseFreeAfterABurst allocates and drops 256 MiB: the free heap
// then exceeds the threshold, and the memory is released, once.
func TestReleaseFreeAfterABurst(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no collection but ours
	leaveGarbage()
	runtime.GC()
	released := watchReleases(t)
	waitForRelease(t, released, "256 MiB of free heap")
	// Released, the free heap is under the threshold: no second release.
	time.Sleep(100 * time.Millisecond)
	if len(released) > 0 {
		t.Errorf("released %d more times with nothing free", len(released))
	}
}

// TestReleaseGarbageOnceQuiet checks that garbage a burst left behind is
// released once the process allocates little, without waiting for a
// collection to free it.
func TestReleaseGarbageOnceQuiet(t *testing.T) {
	runtime.GC() // what is live now is what the runtime knows as live
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	leaveGarbage()
	waitForRelease(t, watchReleases(t), "256 MiB of garbage")
}

// TestReleaseFreeLeavesASmallHeap checks that nothing is released while
// the free heap stays under the threshold.
func TestReleaseFreeLeavesASmallHeap(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	calls := 0
	releaseWhenFree(ctx, 10*time.Millisecond, readRuntimeHeap(), &releasePolicy{threshold: 1 << 40}, func() { calls++ })
	if calls > 0 {
		t.Errorf("released %d times with less than 1 TiB free", calls)
	}
}

// leaveGarbage allocates 256 MiB and drops it.
func leaveGarbage() {
	var burst [][]byte
	for range 256 {
		burst = append(burst, make([]byte, 1<<20))
	}
	runtime.KeepAlive(burst)
}

// watchReleases runs the release loop (threshold 32 MiB, every 10 ms)
// until the test ends; each release frees memory and is reported.
func watchReleases(t *testing.T) chan struct{} {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	released := make(chan struct{}, 10)
	go releaseWhenFree(ctx, 10*time.Millisecond, readRuntimeHeap(), &releasePolicy{threshold: 32 << 20}, func() {
		debug.FreeOSMemory()
		released <- struct{}{}
	})
	return released
}

func waitForRelease(t *testing.T, released chan struct{}, what string) {
	t.Helper()
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s not released", what)
	}
}

// TestReleaseOnceQuietAfterABurst follows the policy through a burst that
// leaves less than the threshold behind: nothing is released while the
// process allocates, once when it goes quiet if a quarter of the threshold
// could go back, and not again while it stays quiet.
func TestReleaseOnceQuietAfterABurst(t *testing.T) {
	const mib = 1 << 20
	p := &releasePolicy{threshold: 64 * mib}
	steps := []struct {
		what    string
		state   heapState
		release bool
	}{
		{"busy", heapState{free: 10 * mib, garbage: 40 * mib, allocated: 500 * mib}, false},
		{"busy still", heapState{free: 12 * mib, garbage: 30 * mib, allocated: 1000 * mib}, false},
		{"quiet after the burst", heapState{free: 12 * mib, garbage: 20 * mib, allocated: 1010 * mib}, true},
		{"quiet still", heapState{free: 12 * mib, garbage: 20 * mib, allocated: 1020 * mib}, false},
		{"another burst", heapState{free: 2 * mib, garbage: 5 * mib, allocated: 1200 * mib}, false},
		{"quiet after it, little to give back", heapState{free: 2 * mib, garbage: 5 * mib, allocated: 1201 * mib}, false},
		{"quiet, garbage past the threshold", heapState{free: 2 * mib, garbage: 70 * mib, allocated: 1202 * mib}, true},
		{"busy, free past the threshold", heapState{free: 80 * mib, garbage: 5 * mib, allocated: 1400 * mib}, true},
		{"busy, caches let go of a quarter", heapState{free: 2 * mib, letGo: 17 * mib, allocated: 1600 * mib}, false},
		{"quiet after it: what was let go", heapState{free: 2 * mib, allocated: 1601 * mib}, true},
		{"quiet, less let go", heapState{free: 2 * mib, letGo: 10 * mib, allocated: 1602 * mib}, false},
		{"quiet, more let go since the release", heapState{free: 2 * mib, letGo: 7 * mib, allocated: 1603 * mib}, true},
		{"busy, let go of a quarter and free past the threshold", heapState{free: 80 * mib, letGo: 20 * mib, allocated: 1800 * mib}, true},
		{"quiet after it: what was let go during the burst", heapState{free: 2 * mib, allocated: 1801 * mib}, true},
		{"quiet still, nothing more let go", heapState{free: 2 * mib, allocated: 1802 * mib}, false},
	}
	for _, s := range steps {
		if got := p.release(s.state); got != s.release {
			t.Errorf("%s: release = %v, want %v", s.what, got, s.release)
		}
	}
}
