// Package memory gives the process's free heap memory back to the
// operating system after bursts of allocation.
package memory

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

const (
	// freeHeap is heap memory that is free and could be returned to the
	// operating system but has not been.
	freeHeap = "/memory/classes/heap/free:bytes"
	// heapObjects is heap memory of objects, live or dead but not yet
	// collected; liveHeap is what the last collection found live.
	heapObjects = "/memory/classes/heap/objects:bytes"
	liveHeap    = "/gc/heap/live:bytes"
	// allocated counts every byte ever allocated on the heap.
	allocated = "/gc/heap/allocs:bytes"
)

// ReleaseFree checks every interval, until ctx ends, how much of the heap
// could go back to the operating system, and returns it all when that
// exceeds threshold (memory free but still held, or garbage left by a
// burst that the process, now allocating little, would take minutes to
// collect), and after a burst once the process is quiet again if a
// quarter of that could go back.
//
// Go's background scavenger returns free memory at about one percent of a
// CPU, and a quiet process collects its garbage only every two minutes,
// so after a burst (a few large lists, a thousand watches coming and
// going, a namespace of many objects deleted, the caches loading on a
// restart) a server would keep its peak resident size for minutes, and
// the memory of a server that holds less data than before would not
// follow the data down. A forced release costs a garbage collection, paid
// only after such a burst.
func ReleaseFree(ctx context.Context, interval time.Duration, threshold uint64) {
	releaseWhenFree(ctx, interval, readRuntimeHeap(), &releasePolicy{threshold: threshold}, debug.FreeOSMemory)
}

// readRuntimeHeap reads the process's heap from the runtime's metrics.
func readRuntimeHeap() func() heapState {
	samples := []metrics.Sample{{Name: freeHeap}, {Name: heapObjects}, {Name: liveHeap}, {Name: allocated}}
	return func() heapState {
		metrics.Read(samples)
		objects, live := value(samples[1]), value(samples[2])
		return heapState{free: value(samples[0]), garbage: objects - min(objects, live), allocated: value(samples[3]), letGo: letGo.Swap(0)}
	}
}

// heapState is what the release policy reads of the heap.
type heapState struct {
	free      uint64 // free, not yet returned to the operating system
	garbage   uint64 // dead objects not yet collected
	allocated uint64 // every byte ever allocated
	letGo     uint64 // what LetGo was told of since the last reading
}

// letGo counts what LetGo was told of.
var letGo atomic.Uint64

// LetGo tells the releaser that the process stopped referring to n bytes
// it held for a while (a watch cache's encodings no reader took): garbage
// the runtime learns of only at its next collection, which a quiet
// process runs every two minutes. Once a quarter of the threshold was let
// go, the next quiet check releases it.
func LetGo(n int) {
	letGo.Add(uint64(max(n, 0)))
}

// releasePolicy decides, at each check, whether to release.
type releasePolicy struct {
	threshold     uint64
	lastAllocated uint64
	busy          bool   // the last interval allocated more than threshold
	letGo         uint64 // let go since the last release
}

func (p *releasePolicy) release(s heapState) bool {
	allocated := s.allocated - min(s.allocated, p.lastAllocated)
	p.lastAllocated = s.allocated
	p.letGo += s.letGo
	quiet := allocated < p.threshold
	afterBurst := p.busy && quiet
	p.busy = !quiet
	release := false
	switch {
	case s.free > p.threshold:
		release = true
	case quiet && (s.garbage > p.threshold || p.letGo > p.threshold/4):
		release = true
	default:
		release = afterBurst && s.free+s.garbage > p.threshold/4
	}
	if release && quiet {
		// A release during a burst keeps the count: what was let go then
		// may die only as the burst ends (the last events of a deletion
		// still hold their objects), after that release's collection.
		p.letGo = 0
	}
	return release
}

func releaseWhenFree(ctx context.Context, interval time.Duration, read func() heapState, policy *releasePolicy, release func()) {
	policy.lastAllocated = read().allocated
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if policy.release(read()) {
			release()
		}
	}
}

func value(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
}
