package server

import (
	"bytes"
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestStoredEncodings: built-in objects are stored in Kubernetes' protobuf
// envelope, as kube-apiserver stores them in etcd; one stored in JSON (as
// kapi stored them before) is still served, and is stored in protobuf
// once written again.
func TestStoredEncodings(t *testing.T) {
	s := startServer(t, onlyLifecycle...)
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	cms := client.CoreV1().ConfigMaps("default")
	stored := func(name string) []byte {
		t.Helper()
		kv, _, err := s.store.Get(ctx, []byte("/registry/core/configmaps/default/"+name), 0)
		if err != nil {
			t.Fatal(err)
		}
		return kv.Value
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if value := stored("new"); !bytes.HasPrefix(value, []byte("k8s\x00")) {
		t.Errorf("a new ConfigMap is stored as %q, want protobuf", value[:min(len(value), 20)])
	}

	old := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"old","namespace":"default","uid":"0b4e6c6c-1f5a-4c1a-9b8e-3f0c1d2e3f40","creationTimestamp":"2026-01-01T00:00:00Z"},"data":{"k":"v"}}`
	if _, err := s.store.Create(ctx, []byte("/registry/core/configmaps/default/old"), []byte(old)); err != nil {
		t.Fatal(err)
	}
	var got string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) { // the watch cache sees the write
		cm, err := cms.Get(ctx, "old", metav1.GetOptions{})
		if err == nil {
			got = cm.Data["k"]
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got != "v" {
		t.Fatalf("the ConfigMap stored in JSON reads with data %q", got)
	}
	cm, err := cms.Get(ctx, "old", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "w"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if value := stored("old"); !bytes.HasPrefix(value, []byte("k8s\x00")) {
		t.Errorf("the updated ConfigMap is stored as %q, want protobuf", value[:min(len(value), 20)])
	}
}
