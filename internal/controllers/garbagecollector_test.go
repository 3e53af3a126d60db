package controllers

import (
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func (r *recorder) OnAdd(obj any, _ bool) { r.note("add " + nameOf(obj)) }
func (r *recorder) OnUpdate(_, obj any)   { r.note("update " + nameOf(obj)) }
func (r *recorder) OnDelete(obj any)      { r.note("delete " + nameOf(obj)) }

// nameOf is an object's name, or the string that stands for an object.
func nameOf(obj any) string {
	if o, err := meta.Accessor(obj); err == nil {
		return o.GetName()
	}
	return obj.(string)
}

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

// TestEventRunHandsOverTheInitialListWholeWithTheDeletedLast: an initial
// list is held until the informer has delivered all of it, then handed
// over with the objects being deleted after the others, and what came
// after the list after it, in order. An owner being deleted with the
// orphan finalizer thus reaches the collector after its dependents.
func TestEventRunHandsOverTheInitialListWholeWithTheDeletedLast(t *testing.T) {
	rec := &recorder{}
	run := &eventRun{next: rec, window: time.Hour, listing: true}
	listed := make(chan struct{})
	handedOver := make(chan struct{})
	go func() {
		run.handOverListWhen(listed, time.Hour)
		close(handedOver)
	}()
	owner := object("owner", true)
	run.OnAdd(owner, true)
	run.OnAdd(object("dependent-1", false), true)
	run.OnAdd(object("other-owner", true), true)
	run.OnAdd(object("dependent-2", false), true)
	run.OnUpdate(owner, object("owner", true))
	run.OnDelete(object("dependent-1", false))
	if got := rec.got(); len(got) != 0 {
		t.Fatalf("before the list is whole the handler has %q, want nothing", got)
	}
	close(listed)
	<-handedOver
	want := []string{"add dependent-1", "add dependent-2", "add owner", "add other-owner", "update owner", "delete dependent-1"}
	if got := rec.got(); !slices.Equal(got, want) {
		t.Fatalf("the handler has %q, want %q", got, want)
	}
	run.OnAdd(object("later", false), false)
	run.handOver()
	if got := rec.got(); !slices.Equal(got, append(want, "add later")) {
		t.Fatalf("after the list the handler has %q, want the later add last", got)
	}
}

// TestEventRunHandsOverAListThatNeverCompletes: an informer stopped
// before its list came whole does not keep what came of it forever.
func TestEventRunHandsOverAListThatNeverCompletes(t *testing.T) {
	rec := &recorder{}
	run := &eventRun{next: rec, window: time.Hour, listing: true}
	run.OnAdd(object("a", false), true)
	run.handOverListWhen(make(chan struct{}), time.Millisecond)
	if got := rec.got(); !slices.Equal(got, []string{"add a"}) {
		t.Fatalf("the handler has %q, want the add handed over after the wait", got)
	}
}

// object is an object's metadata, being deleted or not.
func object(name string, beingDeleted bool) *metav1.PartialObjectMetadata {
	o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if beingDeleted {
		now := metav1.Now()
		o.DeletionTimestamp = &now
		o.Finalizers = []string{metav1.FinalizerOrphanDependents}
	}
	return o
}
