package server

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/kapi-dev/kapi/internal/registry"
)

// eventResources are the resources whose objects expire, as
// kube-apiserver stores events with a lease of --event-ttl (events.k8s.io
// Events are stored as core ones).
var eventResources = []schema.GroupVersionResource{
	{Version: "v1", Resource: "events"},
}

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
			for _, gvr := range eventResources {
				if err := expire(ctx, reg.Snapshot().Lookup(gvr), now.Add(-ttl)); err != nil && ctx.Err() == nil {
					logger.Error("expiring events failed", "resource", gvr.GroupResource().String(), "err", err)
				}
			}
		}
	}
}

// expire deletes the objects of store last written before cutoff.
func expire(ctx context.Context, store *registry.Store, cutoff time.Time) error {
	if store == nil {
		return nil
	}
	expired := func(obj runtime.Object) bool {
		t := lastWritten(obj)
		return !t.IsZero() && t.Before(cutoff)
	}
	list, err := store.List(ctx, "", expired)
	if err != nil {
		return err
	}
	return meta.EachListItem(list, func(obj runtime.Object) error {
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		_, err = store.Delete(ctx, m.GetNamespace(), m.GetName(), func(current runtime.Object) error {
			if !expired(current) {
				return errRenewed
			}
			return nil
		})
		if apierrors.IsNotFound(err) || err == errRenewed {
			return nil
		}
		return err
	})
}

var errRenewed = apierrors.NewConflict(schema.GroupResource{Resource: "events"}, "", nil)

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
