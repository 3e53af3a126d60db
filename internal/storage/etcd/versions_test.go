package etcd_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/storage"
	"github.com/kapi-dev/kapi/internal/storage/etcd/etcdtest"
	"github.com/kapi-dev/kapi/internal/storage/storagetest"
)

// TestConformanceEtcdReleases runs the storage suite against the servers
// of the older etcd releases kapi supports (3.5 and 3.6; TestConformance
// runs 3.7), each built from its module in test/etcd-versions and run as
// its own process.
func TestConformanceEtcdReleases(t *testing.T) {
	for _, release := range []string{"3.5", "3.6"} {
		t.Run(release, func(t *testing.T) {
			binary := etcdtest.Build(t, filepath.Join("..", "..", "..", "test", "etcd-versions", "v"+release))
			endpoint, version := etcdtest.StartBinary(t, binary)
			if !strings.HasPrefix(version, release+".") {
				t.Fatalf("etcd reports version %s, want %s.x", version, release)
			}
			storagetest.Run(t, func(t *testing.T) storage.Store { return open(t, endpoint) })
		})
	}
}
