// Package etcdtest starts a one-member etcd server inside a test process
// (etcd's own server code, go.etcd.io/etcd/server/v3/embed), for tests of
// the etcd storage backend and of servers over it. Only tests import it.
package etcdtest

import (
	"fmt"
	"net"
	"net/url"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
)

// Start starts etcd on free 127.0.0.1 ports with its data in a temporary
// directory, stops it when the test ends and returns its client URL.
func Start(t testing.TB) string {
	t.Helper()
	return start(t, nil)
}

// StartTLS is Start for an etcd that serves its clients over TLS with
// files' certificates and accepts only clients with a certificate its CA
// signed.
func StartTLS(t testing.TB, files TLSFiles) string {
	t.Helper()
	return start(t, &files)
}

func start(t testing.TB, files *TLSFiles) string {
	dir := t.TempDir()
	var lastErr error
	// Free ports are found by binding and releasing them, so another
	// process may take one first: try a few times.
	for attempt := 0; attempt < 3; attempt++ {
		e, err := startOnce(dir, attempt, files)
		if err != nil {
			lastErr = err
			continue
		}
		t.Cleanup(e.Close)
		return e.Config().AdvertiseClientUrls[0].String()
	}
	t.Fatalf("starting etcd: %v", lastErr)
	return ""
}

func startOnce(dir string, attempt int, files *TLSFiles) (*embed.Etcd, error) {
	clientURL, err := freeURL()
	if err != nil {
		return nil, err
	}
	if files != nil {
		clientURL.Scheme = "https"
	}
	peerURL, err := freeURL()
	if err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Name = "kapi-test"
	cfg.Dir = fmt.Sprintf("%s/etcd-%d", dir, attempt)
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	cfg.InitialCluster = cfg.Name + "=" + peerURL.String()
	cfg.LogLevel = "error"
	cfg.UnsafeNoFsync = true // tests need no durability across crashes
	if files != nil {
		cfg.ClientTLSInfo = transport.TLSInfo{
			CertFile: files.ServerCert, KeyFile: files.ServerKey, TrustedCAFile: files.CA, ClientCertAuth: true,
		}
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, err
	case <-time.After(30 * time.Second):
		e.Close()
		return nil, fmt.Errorf("etcd not ready within 30s")
	}
}

func freeURL() (*url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	return url.Parse("http://" + addr)
}
