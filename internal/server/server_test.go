package server

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/asn1"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"

	"github.com/kapi-dev/kapi/internal/controllers"
	"github.com/kapi-dev/kapi/internal/storage"
	"github.com/kapi-dev/kapi/internal/storage/pebble"
)

func startServer(t *testing.T, selection ...string) *Server {
	t.Helper()
	return startServerWith(t, Config{Controllers: controllers.Selection(selection)})
}

// startServerWith starts a server of cfg in memory, on a free loopback
// port, with a temporary data directory; the test's cleanup stops it.
func startServerWith(t *testing.T, cfg Config) *Server {
	t.Helper()
	cfg.DataDir, cfg.Listen, cfg.Logger = t.TempDir(), "127.0.0.1:0", slog.New(slog.DiscardHandler)
	cfg.OpenStorage = StorageBackend("memory", "", nil)
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s
}

func restConfig(t *testing.T, kubeconfig string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestTwoServersInOneProcess runs two servers, each with its own CA, side
// by side: each serves its own clients and refuses the other's, also after
// having accepted its own (nothing is shared between them).
func TestTwoServersInOneProcess(t *testing.T) {
	a, b := startServer(t), startServer(t)
	ctx := context.Background()
	for _, s := range []*Server{a, b} {
		client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mine"}}
		if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("own client of %s: %v", s.URL, err)
		}
	}
	for _, pair := range []struct{ server, credentials *Server }{{a, b}, {b, a}} {
		cfg := restConfig(t, pair.credentials.Kubeconfig)
		cfg.Host = pair.server.URL
		cfg.TLSClientConfig.Insecure, cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile = true, nil, ""
		client := kubernetes.NewForConfigOrDie(cfg)
		_, err := client.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Errorf("client of %s against %s: %v, want 401", pair.credentials.URL, pair.server.URL, err)
		}
	}
}

// TestFailedStartLeavesNothingRunning starts a server on a port that is
// taken: Start fails after storage, caches and controllers are up, and
// must stop them all.
func TestFailedStartLeavesNothingRunning(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	before := runtime.NumGoroutine()
	_, err = Start(context.Background(), Config{
		DataDir: t.TempDir(), Listen: taken.Addr().String(), Logger: slog.New(slog.DiscardHandler),
	})
	if err == nil {
		t.Fatal("second server on the same port started")
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after the failed start, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestWritesAdmittedWhileTheServerStops: once Shutdown has stopped the
// background work, the controllers' last requests are still being
// answered; the quota plugin's workers, which every create of a counted
// resource waits for, must still be there for them (its wait is 10 s,
// then a 500).
func TestWritesAdmittedWhileTheServerStops(t *testing.T) {
	s := startServer(t, "-*")
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	s.stop() // as close does first, before waiting for the controllers
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "last"}}
	if _, err := client.CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a create after the background work stopped: %v", err)
	}
}

// TestShutdownTwice: a second Shutdown (a test's own, then its cleanup's)
// returns instead of panicking.
func TestShutdownTwice(t *testing.T) {
	s := startServer(t, "-*")
	shutdown(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.Shutdown(ctx) // its error (storage already closed) is not the point
}

// TestStartSyncedOnceServing: the start's writes skip their syncs, but
// a crash once Start has returned keeps every one of them.
func TestStartSyncedOnceServing(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s, err := Start(context.Background(), Config{
		DataDir: t.TempDir(), Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler), Controllers: controllers.Selection{"-*"},
		OpenStorage: func() (storage.Store, error) { return pebble.OpenWith("db", pebble.Options{FS: fs}) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, s)
	served, _ := s.store.CurrentRevision(context.Background())
	crashed, err := pebble.OpenWith("db", pebble.Options{FS: fs.CrashClone(vfs.CrashCloneCfg{})})
	if err != nil {
		t.Fatal(err)
	}
	defer crashed.Close()
	if kept, _ := crashed.CurrentRevision(context.Background()); kept < served {
		t.Fatalf("a crash once serving kept revision %d of the start's %d", kept, served)
	}
}

// TestServiceIPRepairAtStart: a ClusterIP whose IPAddress is missing gets
// it back when the server starts, as kube-apiserver's repair controller
// restores it.
func TestServiceIPRepairAtStart(t *testing.T) {
	dir := t.TempDir()
	start := func() (*Server, *kubernetes.Clientset) {
		s, err := Start(context.Background(), Config{DataDir: dir, Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return s, kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	}
	ctx := context.Background()
	s, client := start()
	svc, err := client.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ip := svc.Spec.ClusterIP
	if err := client.NetworkingV1().IPAddresses().Delete(ctx, ip, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	shutdown(t, s)
	s, client = start()
	defer shutdown(t, s)
	address, err := client.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{})
	if err != nil || address.Spec.ParentRef == nil || address.Spec.ParentRef.Name != "web" {
		t.Fatalf("IPAddress %s after the restart: %+v, %v", ip, address, err)
	}
}

func shutdown(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Error(err)
	}
}

// TestHandshakeNamesTheClientCAs: the TLS handshake names the CAs whose
// client certificates authenticate (kapi's own and --client-ca-file's),
// as kube-apiserver's does, for clients that choose a certificate by them.
func TestHandshakeNamesTheClientCAs(t *testing.T) {
	certPEM, _, err := certutil.GenerateSelfSignedCertKey("operators-ca", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServerWith(t, Config{ClientCAFile: caFile})
	names := func(prefix string) func(string) bool {
		return func(n string) bool { return strings.HasPrefix(n, prefix) }
	}
	if named := handshakeCAs(t, s); !slices.Contains(named, "kapi-ca") || !slices.ContainsFunc(named, names("operators-ca-ca@")) {
		t.Errorf("acceptable CAs named in the handshake: %q", named)
	}
	// The file read again, the handshake names its new CA.
	certPEM, _, err = certutil.GenerateSelfSignedCertKey("rotated", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(caFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		named := handshakeCAs(t, s)
		if slices.ContainsFunc(named, names("rotated-ca@")) && !slices.ContainsFunc(named, names("operators-ca-ca@")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("acceptable CAs named after the file changed: %q", named)
		}
	}
}

// handshakeCAs are the common names of the CAs s names as acceptable in a
// TLS handshake.
func handshakeCAs(t *testing.T, s *Server) []string {
	t.Helper()
	var named []string
	conn, err := tls.Dial("tcp", strings.TrimPrefix(s.URL, "https://"), &tls.Config{
		InsecureSkipVerify: true,
		GetClientCertificate: func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
			for _, raw := range cri.AcceptableCAs {
				var name pkix.RDNSequence
				if _, err := asn1.Unmarshal(raw, &name); err == nil {
					var subject pkix.Name
					subject.FillFromRDNSequence(&name)
					named = append(named, subject.CommonName)
				}
			}
			return &tls.Certificate{}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	return named
}
