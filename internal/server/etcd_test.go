package server

import (
	"context"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/internal/storage/etcd"
	"github.com/kapi-dev/kapi/internal/storage/etcd/etcdtest"
)

// TestEtcdStorage runs a server over an etcd started by the test, writes a
// ConfigMap through client-go, and reads it back from a second server, with
// a data directory of its own, over the same etcd.
func TestEtcdStorage(t *testing.T) {
	opts := &etcd.Options{Endpoints: []string{etcdtest.Start(t)}, Prefix: "/kapi-test"}
	start := func() (*Server, *kubernetes.Clientset) {
		t.Helper()
		s, err := Start(context.Background(), Config{
			DataDir: t.TempDir(), Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler),
			OpenStorage: StorageBackend("etcd", "", opts),
		})
		if err != nil {
			t.Fatal(err)
		}
		return s, kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	}
	ctx := context.Background()
	s, client := start()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}, Data: map[string]string{"k": "v"}}
	created, err := client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v" || got.ResourceVersion != created.ResourceVersion {
		t.Fatalf("read back: %+v, %v", got, err)
	}
	shutdown(t, s)

	s, client = start()
	defer shutdown(t, s)
	got, err = client.CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v" || got.UID != created.UID || got.ResourceVersion != created.ResourceVersion {
		t.Fatalf("after restart over the same etcd: %+v, %v", got, err)
	}
	list, err := client.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) == 0 {
		t.Fatalf("list after restart: %+v, %v", list, err)
	}
}
