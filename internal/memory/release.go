// Package memory gives the process's free heap memory back to the
// operating system after bursts of allocation.
package memory

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// freeHeap is the runtime's measure of heap memory that is free and could
// be returned to the operating system but has not been.
const freeHeap = "/memory/classes/heap/free:bytes"

// ReleaseFree checks every interval, until ctx ends, how much of the heap
// is free but still held, and returns it all to the operating system once
// that exceeds threshold.
//
// Go's background scavenger returns such memory at about one percent of a
// CPU, so after a burst (a few large lists, a thousand watches coming and
// going, a namespace of many objects deleted) a server would keep its
// peak resident size for minutes, and the memory of a server that holds
// less data than before would not follow the data down. A forced release
// costs a garbage collection, paid only after such a burst.
func ReleaseFree(ctx context.Context, interval time.Duration, threshold uint64) {
	releaseWhenFree(ctx, interval, threshold, debug.FreeOSMemory)
}

func releaseWhenFree(ctx context.Context, interval time.Duration, threshold uint64, release func()) {
	sample := []metrics.Sample{{Name: freeHeap}}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > threshold {
			release()
		}
	}
}
