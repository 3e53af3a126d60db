package cache

import (
	"context"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// TestBookmarkSchedule: each watcher that allowed bookmarks gets its own,
// as kube-apiserver's watch cache sends them with its one-minute
// frequency: the first a minute after the watch started, the next a
// minute after that, and, for a watch with a deadline, one in the second
// before the bookmark two seconds ahead of it is due, and one more in the
// next second (the bucket of the watcher's time was taken already). A
// 70-second watch gets them 60, 67 and 68 seconds in (kube-apiserver's
// came 59.7, 67.7 and 68.8 seconds in); a 4-second one 1 and 2 seconds in.
func TestBookmarkSchedule(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration // 0: no deadline
		want    []time.Duration
	}{
		{"70s watch", 70 * time.Second, []time.Duration{60 * time.Second, 67 * time.Second, 68 * time.Second}},
		{"4s watch", 4 * time.Second, []time.Duration{time.Second, 2 * time.Second}},
		{"no deadline", 0, []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := clocktesting.NewFakeClock(time.Now())
			c, s := newCache(t, Options{Clock: fc})
			start := fc.Now() // the buckets' origin too: the clock has not moved
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			w, _, err := c.WatchFrom(ctx, c.Revision(), Filter{Prefix: prefix}, true)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			// A change, for the bookmarks to be past the watch's start.
			rev := createApplied(t, c, s, "a")
			if d := nextDelivery(t, w); d.Event == nil || d.Event.Rev != rev {
				t.Fatalf("first delivery %+v, want the creation at %d", d, rev)
			}
			for i, at := range tc.want {
				awaitBookmarkTimer(t, c, start.Add(at))
				if deliveryWaiting(w) {
					t.Fatalf("bookmark %d: delivery %+v before %v", i, nextDelivery(t, w), at)
				}
				fc.SetTime(start.Add(at))
				if d := nextDelivery(t, w); d.Event != nil || d.Bookmark < rev {
					t.Fatalf("bookmark %d at %v: delivery %+v, want a bookmark at %d or later", i, at, d, rev)
				}
			}
			if tc.timeout > 0 {
				awaitBookmarkTimer(t, c, time.Time{})
				fc.SetTime(start.Add(tc.timeout))
				if deliveryWaiting(w) {
					t.Fatalf("delivery %+v after the bookmark before the deadline", nextDelivery(t, w))
				}
			}
		})
	}
}

// TestBookmarksAreNotBehindTheWatch: as kube-apiserver's, a bookmark goes
// only to the watchers that started before its revision: one watching
// from a version still to come gets none, which would take its client
// back.
func TestBookmarksAreNotBehindTheWatch(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Now())
	c, s := newCache(t, Options{Clock: fc})
	ctx := context.Background()
	now, _, err := c.WatchFrom(ctx, c.Revision(), Filter{Prefix: prefix}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer now.Stop()
	future, _, err := c.WatchFrom(ctx, c.Revision()+1000, Filter{Prefix: prefix}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer future.Stop()
	rev := createApplied(t, c, s, "a")
	nextDelivery(t, now) // the creation
	awaitBookmarkTimer(t, c, fc.Now().Add(time.Minute))
	fc.Step(time.Minute)
	if d := nextDelivery(t, now); d.Bookmark < rev {
		t.Fatalf("watch from now: %+v, want a bookmark at %d or later", d, rev)
	}
	// Both were due in the same round, which has sent the first's.
	if deliveryWaiting(future) {
		t.Fatalf("watch from a future version: %+v, want nothing", nextDelivery(t, future))
	}
	// It still gets its next one on time, once past its version.
	awaitBookmarkTimer(t, c, fc.Now().Add(time.Minute))
}

// TestManyWatchersShareABookmarkTimer: thousands of watchers started in
// the same second are due together and take one timer.
func TestManyWatchersShareABookmarkTimer(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Now())
	c, s := newCache(t, Options{Clock: fc})
	idle := fc.Waiters()
	ctx := context.Background()
	watchers := make([]*Watcher, 2000)
	for i := range watchers {
		w, _, err := c.WatchFrom(ctx, c.Revision(), Filter{Prefix: prefix}, true)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		watchers[i] = w
	}
	rev := createApplied(t, c, s, "a")
	awaitBookmarkTimer(t, c, fc.Now().Add(time.Minute))
	if n := fc.Waiters(); n != idle+1 {
		t.Fatalf("%d timers on the clock, want %d: the cache's own and one for the bookmarks", n, idle+1)
	}
	fc.Step(time.Minute)
	for i, w := range watchers {
		var d Delivery
		for d = nextDelivery(t, w); d.Event != nil; d = nextDelivery(t, w) {
		}
		if d.Bookmark < rev {
			t.Fatalf("watcher %d: %+v, want a bookmark at %d or later", i, d, rev)
		}
	}
}

// awaitBookmarkTimer waits (in real time) until the cache's bookmark
// timer is set for at, or (zero at) is not set at all.
func awaitBookmarkTimer(t *testing.T, c *Cache, at time.Time) {
	t.Helper()
	giveUp := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		q := c.bookmarks
		set, awaited := q.awaited != noBucket, q.bucketStart(q.awaited)
		c.mu.Unlock()
		if at.IsZero() && !set || set && awaited.Equal(at) {
			return
		}
		if time.Now().After(giveUp) {
			if set {
				t.Fatalf("the bookmark timer is set for %v, want %v", awaited, at)
			}
			t.Fatalf("the bookmark timer is not set, want %v", at)
		}
		time.Sleep(time.Millisecond)
	}
}
