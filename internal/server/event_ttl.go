package server

import (
	"context"
	"errors"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/registry"
)

// events is the resource whose objects expire, as kube-apiserver stores
// events with a lease of --event-ttl (events.k8s.io Events are stored as
// core ones).
var events = schema.GroupResource{Resource: "events"}

// expireEvents deletes, every ttl/60, the events last written more than
// ttl ago, as etcd's leases delete kube-apiserver's (a lease per write:
// an event lives ttl after its last write, whatever its content says).
// kapi's storage keeps no write times, so the expirer notes them: a
// resourceVersion it has not seen was written by the tick it is seen at;
// the events there when the server started were last written at their
// latest timestamp (at the latest now).
func expireEvents(ctx context.Context, reg *registry.Registry, clk clock.WithTicker, ttl time.Duration, logger *slog.Logger) {
	tick := clk.NewTicker(max(ttl/60, time.Second))
	defer tick.Stop()
	writes := &eventWrites{seen: map[string]eventWrite{}}
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C():
			if err := writes.expire(ctx, reg.Snapshot().Backend(events), now, now.Add(-ttl)); err != nil && ctx.Err() == nil {
				logger.Error("expiring events failed", "err", err)
			}
		}
	}
}

// eventWrites are the events' last writes as the expirer saw them, by
// storage key.
type eventWrites struct {
	seen   map[string]eventWrite
	primed bool // it has looked once
}

type eventWrite struct {
	resourceVersion string
	at              time.Time
}

// errRenewed: the event was written again since it was found expired.
var errRenewed = errors.New("renewed")

// expire notes the writes of a backend's objects made since it last
// looked (at now), then deletes those last written before cutoff; each is
// checked again as it is deleted.
func (w *eventWrites) expire(ctx context.Context, b *registry.Backend, now, cutoff time.Time) error {
	if b == nil {
		return nil
	}
	first := !w.primed
	all, err := b.Cache.List(ctx, cache.ListRequest{Consistency: cache.Any, Filter: cache.Filter{Prefix: b.Storage().CollectionPrefix("")}})
	if err != nil {
		return err
	}
	present := map[string]bool{}
	var expired []metav1.Object
	for _, obj := range all.Items {
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		key := b.Storage().Key(m.GetNamespace(), m.GetName())
		present[key] = true
		if seen, ok := w.seen[key]; !ok || seen.resourceVersion != m.GetResourceVersion() {
			at := now
			if first {
				at = lastWritten(obj, now)
			}
			w.seen[key] = eventWrite{m.GetResourceVersion(), at}
		}
		if w.seen[key].at.Before(cutoff) {
			expired = append(expired, m)
		}
	}
	w.primed = true
	for key := range w.seen {
		if !present[key] {
			delete(w.seen, key)
		}
	}
	for _, m := range expired {
		_, err = b.Storage().Delete(ctx, m.GetNamespace(), m.GetName(), func(current runtime.Object) error {
			if cm, err := meta.Accessor(current); err != nil || cm.GetResourceVersion() != m.GetResourceVersion() {
				return errRenewed
			}
			return nil
		})
		if err != nil && !apierrors.IsNotFound(err) && !errors.Is(err, errRenewed) {
			return err
		}
	}
	return nil
}

// lastWritten is the latest of an event's timestamps, at the latest now
// (now for an object not an event).
func lastWritten(obj runtime.Object, now time.Time) time.Time {
	var times []metav1.Time
	switch e := obj.(type) {
	case *corev1.Event:
		times = []metav1.Time{e.CreationTimestamp, e.FirstTimestamp, e.LastTimestamp, metav1.Time(e.EventTime)}
		if e.Series != nil {
			times = append(times, metav1.Time(e.Series.LastObservedTime))
		}
	default:
		return now
	}
	var latest time.Time
	for _, t := range times {
		if t.After(latest) {
			latest = t.Time
		}
	}
	if latest.IsZero() || latest.After(now) {
		return now
	}
	return latest
}
