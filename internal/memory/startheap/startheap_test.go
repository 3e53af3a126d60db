package startheap

import (
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func gcSettings() (percent, limit uint64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// The first collection, which the memory limit brings about once the heap
// nears Bound (here forced), gives collection back its defaults.
func TestCollectionResumesAfterTheFirst(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT set: the package leaves the settings alone")
	}
	// GOGC off reads as -1.
	if percent, limit := gcSettings(); int64(percent) != -1 || limit != Bound {
		t.Fatalf("at init: GOGC %d, memory limit %d; want off (-1) and %d", int64(percent), limit, Bound)
	}
	runtime.GC()
	deadline := time.Now().Add(10 * time.Second)
	for {
		percent, limit := gcSettings()
		if percent == 100 && limit == math.MaxInt64 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a collection: GOGC %d, memory limit %d; want 100 and none", percent, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
