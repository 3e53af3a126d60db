// Package kapitest starts a real Kubernetes API server (kapi) inside a Go
// test process, in place of envtest's kube-apiserver and etcd binaries:
// no download, no separate process, storage in memory, and the namespace,
// garbage collector, workload and quota controllers running as in a
// cluster. Each Env is isolated; many run in parallel in one process.
//
//	func TestReconciler(t *testing.T) {
//		env := kapitest.Start(t, kapitest.WithCRDs("config/crd/bases"))
//		client := kubernetes.NewForConfigOrDie(env.Config)
//		...
//	}
package kapitest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapi-dev/kapi/internal/server"
	"github.com/kapi-dev/kapi/internal/storage/pebble"
)

// Env is a running server.
type Env struct {
	// Config reaches the server as its admin (group system:masters).
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig for tools such as kubectl.
	Kubeconfig string
	// Webhooks is where the test serves the webhooks installed with
	// WithWebhooks or WithWebhookObjects; nil without them.
	Webhooks *Webhooks

	server *server.Server
}

// Option changes how Start starts the server.
type Option func(*options)

type options struct {
	onDisk   bool
	crdPaths []string
	crds     []*apiextensionsv1.CustomResourceDefinition
	logs     io.Writer

	webhookPaths   []string
	webhookObjects []any
	simulatedNodes int
}

// OnDisk keeps the data in the test's temporary directory instead of in
// memory.
func OnDisk() Option { return func(o *options) { o.onDisk = true } }

// WithCRDs installs the CustomResourceDefinitions in the given YAML files,
// or in the .yaml and .yml files of the given directories, and waits until
// they are established and their resources served.
func WithCRDs(paths ...string) Option {
	return func(o *options) { o.crdPaths = append(o.crdPaths, paths...) }
}

// WithCRDObjects installs the given CustomResourceDefinitions and waits
// until they are established and their resources served.
func WithCRDObjects(crds ...*apiextensionsv1.CustomResourceDefinition) Option {
	return func(o *options) { o.crds = append(o.crds, crds...) }
}

// WithSimulatedNodes registers n simulated nodes (node-1 to node-n) whose
// kubelet the server plays: scheduled pods become Running and Ready, Job
// pods succeed, claims of the default StorageClass get volumes (see kapi's
// README).
func WithSimulatedNodes(n int) Option { return func(o *options) { o.simulatedNodes = n } }

// WithLogs sends the server's log to w, in log/slog's text format at level
// Info (by default it is discarded). Kubernetes code that logs through
// klog's global logger is not included: klog is shared by the whole
// process, which may run many servers.
func WithLogs(w io.Writer) Option { return func(o *options) { o.logs = w } }

// Start starts a server for the test and stops it when the test ends.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	env, err := New(t.TempDir(), opts...)
	if err != nil {
		t.Fatalf("kapitest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("kapitest: stopping the server: %v", err)
		}
	})
	return env
}

// New starts a server outside a single test (in TestMain, for a whole
// package) with its files in dir; Stop ends it.
func New(dir string, opts ...Option) (*Env, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	env, err := start(dir, o)
	if err != nil {
		return nil, err
	}
	if err := installCRDs(env.Config, o); err != nil {
		env.Stop()
		return nil, err
	}
	if env.Webhooks, err = installWebhooks(env.Config, dir, o); err != nil {
		env.Stop()
		return nil, err
	}
	return env, nil
}

// UserConfig is a client configuration that the server authenticates as
// the given user in the given groups (with a client certificate it
// issues), for tests of what a user other than the admin sees.
func (e *Env) UserConfig(user string, groups ...string) (*rest.Config, error) {
	certPEM, keyPEM, err := e.server.ClientCertificate(user, groups...)
	if err != nil {
		return nil, err
	}
	config := rest.AnonymousClientConfig(e.Config)
	config.CertData, config.KeyData = certPEM, keyPEM
	return config, nil
}

// Stop stops the server, letting requests in flight finish, and ends
// every goroutine it started.
func (e *Env) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return e.server.Shutdown(ctx)
}

func start(dir string, o options) (*Env, error) {
	logger := slog.New(slog.DiscardHandler)
	if o.logs != nil {
		logger = slog.New(slog.NewTextHandler(o.logs, nil))
	}
	cfg := server.Config{
		DataDir:        dir,
		Listen:         "127.0.0.1:0",
		SimulatedNodes: o.simulatedNodes,
		Logger:         logger,
	}
	if !o.onDisk {
		cfg.OpenStorage = pebble.InMemory()
	}
	s, err := server.Start(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	config, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	if err != nil {
		s.Shutdown(context.Background())
		return nil, err
	}
	// A test's client need not wait for a rate limiter.
	config.QPS, config.Burst = -1, -1
	return &Env{Config: config, Kubeconfig: s.Kubeconfig, server: s}, nil
}

// installCRDs creates the CRDs of o and waits until each is established.
func installCRDs(config *rest.Config, o options) error {
	crds := append([]*apiextensionsv1.CustomResourceDefinition(nil), o.crds...)
	for _, path := range o.crdPaths {
		read, err := readCRDs(path)
		if err != nil {
			return err
		}
		crds = append(crds, read...)
	}
	if len(crds) == 0 {
		return nil
	}
	client, err := apiextensionsclient.NewForConfig(config)
	if err != nil {
		return err
	}
	ctx := context.Background()
	for _, crd := range crds {
		if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
		}
	}
	disco, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			return established(ctx, client, crd.Name) && served(disco, crd), nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established and served: %w", crd.Name, err)
		}
	}
	return nil
}

// established reports whether a CRD has the Established condition.
func established(ctx context.Context, client apiextensionsclient.Interface, name string) bool {
	got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	for _, c := range got.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// served reports whether discovery lists a CRD's resource in every served
// version: then requests for it are served.
func served(disco discovery.DiscoveryInterface, crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		list, err := disco.ServerResourcesForGroupVersion(crd.Spec.Group + "/" + v.Name)
		if err != nil {
			return false
		}
		found := false
		for _, r := range list.APIResources {
			found = found || r.Name == crd.Spec.Names.Plural
		}
		if !found {
			return false
		}
	}
	return true
}

// readCRDs reads the CRDs of a YAML file, or of the YAML files of a
// directory; other kinds are skipped.
func readCRDs(path string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := yamlFiles(path)
	if err != nil {
		return nil, err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, file := range files {
		err := eachDocument(file, func(raw []byte) error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := utilyaml.Unmarshal(raw, crd); err != nil {
				return err
			}
			if crd.Kind == "CustomResourceDefinition" {
				crds = append(crds, crd)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	return crds, nil
}
