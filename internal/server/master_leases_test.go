package server

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"

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
	identities := func() []string {
		t.Helper()
		leases, err := client.CoordinationV1().Leases("kube-system").List(context.Background(), metav1.ListOptions{LabelSelector: identityLabel + "=kube-apiserver"})
		if err != nil {
			t.Fatal(err)
		}
		var peers []string
		for _, l := range leases.Items {
			peers = append(peers, strings.Split(l.Annotations[peerAddressAnnotation], ":")[0])
		}
		slices.Sort(peers)
		return peers
	}
	if got := identities(); !slices.Equal(got, []string{"192.0.2.10", "192.0.2.11"}) {
		t.Errorf("identity leases of %v, want both servers", got)
	}
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitAddresses("192.0.2.11")
	// As kube-apiserver, a server that stops deletes its identity Lease.
	if got := identities(); !slices.Equal(got, []string{"192.0.2.11"}) {
		t.Errorf("identity leases of %v after the first server stopped, want the second's", got)
	}
}

// TestKubernetesServiceOfReplicasOnTwoPorts: replicas advertising one
// address on different ports leave the kubernetes Service and its
// endpoints as they are once the last started has set its port, as
// kube-apiserver's bootstrap controller (before, each put its own port
// back on every round: a change every few seconds, forever).
func TestKubernetesServiceOfReplicasOnTwoPorts(t *testing.T) {
	opts := &etcd.Options{Endpoints: []string{etcdtest.Start(t)}}
	pki := t.TempDir()
	var clocks []*clocktesting.FakeClock
	start := func() *Server {
		clock := clocktesting.NewFakeClock(time.Now())
		s, err := Start(context.Background(), Config{
			DataDir: t.TempDir(), PKIDir: pki, Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler),
			OpenStorage: StorageBackend("etcd", "", opts), AdvertiseAddress: "192.0.2.10", SharedStorage: true, Clock: clock,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Shutdown(context.Background()) })
		clocks = append(clocks, clock)
		return s
	}
	start()
	second := start()
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(restConfig(t, second.Kubeconfig))
	secondPort := int32(second.listener.Addr().(*net.TCPAddr).Port)
	endpointsPort := func() int32 {
		ep, err := client.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil || len(ep.Subsets) != 1 || len(ep.Subsets[0].Ports) != 1 {
			return 0
		}
		return ep.Subsets[0].Ports[0].Port
	}
	// The replica started last sets the endpoints' port, as a starting
	// kube-apiserver does.
	poll(t, "the endpoints to name the second replica's port", func() (bool, error) { return endpointsPort() == secondPort, nil })
	services, err := client.CoreV1().Services("default").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=kubernetes"})
	if err != nil {
		t.Fatal(err)
	}
	watched, err := client.CoreV1().Endpoints("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=kubernetes", ResourceVersion: services.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer watched.Stop()
	serviceWatch, err := client.CoreV1().Services("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=kubernetes", ResourceVersion: services.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer serviceWatch.Stop()
	for range 5 {
		for _, clock := range clocks {
			clock.Step(kubernetesServiceInterval)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, w := range []watch.Interface{watched, serviceWatch} {
		select {
		case ev := <-w.ResultChan():
			t.Errorf("a round of repairs changed what needed no repair: %s %+v", ev.Type, ev.Object)
		default:
		}
	}
	if got := endpointsPort(); got != secondPort {
		t.Errorf("the endpoints name port %d, want %d", got, secondPort)
	}
}
