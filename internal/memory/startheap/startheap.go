// Package startheap keeps the garbage collector from running while the
// server starts, up to a bound. Import it for its init function from the
// command that starts the server (it is the process's setting, so the
// in-process test server, sharing its process with the tests, leaves it
// alone), and call Started once the server serves.
//
// What the start allocates is mostly what the server keeps (schemes,
// OpenAPI definitions, caches, admission plugins), so a collection during
// it finds little garbage; yet with Go's defaults the heap's first goal is
// 4 MiB and doubles from there: an empty start collected six times, some
// 20 ms of a 100 ms start (docs/PERFORMANCE.md, "Start to ready"). Until
// Started, or until the heap reaches Bound (a restart holding many objects
// decodes them all, and makes garbage doing so), collection is off; then
// the settings go back to Go's defaults. A process told GOGC or GOMEMLIMIT
// keeps what it was told.
package startheap

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// Bound is the heap size at which collection resumes during a start: an
// empty start's heap stays well below it.
const Bound = 96 << 20

var restore sync.Once

func init() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		restore.Do(func() {})
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(Bound)
	// The memory limit makes the runtime collect once the heap nears
	// Bound; the cleanup of an object nothing refers to runs after the
	// first collection, and gives collection back its defaults.
	runtime.AddCleanup(new([8]*byte), func(struct{}) { Started() }, struct{}{})
}

// Started gives garbage collection back Go's defaults (GOGC=100, no
// memory limit), unless the process was told otherwise or a collection
// already did.
func Started() {
	restore.Do(func() {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
}
