package etcdtest

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Build builds the etcd server of the Go module in dir (one of
// test/etcd-versions, which pin other etcd releases) into a temporary
// directory and returns the binary's path.
func Build(t testing.TB, dir string) string {
	t.Helper()
	binary := filepath.Join(t.TempDir(), "etcd")
	out, err := exec.Command("go", "build", "-C", dir, "-o", binary, "go.etcd.io/etcd/server/v3").CombinedOutput()
	if err != nil {
		t.Fatalf("building etcd in %s: %v\n%s", dir, err, out)
	}
	return binary
}

// StartBinary runs the etcd binary as a one-member cluster on free
// 127.0.0.1 ports, stops it when the test ends and returns its client URL
// and the version it reports.
func StartBinary(t testing.TB, binary string) (endpoint, version string) {
	t.Helper()
	clientURL, err := freeURL()
	if err != nil {
		t.Fatal(err)
	}
	peerURL, err := freeURL()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--name", "kapi-test", "--data-dir", t.TempDir(),
		"--listen-client-urls", clientURL.String(), "--advertise-client-urls", clientURL.String(),
		"--listen-peer-urls", peerURL.String(), "--initial-advertise-peer-urls", peerURL.String(),
		"--initial-cluster", "kapi-test="+peerURL.String(), "--log-level", "error", "--unsafe-no-fsync")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{clientURL.String()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		status, err := client.Status(ctx, clientURL.String())
		cancel()
		if err == nil {
			return clientURL.String(), status.Version
		}
		if time.Now().After(deadline) {
			t.Fatal(fmt.Errorf("etcd %s not ready within 30s: %w", binary, err))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
