package server

import (
	"net/http"

	"k8s.io/apiserver/pkg/storage"
	storagemetrics "k8s.io/apiserver/pkg/storage/etcd3/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/kapi-dev/kapi/internal/registry"
)

// metricsHandler serves /metrics in Prometheus' text format: kube-apiserver's
// metrics (k8s.io/apiserver's request and watch metrics, which the filters
// and handlers record) and apiserver_storage_objects, counted from the
// watch caches when scraped.
func metricsHandler(reg *registry.Registry) http.Handler {
	storagemetrics.Register()
	metrics := legacyregistry.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, b := range reg.Snapshot().Backends() {
			storagemetrics.UpdateStoreStats(b.GroupResource, storage.Stats{ObjectCount: int64(b.Cache.Len())}, nil)
		}
		metrics.ServeHTTP(w, r)
	})
}
