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
	"os"
	"path/filepath"
	"strings"
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
	"k8s.io/kubernetes/pkg/capabilities"

	"github.com/kapi-dev/kapi/internal/auth"
	"github.com/kapi-dev/kapi/internal/controllers"
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
	logs   *stoppingHandler
	// tempDir is the directory New made for the server's files, which Stop
	// removes.
	tempDir string
}

// Option changes how Start starts the server.
type Option func(*options)

type options struct {
	onDisk   bool
	crdPaths []string
	crds     []*apiextensionsv1.CustomResourceDefinition
	logs     io.Writer

	webhookPaths     []string
	webhookObjects   []any
	simulatedNodes   int
	controllers      []string
	admissionPlugins []string
}

// OnDisk keeps the data in the test's temporary directory instead of in
// memory.
func OnDisk() Option { return func(o *options) { o.onDisk = true } }

// WithCRDs installs the CustomResourceDefinitions in the given YAML or
// JSON files, or in the .yaml, .yml and .json files of the given
// directories, and waits until they are established and their resources
// served. A CRD given twice (by name) is installed once, as the last
// gives it. A CRD converting its versions with a webhook is pointed at the
// test's webhook server (Env.Webhooks), at the path its Service names
// (envtest's "/convert" by kubebuilder's default).
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
// README). As on a real node, a pod waits for the ConfigMaps and Secrets
// it mounts or reads, its service account token's kube-root-ca.crt
// ConfigMap among them (root-ca-certificate-publisher-controller makes it).
func WithSimulatedNodes(n int) Option { return func(o *options) { o.simulatedNodes = n } }

// WithControllers runs only the built-in controllers selected, as
// kube-controller-manager's --controllers flag selects them: "name" to run
// one, "*" for every one, "-name" to leave one out (later entries win).
// WithControllers() runs none, for tests written for envtest's server
// without controllers. kapi's README lists the names.
func WithControllers(selection ...string) Option {
	return func(o *options) {
		if o.controllers == nil {
			o.controllers = []string{"-*"} // only those selected, by this call and later ones
		}
		o.controllers = append(o.controllers, selection...)
	}
}

// WithAdmissionPlugins runs kube's admission plugins that a default
// kube-apiserver leaves off, as its --enable-admission-plugins flag
// (NodeRestriction, AlwaysPullImages, DenyServiceExternalIPs, ...).
func WithAdmissionPlugins(names ...string) Option {
	return func(o *options) { o.admissionPlugins = append(o.admissionPlugins, names...) }
}

// WithLogs sends the server's log to w, in log/slog's text format at level
// Info (by default it is discarded); errors logged while the Env stops
// are its controllers' stopping, logged at Debug. Kubernetes code that logs through
// klog's global logger is not included: klog is shared by the whole
// process, which may run many servers.
func WithLogs(w io.Writer) Option { return func(o *options) { o.logs = w } }

// TB is what Start needs of a test: *testing.T, *testing.B and
// Ginkgo's GinkgoT() have it.
type TB interface {
	Helper()
	TempDir() string
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

var _ TB = testing.TB(nil)

// Start starts a server for the test and stops it when the test ends.
func Start(t TB, opts ...Option) *Env {
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
// package, or in a Ginkgo suite's BeforeSuite) with its files in dir, or
// with dir "" in a temporary directory that Stop removes; Stop ends it.
func New(dir string, opts ...Option) (*Env, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	tempDir := ""
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "kapitest-"); err != nil {
			return nil, err
		}
		tempDir = dir
	}
	env, err := start(dir, o)
	if err != nil {
		os.RemoveAll(tempDir)
		return nil, err
	}
	env.tempDir = tempDir
	if err := env.install(dir, o); err != nil {
		env.Stop()
		return nil, err
	}
	return env, nil
}

// install installs the CRDs of o, pointed at the test's webhook server if
// they convert through a webhook, then its webhook configurations (a
// configuration refusing what its server does not answer yet would
// refuse the CRDs).
func (e *Env) install(dir string, o options) error {
	crds, err := o.allCRDs()
	if err != nil {
		return err
	}
	configs, err := o.webhookConfigs()
	if err != nil {
		return err
	}
	if len(configs) > 0 || needsWebhookServer(crds) {
		if e.Webhooks, err = newWebhookServer(filepath.Join(dir, "webhook-certs")); err != nil {
			return err
		}
		for _, crd := range crds {
			e.Webhooks.pointConversion(crd)
		}
	}
	if err := installCRDs(e.Config, crds); err != nil {
		return err
	}
	if len(configs) == 0 {
		return nil
	}
	return e.Webhooks.install(e.Config, configs)
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
	e.logs.stopping.Store(true)
	err := e.server.Shutdown(ctx)
	if e.tempDir != "" {
		if rmErr := os.RemoveAll(e.tempDir); err == nil {
			err = rmErr
		}
	}
	return err
}

func start(dir string, o options) (*Env, error) {
	logs := newStoppingHandler(slog.DiscardHandler)
	if o.logs != nil {
		logs = newStoppingHandler(slog.NewTextHandler(o.logs, nil))
	}
	logger := slog.New(logs)
	cfg := server.Config{
		DataDir:                dir,
		Listen:                 "127.0.0.1:0",
		SimulatedNodes:         o.simulatedNodes,
		Logger:                 logger,
		EnableAdmissionPlugins: o.admissionPlugins,
		// As envtest's kube-apiserver, with its default flags.
		ServiceAccountTokens: auth.TokenOptions{ExtendExpiration: true},
	}
	if o.controllers != nil {
		selection, err := controllers.ParseSelection(strings.Join(o.controllers, ","))
		if err != nil {
			return nil, err
		}
		cfg.Controllers = selection
	}
	if !o.onDisk {
		cfg.OpenStorage = pebble.InMemory()
	}
	// envtest runs kube-apiserver with --allow-privileged, and so does a
	// cluster kubeadm or kind makes; the setting is the process's.
	capabilities.Initialize(capabilities.Capabilities{AllowPrivileged: true})
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
	return &Env{Config: config, Kubeconfig: s.Kubeconfig, server: s, logs: logs}, nil
}

// allCRDs are the CRDs of o, each once (the last given of a name).
func (o options) allCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds := append([]*apiextensionsv1.CustomResourceDefinition(nil), o.crds...)
	for _, path := range o.crdPaths {
		read, err := readCRDs(path)
		if err != nil {
			return nil, err
		}
		crds = append(crds, read...)
	}
	index := map[string]int{}
	var unique []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range crds {
		crd = crd.DeepCopy()
		if i, seen := index[crd.Name]; seen {
			unique[i] = crd
			continue
		}
		index[crd.Name] = len(unique)
		unique = append(unique, crd)
	}
	return unique, nil
}

// installCRDs creates crds and waits until each is established.
func installCRDs(config *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition) error {
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

// readCRDs reads the CRDs of a YAML or JSON file, or of the YAML and
// JSON files of a directory; other kinds are skipped.
func readCRDs(path string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := manifestFiles(path)
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
