package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/grpclog"
)

func init() {
	// The tests' etcd clients dial members that are still starting or
	// were killed on purpose; gRPC would log every refused connection.
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
}

// etcdBinary is etcd's server, built from the etcd module kapi's tests
// already depend on, once, by the first test that needs it.
var etcdBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "kapi-e2e-etcd")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "etcd")
	out, err := exec.Command("go", "build", "-o", path, "go.etcd.io/etcd/server/v3").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building etcd: %v\n%s", err, out)
	}
	return path, nil
})

// etcdCluster is a cluster of etcd processes on loopback ports.
type etcdCluster struct {
	t       *testing.T
	members []*etcdMember
}

// etcdMember is one etcd process.
type etcdMember struct {
	t                  *testing.T
	name, dir          string
	clientURL, peerURL string
	initialCluster     string
	cmd                *exec.Cmd
	log                *syncBuffer
}

// startEtcdCluster starts n members and waits until the cluster answers.
func startEtcdCluster(t *testing.T, n int) *etcdCluster {
	t.Helper()
	binary, err := etcdBinary()
	if err != nil {
		t.Fatal(err)
	}
	c := &etcdCluster{t: t}
	var initial []string
	for i := range n {
		m := &etcdMember{
			t: t, name: fmt.Sprintf("member-%d", i+1), dir: t.TempDir(),
			clientURL: "http://" + freeAddress(t), peerURL: "http://" + freeAddress(t),
		}
		initial = append(initial, m.name+"="+m.peerURL)
		c.members = append(c.members, m)
	}
	for _, m := range c.members {
		m.initialCluster = strings.Join(initial, ",")
		m.start(binary)
		t.Cleanup(m.kill)
	}
	client := c.client()
	defer client.Close()
	waitFor(t, 30*time.Second, "the etcd cluster to answer", func() bool {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := client.Get(ctx, "health")
		return err == nil
	})
	return c
}

// endpoints are the members' client URLs, comma-separated as
// --etcd-servers takes them.
func (c *etcdCluster) endpoints() string {
	var urls []string
	for _, m := range c.members {
		urls = append(urls, m.clientURL)
	}
	return strings.Join(urls, ",")
}

// client is an etcd client of the whole cluster, for reading its history.
func (c *etcdCluster) client() *clientv3.Client {
	client, err := clientv3.New(clientv3.Config{
		Endpoints: strings.Split(c.endpoints(), ","), DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
	})
	if err != nil {
		c.t.Fatal(err)
	}
	return client
}

func (m *etcdMember) start(binary string) {
	m.log = &syncBuffer{}
	m.cmd = exec.Command(binary,
		"--name", m.name, "--data-dir", m.dir,
		"--listen-client-urls", m.clientURL, "--advertise-client-urls", m.clientURL,
		"--listen-peer-urls", m.peerURL, "--initial-advertise-peer-urls", m.peerURL,
		"--initial-cluster", m.initialCluster, "--initial-cluster-state", "new",
		"--initial-cluster-token", "kapi-e2e", "--log-level", "error",
		// A killed process loses nothing the kernel holds; the tests
		// kill processes, not machines.
		"--unsafe-no-fsync")
	m.cmd.Stdout, m.cmd.Stderr = m.log, m.log
	if err := m.cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
}

// kill ends the member with SIGKILL, as a crash would.
func (m *etcdMember) kill() {
	if m.cmd == nil || m.cmd.ProcessState != nil {
		return
	}
	m.cmd.Process.Kill()
	m.cmd.Wait()
}

// restart starts a killed member again on its data directory.
func (m *etcdMember) restart() {
	binary, _ := etcdBinary()
	m.start(binary)
}

// freeAddress is a loopback address no process listens on now.
func freeAddress(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
