// Package e2e drives the real kapi binary with real clients: client-go and
// the kubectl installed on the machine.
package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	// The tests run the kapi binary, which TestMain builds; importing the
	// server makes go test's cache see changes to it.
	_ "github.com/kapi-dev/kapi/internal/server"
)

// kapiBinary is built once by TestMain.
var kapiBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kapi-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kapiBinary = filepath.Join(dir, "kapi")
	// Built as README.md says (the tag only drops code kapi never runs).
	args := []string{"build", "-tags", "grpcnotrace", "-o", kapiBinary}
	if os.Getenv("KAPI_E2E_RACE") != "" {
		args = append(args, "-race") // run the server under the race detector
	}
	build := exec.Command("go", append(args, "github.com/kapi-dev/kapi/cmd/kapi")...)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building kapi:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// kapi is one running kapi process.
type kapi struct {
	t       *testing.T
	dataDir string
	cmd     *exec.Cmd
	log     *syncBuffer
	config  *rest.Config
	args    []string // extra flags for serve, kept across restarts
	// measured leaves out the cache mutation detector (see command), which
	// keeps a copy of everything the informers saw in the last minutes,
	// for tests that measure the server's memory.
	measured bool
}

// startKapi starts kapi on a free loopback port with a new data directory,
// passing extraArgs (e.g. "--bookmark-interval", "1s") to serve.
// withoutRootCA leaves out the controller that puts a kube-root-ca.crt
// ConfigMap in every namespace, for tests that count the ConfigMaps they
// made or watch for their own events only.
const withoutRootCA = "--controllers=*,-root-ca-certificate-publisher-controller"

// withoutDeploymentController leaves Deployments alone, for tests of the
// API's own rules on them (generation, preconditions) that a controller
// writing their status at the same time would race with.
const withoutDeploymentController = "--controllers=*,-deployment-controller"

// onlyLifecycleControllers runs the namespace, service account and garbage
// collector controllers only (and the one that fills the aggregated
// ClusterRoles admin, edit and view, and those that take the protection
// finalizers off PersistentVolumes and claims), for tests whose output would change
// with the pods, ReplicaSets and CA ConfigMaps the other controllers create.
const onlyLifecycleControllers = "--controllers=namespace-controller,serviceaccount-controller,garbage-collector-controller,clusterrole-aggregation-controller," +
	"persistentvolumeclaim-protection-controller,persistentvolume-protection-controller"

func startKapi(t *testing.T, extraArgs ...string) *kapi {
	t.Helper()
	return launch(&kapi{t: t, dataDir: t.TempDir(), args: extraArgs})
}

// startMeasuredKapi is startKapi for a test that measures the server's
// memory.
func startMeasuredKapi(t *testing.T, extraArgs ...string) *kapi {
	t.Helper()
	return launch(&kapi{t: t, dataDir: t.TempDir(), args: extraArgs, measured: true})
}

func launch(k *kapi) *kapi {
	k.t.Helper()
	k.start()
	k.t.Cleanup(k.stop)
	return k
}

// command is the server's process on its data directory. Its in-process
// informers run client-go's cache mutation detector: they hold the watch
// cache's own objects, and a controller that changed one would change what
// every client reads, so the server panics instead.
func (k *kapi) command() *exec.Cmd {
	args := append([]string{"serve", "--data-dir", k.dataDir, "--listen", "127.0.0.1:0"}, k.args...)
	cmd := exec.Command(kapiBinary, args...)
	if !k.measured {
		cmd.Env = append(os.Environ(), "KUBE_CACHE_MUTATION_DETECTOR=true")
	}
	cmd.Stdout, cmd.Stderr = k.log, k.log
	return cmd
}

// start runs the binary on the data directory and waits until it is ready.
func (k *kapi) start() {
	t := k.t
	t.Helper()
	kubeconfig := filepath.Join(k.dataDir, "kubeconfig")
	os.Remove(kubeconfig) // the new process writes it once it listens
	k.log = &syncBuffer{}
	k.cmd = k.command()
	if err := k.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(kubeconfig); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kapi wrote no kubeconfig within 20s; log:\n%s", k.log)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	k.config = cfg
	k.waitReady(deadline)
}

func (k *kapi) waitReady(deadline time.Time) {
	// With the admin's credentials: a server started without anonymous
	// requests refuses /readyz without them, as kube-apiserver does.
	transport, err := rest.TransportFor(k.config)
	if err != nil {
		k.t.Fatal(err)
	}
	client := &http.Client{Transport: transport}
	for {
		resp, err := client.Get(k.config.Host + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("kapi not ready: %v; log:\n%s", err, k.log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop ends the process gracefully.
func (k *kapi) stop() {
	if k.cmd == nil || k.cmd.Process == nil || k.cmd.ProcessState != nil {
		return
	}
	k.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { k.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		k.cmd.Process.Kill()
		<-done
	}
	if strings.Contains(k.log.String(), "WARNING: DATA RACE") {
		k.t.Errorf("the server reported a data race:\n%s", k.log)
	}
}

// kill9 ends the process with SIGKILL, as a crash would.
func (k *kapi) kill9() {
	k.cmd.Process.Kill()
	k.cmd.Wait()
}

func (k *kapi) kubeconfig() string { return filepath.Join(k.dataDir, "kubeconfig") }

func (k *kapi) clientset() *kubernetes.Clientset {
	cs, err := kubernetes.NewForConfig(k.config)
	if err != nil {
		k.t.Fatal(err)
	}
	return cs
}

// kubectl runs the installed kubectl against this server.
func (k *kapi) kubectl(args ...string) (string, error) {
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", k.kubeconfig()}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+filepath.Join(k.dataDir, "kubectl-cache"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mustKubectl runs kubectl and fails the test if it fails.
func (k *kapi) mustKubectl(args ...string) string {
	k.t.Helper()
	out, err := k.kubectl(args...)
	if err != nil {
		k.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// rawClient is an HTTP client with the admin's credentials.
func (k *kapi) rawClient() *http.Client {
	rt, err := rest.TransportFor(k.config)
	if err != nil {
		k.t.Fatal(err)
	}
	return &http.Client{Transport: rt}
}

var ctx = context.Background()

// syncBuffer collects a process's output while tests may read it.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// apply runs kubectl apply on a manifest.
func apply(t *testing.T, k *kapi, manifest string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	k.mustKubectl("apply", "-f", path)
}

// waitFor polls done until it holds, failing the test after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }
