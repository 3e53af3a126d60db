package cache

import (
	compbasemetrics "k8s.io/component-base/metrics"

	cachermetrics "k8s.io/apiserver/pkg/storage/cacher/metrics"
)

// The watch cache reports kube-apiserver's watch cache metrics
// (k8s.io/apiserver's cacher metrics, in its global registry, served on
// /metrics): initializations, events received from storage and
// dispatched to watchers, and watchers ended for being too slow. The
// resource version reached is recorded when /metrics is scraped.
func init() { cachermetrics.Register() }

// metrics are one cache's counters, looked up once rather than per event.
type metrics struct {
	initializations, received, dispatched, terminated compbasemetrics.CounterMetric
}

func newMetrics(group, resource string) metrics {
	return metrics{
		initializations: cachermetrics.WatchCacheInitializations.WithLabelValues(group, resource),
		received:        cachermetrics.EventsReceivedCounter.WithLabelValues(group, resource),
		dispatched:      cachermetrics.EventsCounter.WithLabelValues(group, resource),
		terminated:      cachermetrics.TerminatedWatchersCounter.WithLabelValues(group, resource),
	}
}
