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
// ttl ago, as etcd's leases delete kube-apiserver's. An event's last write
// is read from its own timestamps (kapi's storage keeps no write times),
// which every writer of events sets.
func expireEvents(ctx context.Context, reg *registry.Registry, clk clock.WithTicker, ttl time.Duration, logger *slog.Logger) {
	tick := clk.NewTicker(max(ttl/60, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C():
			if err := expire(ctx, reg.Snapshot().Backend(events), now.Add(-ttl)); err != nil && ctx.Err() == nil {
				logger.Error("expiring events failed", "err", err)
			}
		}
	}
}

// errRenewed: the event was written again since it was found expired.
var errRenewed = errors.New("renewed")

// expire deletes the objects of a backend last written before cutoff,
// found in its watch cache; each is checked again as it is deleted.
func expire(ctx context.Context, b *registry.Backend, cutoff time.Time) error {
	if b == nil {
		return nil
	}
	expired := func(obj runtime.Object) bool {
		t := lastWritten(obj)
		return !t.IsZero() && t.Before(cutoff)
	}
	found, err := b.Cache.List(ctx, cache.ListRequest{Consistency: cache.Any, Filter: cache.Filter{Prefix: b.Storage().CollectionPrefix(""), Match: expired}})
	if err != nil {
		return err
	}
	for _, obj := range found.Items {
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		_, err = b.Storage().Delete(ctx, m.GetNamespace(), m.GetName(), func(current runtime.Object) error {
			if !expired(current) {
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

// lastWritten is the latest of an event's timestamps (zero for an object
// not an event).
func lastWritten(obj runtime.Object) time.Time {
	var times []metav1.Time
	switch e := obj.(type) {
	case *corev1.Event:
		times = []metav1.Time{e.CreationTimestamp, e.FirstTimestamp, e.LastTimestamp, metav1.Time(e.EventTime)}
		if e.Series != nil {
			times = append(times, metav1.Time(e.Series.LastObservedTime))
		}
	default:
		return time.Time{}
	}
	var latest time.Time
	for _, t := range times {
		if t.After(latest) {
			latest = t.Time
		}
	}
	return latest
}
