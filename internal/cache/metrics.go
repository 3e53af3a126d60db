package cache

import (
	cachermetrics "k8s.io/apiserver/pkg/storage/cacher/metrics"
)

// The watch cache reports kube-apiserver's watch cache metrics
// (k8s.io/apiserver's cacher metrics, in its global registry, served on
// /metrics): initializations, events received from storage and
// dispatched to watchers, watchers ended for being too slow, and the
// resource version reached.
func init() { cachermetrics.Register() }

func (c *Cache) recordInitialization() {
	cachermetrics.WatchCacheInitializations.WithLabelValues(c.opts.Resource.Group, c.opts.Resource.Resource).Inc()
}

func (c *Cache) recordEvent(rev int64) {
	group, resource := c.opts.Resource.Group, c.opts.Resource.Resource
	cachermetrics.EventsReceivedCounter.WithLabelValues(group, resource).Inc()
	if len(c.watchers) > 0 {
		cachermetrics.EventsCounter.WithLabelValues(group, resource).Inc()
	}
	cachermetrics.RecordResourceVersion(c.opts.Resource, uint64(rev))
}

func (c *Cache) recordTerminatedWatcher() {
	cachermetrics.TerminatedWatchersCounter.WithLabelValues(c.opts.Resource.Group, c.opts.Resource.Resource).Inc()
}
