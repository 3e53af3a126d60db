// Package memory gives the process's free heap memory back to the
// operating system after bursts of allocation.
package memory

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
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
// could go back to the operating system, and returns it all once that
// exceeds threshold: memory free but still held, or garbage left by a
// burst that the process, now allocating little, would take minutes to
// collect.
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
	releaseWhenFree(ctx, interval, threshold, debug.FreeOSMemory)
}

func releaseWhenFree(ctx context.Context, interval time.Duration, threshold uint64, release func()) {
	samples := []metrics.Sample{{Name: freeHeap}, {Name: heapObjects}, {Name: liveHeap}, {Name: allocated}}
	metrics.Read(samples)
	lastAllocated := value(samples[3])
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		metrics.Read(samples)
		free, objects, live, total := value(samples[0]), value(samples[1]), value(samples[2]), value(samples[3])
		garbage := objects - min(objects, live)
		quiet := total-lastAllocated < threshold
		lastAllocated = total
		if free > threshold || garbage > threshold && quiet {
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
