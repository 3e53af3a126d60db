package controllers

import (
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"
)

// recorder is an event handler that notes, in order, the objects of the
// events it gets.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) note(what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, what)
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

func (r *recorder) OnAdd(obj any, _ bool) { r.note("add " + obj.(string)) }
func (r *recorder) OnUpdate(_, obj any)   { r.note("update " + obj.(string)) }
func (r *recorder) OnDelete(obj any)      { r.note("delete " + obj.(string)) }

var _ cache.ResourceEventHandler = (*recorder)(nil)

// TestEventRunPassesAQuietEventAtOnceAndHoldsABurst: the first event after
// a quiet window reaches the handler before the informer's call returns;
// the events after it, within the window, wait for the run to be handed
// over, and then all come, in order.
func TestEventRunPassesAQuietEventAtOnceAndHoldsABurst(t *testing.T) {
	rec := &recorder{}
	run := &eventRun{next: rec, window: time.Hour}
	run.OnAdd("a", false)
	if got := rec.got(); !slices.Equal(got, []string{"add a"}) {
		t.Fatalf("after a quiet hour, the handler has %q, want the add at once", got)
	}
	run.OnUpdate("a", "a2")
	run.OnDelete("a2")
	run.OnAdd("b", false)
	if got := rec.got(); len(got) != 1 {
		t.Fatalf("within the window the handler has %q, want the burst held", got)
	}
	run.handOver()
	want := []string{"add a", "update a2", "delete a2", "add b"}
	if got := rec.got(); !slices.Equal(got, want) {
		t.Fatalf("after the hand-over the handler has %q, want %q", got, want)
	}
}

// TestEventRunLosesAndReordersNothing: a stream of events, some in bursts
// and some after pauses longer than the window, reaches the handler
// whole and in order, however the hand-overs and the events interleave.
func TestEventRunLosesAndReordersNothing(t *testing.T) {
	rec := &recorder{}
	run := &eventRun{next: rec, window: time.Millisecond}
	var want []string
	for i := range 2000 {
		name := strconv.Itoa(i)
		run.OnAdd(name, false)
		want = append(want, "add "+name)
		if i%200 == 0 {
			time.Sleep(2 * time.Millisecond) // now and then a quiet window
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(rec.got()) < len(want) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := rec.got(); !slices.Equal(got, want) {
		t.Fatalf("the handler got %d events, want the %d sent, in order", len(got), len(want))
	}
}
