package cache

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// Bookmarks are scheduled per watcher, as kube-apiserver's watch cache does:
// a watcher that allowed them gets one at most one BookmarkInterval after
// it started, then one interval after each, and one shortly before its
// deadline, so that its client resumes from a recent version when the
// watch times out.

// bookmarkBucket is the precision of the schedule: the watchers due within
// the same second of the cache's clock share one wakeup, and each gets its
// bookmark in the second before it is due, as kube-apiserver's do.
const bookmarkBucket = time.Second

// bookmarkBeforeDeadline is how long before a watch's deadline its last
// bookmark is due.
const bookmarkBeforeDeadline = 2 * time.Second

// noBucket says that no bucket is awaited.
const noBucket = int64(-1 << 63)

// bookmarkQueue holds the watchers that allowed bookmarks in buckets by
// the second their next bookmark is due, counted from origin. A stopped
// watcher is not taken out: it is dropped when its bucket comes, which
// keeps Stop from searching the buckets. c.mu guards the queue.
type bookmarkQueue struct {
	origin  time.Time
	buckets map[int64][]*Watcher
	// next is the first bucket not yet taken: a watcher due before it
	// goes in it.
	next int64
	// awaited is the bucket the cache's bookmark timer is set for
	// (noBucket: none). A watcher due before it wakes the timer's owner.
	awaited int64
	// wake tells the cache's Run to set its timer again.
	wake chan struct{}
}

func newBookmarkQueue(origin time.Time) *bookmarkQueue {
	return &bookmarkQueue{
		origin: origin, buckets: map[int64][]*Watcher{}, awaited: noBucket,
		wake: make(chan struct{}, 1),
	}
}

// bucketOf is the bucket of the second holding at.
func (q *bookmarkQueue) bucketOf(at time.Time) int64 {
	return int64(at.Sub(q.origin) / bookmarkBucket)
}

// bucketStart is when bucket id is due.
func (q *bookmarkQueue) bucketStart(id int64) time.Time {
	return q.origin.Add(time.Duration(id) * bookmarkBucket)
}

// add queues w for a bookmark at the bucket of at, and wakes the timer's
// owner when that is before the bucket it waits for.
func (q *bookmarkQueue) add(w *Watcher, at time.Time) {
	id := max(q.bucketOf(at), q.next)
	q.buckets[id] = append(q.buckets[id], w)
	if q.awaited == noBucket || id < q.awaited {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// takeDue empties the buckets due at now into due and returns it.
// Buckets are few (one per second of an interval), so they are ranged
// over rather than counted through, however long the queue was idle.
func (q *bookmarkQueue) takeDue(now time.Time, due []*Watcher) []*Watcher {
	current := q.bucketOf(now)
	for id, watchers := range q.buckets {
		if id <= current {
			due = append(due, watchers...)
			delete(q.buckets, id)
		}
	}
	q.next = max(q.next, current+1)
	return due
}

// earliest is the first bucket that holds watchers.
func (q *bookmarkQueue) earliest() (int64, bool) {
	first, found := noBucket, false
	for id := range q.buckets {
		if !found || id < first {
			first, found = id, true
		}
	}
	return first, found
}

// clear forgets every watcher, as when every watch ends, for a new timer
// owner to start from.
func (q *bookmarkQueue) clear() {
	q.buckets = map[int64][]*Watcher{}
	q.awaited = noBucket
}

// watchDeadline is when a watch started with ctx ends, on the cache's
// clock (zero: never). A context's deadline is on the real clock: what is
// left of it is what counts, which is the same for the real clock and
// keeps a test's fake one meaningful.
func (c *Cache) watchDeadline(ctx context.Context) time.Time {
	end, ok := ctx.Deadline()
	if !ok {
		return time.Time{}
	}
	return c.opts.Clock.Now().Add(time.Until(end))
}

// nextBookmark is when w's next bookmark is due after now: one interval
// on, or before its deadline if that comes first; false once the
// deadline's bookmark is past.
func (w *Watcher) nextBookmark(now time.Time, interval time.Duration) (time.Time, bool) {
	next := now.Add(interval)
	if w.deadline.IsZero() {
		return next, true
	}
	if last := w.deadline.Add(-bookmarkBeforeDeadline); last.Before(next) {
		next = last
	}
	return next, !next.Before(now)
}

// scheduleBookmark queues w's next bookmark, if it is to get one; c.mu is
// held.
func (c *Cache) scheduleBookmark(w *Watcher, now time.Time) {
	if !w.bookmarks {
		return
	}
	if at, ok := w.nextBookmark(now, c.opts.BookmarkInterval); ok {
		c.bookmarks.add(w, at)
	}
}

// sendBookmarks sends a bookmark at rev to the watchers whose bookmark is
// due, and schedules their next one; c.mu is held. As kube-apiserver, a
// watcher gets only a bookmark past the revision it started from: one
// from a version still to come gets none that would take its client
// back.
func (c *Cache) sendBookmarks(rev int64) {
	now := c.opts.Clock.Now()
	c.dueBookmarks = c.bookmarks.takeDue(now, c.dueBookmarks[:0])
	for _, w := range c.dueBookmarks {
		if _, live := c.watchers[w]; !live {
			continue
		}
		if rev > w.after {
			w.push(Delivery{Bookmark: rev})
		}
		if _, live := c.watchers[w]; live { // push ends a watcher that lags
			c.scheduleBookmark(w, now)
		}
	}
	clear(c.dueBookmarks)
}

// armBookmarks sets timer for the first bucket of bookmarks to send; it
// reports whether that bucket is due already (a fake clock fires no timer
// set for the past).
func (c *Cache) armBookmarks(timer clock.Timer) bool {
	// A tick not yet taken goes: the bucket is worked out again below.
	select {
	case <-timer.C():
	default:
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.bookmarks.earliest()
	c.bookmarks.awaited = id
	if !ok {
		timer.Stop()
		return false
	}
	wait := c.bookmarks.bucketStart(id).Sub(c.opts.Clock.Now())
	if wait <= 0 {
		timer.Stop()
		return true
	}
	timer.Reset(wait)
	return false
}
