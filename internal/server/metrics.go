package server

import (
	"context"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/storage"
	cachermetrics "k8s.io/apiserver/pkg/storage/cacher/metrics"
	storagemetrics "k8s.io/apiserver/pkg/storage/etcd3/metrics"
	liststoragemetrics "k8s.io/apiserver/pkg/storage/metrics"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/prometheus/compatversion"
	// client-go's request metrics (rest_client_*), as kube-apiserver
	// registers them: here they count the in-process controllers' requests
	// too.
	_ "k8s.io/component-base/metrics/prometheus/restclient"

	"github.com/kapi-dev/kapi/internal/registry"
	kapistorage "github.com/kapi-dev/kapi/internal/storage"
)

// kapi's own storage figures, beside kube-apiserver's metrics.
var (
	storageRevision = metrics.NewGauge(&metrics.GaugeOpts{
		Name: "kapi_storage_revision", Help: "The storage's current revision (the newest resource version).", StabilityLevel: metrics.ALPHA,
	})
	storageCompactedRevision = metrics.NewGauge(&metrics.GaugeOpts{
		Name: "kapi_storage_compacted_revision", Help: "The revision storage history was last compacted to: older resource versions get 410 Gone.", StabilityLevel: metrics.ALPHA,
	})
	registerMetrics sync.Once

	// buildInfo is kube-apiserver's kubernetes_build_info, of the release
	// kapi emulates and kapi's own commit and build (see Version);
	// component-base's would report the version its build flags set,
	// which kapi's builds do not.
	buildInfo = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Name:           "kubernetes_build_info",
		Help:           "A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.",
		StabilityLevel: metrics.BETA,
	}, []string{"major", "minor", "git_version", "git_commit", "git_tree_state", "build_date", "go_version", "compiler", "platform"})
)

// recordVersionAndFeatures sets the metrics of what the server is: its
// build, the versions it emulates and stays compatible with
// (version_info), and whether each feature gate is on
// (kubernetes_feature_enabled), as kube-apiserver records them once its
// flags are read.
func recordVersionAndFeatures(ctx context.Context, v version.Info) {
	buildInfo.WithLabelValues(v.Major, v.Minor, v.GitVersion, v.GitCommit, v.GitTreeState, v.BuildDate, v.GoVersion, v.Compiler, v.Platform).Set(1)
	compatversion.RecordCompatVersionInfo(ctx, "kube", v.Major+"."+v.Minor, v.EmulationMajor+"."+v.EmulationMinor,
		v.MinCompatibilityMajor+"."+v.MinCompatibilityMinor)
	utilfeature.DefaultMutableFeatureGate.AddMetrics()
}

// metricsHandler serves /metrics in Prometheus' text format: kube-apiserver's
// metrics (k8s.io/apiserver's request, watch and watch cache metrics,
// which the filters, handlers and caches record), apiserver_storage_objects
// and apiserver_watch_cache_resource_version read from the watch caches and
// apiserver_storage_size_bytes from the store when scraped, and kapi's
// storage revisions.
func metricsHandler(reg *registry.Registry, store kapistorage.Store, ver version.Info) http.Handler {
	registerMetrics.Do(func() {
		storagemetrics.Register()
		liststoragemetrics.Register()
		legacyregistry.MustRegister(storageRevision, storageCompactedRevision, buildInfo)
	})
	recordVersionAndFeatures(context.Background(), ver)
	if sized, ok := store.(interface{ SizeBytes() int64 }); ok {
		storagemetrics.SetStorageMonitorGetter(func() ([]storagemetrics.Monitor, error) {
			return []storagemetrics.Monitor{sizeMonitor{sized}}, nil
		})
	}
	// As kube-apiserver's, a DELETE resets the metrics.
	handler := legacyregistry.HandlerWithReset()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, b := range reg.Snapshot().Backends() {
			storagemetrics.UpdateStoreStats(b.GroupResource, storage.Stats{ObjectCount: int64(b.Cache.Len())}, nil)
			cachermetrics.RecordResourceVersion(b.GroupResource, uint64(b.Cache.Revision()))
		}
		if rev, err := store.CurrentRevision(r.Context()); err == nil {
			storageRevision.Set(float64(rev))
		}
		storageCompactedRevision.Set(float64(store.CompactedRevision()))
		handler.ServeHTTP(w, r)
	})
}

// sizeMonitor reports the store's size as kube-apiserver reports etcd's.
type sizeMonitor struct {
	store interface{ SizeBytes() int64 }
}

func (m sizeMonitor) Monitor(context.Context) (storagemetrics.StorageMetrics, error) {
	return storagemetrics.StorageMetrics{Size: m.store.SizeBytes()}, nil
}

func (sizeMonitor) Close() error { return nil }
