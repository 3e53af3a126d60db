package server

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/internal/storage/etcd"
	"github.com/kapi-dev/kapi/internal/storage/etcd/etcdtest"
)

// TestKubernetesEndpointsOfReplicas: two servers sharing etcd both appear
// in the kubernetes Service's endpoints, and one that stops leaves them.
func TestKubernetesEndpointsOfReplicas(t *testing.T) {
	opts := &etcd.Options{Endpoints: []string{etcdtest.Start(t)}}
	pki := t.TempDir()
	start := func(address string) *Server {
		s, err := Start(context.Background(), Config{
			DataDir: t.TempDir(), PKIDir: pki, Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler),
			OpenStorage: StorageBackend("etcd", "", opts), AdvertiseAddress: address, SharedStorage: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := start("192.0.2.10")
	second := start("192.0.2.11")
	defer second.Shutdown(context.Background())
	client := kubernetes.NewForConfigOrDie(restConfig(t, second.Kubeconfig))
	addresses := func() []string {
		ep, err := client.CoreV1().Endpoints("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
		if err != nil || len(ep.Subsets) != 1 {
			return nil
		}
		var ips []string
		for _, a := range ep.Subsets[0].Addresses {
			ips = append(ips, a.IP)
		}
		slices.Sort(ips)
		return ips
	}
	waitAddresses := func(want ...string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for got := addresses(); !slices.Equal(got, want); got = addresses() {
			if time.Now().After(deadline) {
				t.Fatalf("kubernetes endpoints name %v, want %v", got, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitAddresses("192.0.2.10", "192.0.2.11")
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitAddresses("192.0.2.11")
}
