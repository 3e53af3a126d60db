package cache

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	cachermetrics "k8s.io/apiserver/pkg/storage/cacher/metrics"
	storagemetrics "k8s.io/apiserver/pkg/storage/etcd3/metrics"
	compbasemetrics "k8s.io/component-base/metrics"
)

// The watch cache reports kube-apiserver's watch cache metrics
// (k8s.io/apiserver's cacher metrics, in its global registry, served on
// /metrics): initializations and their duration, events received from
// storage and dispatched to watchers, watchers ended for being too slow,
// lists served and the objects they looked at and returned, and
// consistent reads. Its reads of storage are in the storage metrics
// kube-apiserver records of etcd (lists, their latency, events). The
// resource version reached is recorded when /metrics is scraped.
func init() { cachermetrics.Register() }

// metrics are one cache's counters, looked up once rather than per event.
type metrics struct {
	resource                                          schema.GroupResource
	initializations, received, dispatched, terminated compbasemetrics.CounterMetric
}

func newMetrics(resource schema.GroupResource) metrics {
	group, name := resource.Group, resource.Resource
	return metrics{
		resource:        resource,
		initializations: cachermetrics.WatchCacheInitializations.WithLabelValues(group, name),
		received:        cachermetrics.EventsReceivedCounter.WithLabelValues(group, name),
		dispatched:      cachermetrics.EventsCounter.WithLabelValues(group, name),
		terminated:      cachermetrics.TerminatedWatchersCounter.WithLabelValues(group, name),
	}
}

// receivedEvent records an event from the storage watch, in both the
// cache's count and storage's (apiserver_storage_events_received_total).
func (m metrics) receivedEvent() {
	m.received.Inc()
	storagemetrics.RecordEtcdEvent(m.resource)
}

// initialized records an initialization from a storage list of n objects
// that started at start.
func (m metrics) initialized(start time.Time, n int) {
	m.initializations.Inc()
	cachermetrics.WatchCacheInitializationDuration.WithLabelValues(m.resource.Group, m.resource.Resource).Observe(time.Since(start).Seconds())
	m.listedStorage(start, n, n, n)
}

// listedStorage records a list read from storage.
func (m metrics) listedStorage(start time.Time, fetched, evaluated, returned int) {
	storagemetrics.RecordStorageListMetrics(m.resource, "", fetched, evaluated, returned)
	storagemetrics.RecordListLatency(m.resource, false, start)
}

// listedCache records a list served from the cache.
func (m metrics) listedCache(fetched, returned int) {
	cachermetrics.RecordListCacheMetrics(m.resource, "", fetched, returned)
}

// consistentRead records a consistent read served from the cache (the
// cache never falls back to storage).
func (m metrics) consistentRead(err error) {
	success := "true"
	if err != nil {
		success = "false"
	}
	cachermetrics.ConsistentReadTotal.WithLabelValues(m.resource.Group, m.resource.Resource, success, "false").Inc()
}
