// Package server assembles kapi: storage, the API handlers, the filters and
// the HTTPS listener, and creates what a fresh data directory needs.
package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emicklei/go-restful/v3"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/version"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	auditpolicy "k8s.io/apiserver/pkg/audit/policy"
	kubeauthenticator "k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/server/flagz"
	apiservermux "k8s.io/apiserver/pkg/server/mux"
	"k8s.io/apiserver/pkg/server/routes"
	"k8s.io/apiserver/pkg/server/statusz"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	auditlog "k8s.io/apiserver/plugin/pkg/audit/log"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/compatibility"
	"k8s.io/component-base/metrics/prometheus/slis"
	zpagesfeatures "k8s.io/component-base/zpages/features"
	"k8s.io/kubernetes/pkg/controlplane/controller/apiserverleasegc"
	"k8s.io/kubernetes/pkg/controlplane/controller/defaultservicecidr"
	"k8s.io/kubernetes/pkg/controlplane/controller/legacytokentracking"
	satoken "k8s.io/kubernetes/pkg/serviceaccount"
	"k8s.io/utils/clock"

	"github.com/kapi-dev/kapi/internal/admission"
	"github.com/kapi-dev/kapi/internal/aggregator"
	"github.com/kapi-dev/kapi/internal/auth"
	"github.com/kapi-dev/kapi/internal/authz"
	"github.com/kapi-dev/kapi/internal/builtin"
	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/cacheinformers"
	"github.com/kapi-dev/kapi/internal/controllers"
	"github.com/kapi-dev/kapi/internal/convert"
	"github.com/kapi-dev/kapi/internal/crd"
	"github.com/kapi-dev/kapi/internal/filters"
	"github.com/kapi-dev/kapi/internal/flowcontrol"
	"github.com/kapi-dev/kapi/internal/handlers"
	"github.com/kapi-dev/kapi/internal/logging"
	"github.com/kapi-dev/kapi/internal/loopback"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/respond"
	"github.com/kapi-dev/kapi/internal/storage"
	"github.com/kapi-dev/kapi/internal/storage/etcd"
	"github.com/kapi-dev/kapi/internal/storage/pebble"
)

// Config says where kapi keeps its data and where it listens.
type Config struct {
	DataDir string
	Listen  string // host:port
	// GitVersion, when given, is the version reported (by /version, the
	// build metric, the server's own user agents) in place of the
	// release's: kube-apiserver's --version=v1.X.Y-suffix, which keeps
	// the release's numbers (ValidGitVersion).
	GitVersion string
	// PKIDir holds the CAs, keys and serving certificate (default: pki in
	// DataDir). Servers sharing storage share it, so that what one issues
	// (client certificates, service account tokens) the others accept.
	PKIDir string
	// SharedStorage says other servers share the storage (etcd): the
	// controllers and the scheduler run on one server at a time, chosen
	// by Leases in kube-system as kube-controller-manager and
	// kube-scheduler choose theirs, and the watch caches start with the
	// history storage keeps, so that a watch moved here from another
	// server resumes.
	SharedStorage bool
	// Logger is where the server and its controllers log (default: slog's
	// text format on standard error, at level Info).
	Logger *slog.Logger
	// Verbosity, when given, is the Logger's, which PUT /debug/flags/v
	// changes as kube-apiserver's does (default: the default Logger's).
	Verbosity *logging.Verbosity
	// HistoryWindow is how long past revisions stay readable and
	// watchable (default 5 minutes).
	HistoryWindow time.Duration
	// EventTTL is how long events are kept after their last write
	// (kube-apiserver's --event-ttl); zero means its default, an hour.
	EventTTL time.Duration
	// MinRequestTimeout bounds long watches (default 30 minutes).
	MinRequestTimeout time.Duration
	// MaxWatches bounds the watches open at once (default 10,000); more
	// get 429 with Retry-After.
	MaxWatches int
	// BookmarkInterval is how long after its start, and after each
	// bookmark, a watch gets one (default 1 minute, kube-apiserver's).
	BookmarkInterval time.Duration
	// OpenStorage opens the storage backend; nil means Pebble in DataDir.
	OpenStorage storage.Opener
	// Controllers selects the built-in controllers that run (all when
	// empty), as kube-controller-manager's --controllers flag.
	Controllers controllers.Selection
	// ClientCAFile holds more CAs whose client certificates authenticate
	// (CN the user, O the groups), besides kapi's own, as
	// kube-apiserver's --client-ca-file.
	ClientCAFile string
	// TokenAuthFile is a CSV file of static bearer tokens
	// (token,user,uid,"group1,group2"), as kube-apiserver's
	// --token-auth-file.
	TokenAuthFile string
	// AnonymousAuth makes requests without credentials system:anonymous
	// ones, for RBAC to decide; without it they get 401 (health and
	// version too). `kapi serve` sets it unless told not to, as
	// kube-apiserver's --anonymous-auth defaults to true.
	AnonymousAuth bool
	// ServiceAccountTokens are the issuers, audiences, keys and
	// expirations of service account tokens, as kube-apiserver's flags
	// (--service-account-issuer, --api-audiences, ...); the zero value
	// is kapi's own key, auth.DefaultIssuer, and no extension of pods'
	// tokens (`kapi serve` extends them, as kube-apiserver by default).
	ServiceAccountTokens auth.TokenOptions
	// AuditPolicyFile is an audit.k8s.io/v1 Policy; with AuditLogPath,
	// requests are written there as audit.k8s.io/v1 events, one JSON
	// line each ("-" is standard output), as kube-apiserver's
	// --audit-policy-file and --audit-log-path.
	AuditPolicyFile string
	AuditLogPath    string
	// Flags are the command line's flags and their values, defaults
	// included, which /flagz shows.
	Flags map[string]string
	// AuthorizationMode is RBAC (the default) or AlwaysAllow, as
	// kube-apiserver's --authorization-mode.
	AuthorizationMode string
	// EnableAdmissionPlugins are admission plugins to run besides the
	// default ones, as kube-apiserver's --enable-admission-plugins
	// (admission.OptionalPlugins).
	EnableAdmissionPlugins []string
	// DisableAdmissionPlugins are default admission plugins not to run,
	// as kube-apiserver's --disable-admission-plugins (those kapi runs
	// from kube's admission code: envtest disables ServiceAccount).
	DisableAdmissionPlugins []string
	// ServiceClusterIPRange is the range ClusterIPs come from, as
	// kube-apiserver's --service-cluster-ip-range (zero:
	// builtin.DefaultServiceCIDR); its first address is the kubernetes
	// Service's.
	ServiceClusterIPRange netip.Prefix
	// TLSCertFile and TLSKeyFile, when set, are the serving certificate
	// (followed by its intermediates) and key instead of the one kapi
	// issues itself, as kube-apiserver's --tls-cert-file and
	// --tls-private-key-file; they are read again when they change.
	TLSCertFile, TLSKeyFile string
	// Clock is the time the watch cache and storage compaction go by
	// (default: the real clock).
	Clock clock.WithTicker
	// AdvertiseAddress is the address the kubernetes Service's endpoints
	// name, as kube-apiserver's --advertise-address. Empty means the
	// listen address, or the host's default address when kapi listens on
	// loopback or on all addresses.
	AdvertiseAddress string
	// SimulatedNodes is how many simulated nodes (package simnodes) to
	// register on start.
	SimulatedNodes int
}

// controllerManager is the identity of the built-in controllers, as
// kube-controller-manager's without per-controller service accounts.
var controllerManager = &auth.User{
	Name: "system:kube-controller-manager", Groups: []string{"system:authenticated"},
}

// serviceAccountUser is the identity of a service account, as its tokens
// authenticate.
func serviceAccountUser(namespace, name string) *auth.User {
	groups := append(serviceaccount.MakeGroupNames(namespace), user.AllAuthenticated)
	return &auth.User{Name: serviceaccount.MakeUsername(namespace, name), Groups: groups}
}

// scheduler is kube-scheduler's identity, bound to its role by the
// bootstrap policy.
var scheduler = &auth.User{Name: "system:kube-scheduler", Groups: []string{"system:authenticated"}}

// simulatedKubelet is the identity of the simulated nodes' kubelets. A
// kubelet's own (system:node:NAME) needs the Node authorizer, which kapi
// does not have; this one is privileged instead.
var simulatedKubelet = &auth.User{Name: "system:kapi:simulated-kubelet", Groups: []string{"system:authenticated", auth.AdminGroup}}

// apiserverLoopback is the identity of kapi's own clients of itself (the
// aggregation layer), as kube-apiserver's loopback client.
var apiserverLoopback = &auth.User{Name: "system:apiserver", Groups: []string{"system:authenticated", auth.AdminGroup}}

// Server is a running kapi.
type Server struct {
	cfg      Config
	store    storage.Store
	http     *http.Server
	conns    connections // the clients' connections, for Shutdown
	listener net.Listener
	// advertised is the address /api names ("host:port"): the one the
	// kubernetes Service's endpoints advertise, or else the listener's.
	advertised  atomic.Pointer[string]
	done        chan error
	stop        context.CancelFunc // ends the caches, the controllers and the compactor
	stopping    context.Context    // cancelled on Shutdown: ends the watches
	stopWatches context.CancelFunc
	drained     chan struct{}  // closed once no request can arrive any more
	drain       sync.Once      // closes drained
	running     sync.WaitGroup // the compactor and the controllers
	reg         *registry.Registry
	health      health
	// loopback is where the server's own clients (the controllers)
	// connect; inProcess serves them.
	loopback  *loopback.Listener
	inProcess *http.Server
	// URL is the https address clients use.
	URL string
	// Kubeconfig is the path of the admin kubeconfig.
	Kubeconfig string

	pki        *auth.PKI
	authorizer *authz.Authorizer
	tokens     *auth.ServiceAccountTokens
	auditLog   *os.File // closed last
	// aggregator is set once the aggregation layer runs (health reads it).
	aggregator atomic.Pointer[aggregator.Aggregator]
}

// ClientCertificate issues a client certificate for a user with groups,
// which the server authenticates as that user.
func (s *Server) ClientCertificate(user string, groups ...string) (certPEM, keyPEM []byte, err error) {
	return s.pki.ClientCertificate(user, groups...)
}

// admissionPlugins are the authorizer and the admission plugins that
// consult it, made before storage opens.
type admissionPlugins struct {
	authorizer *authz.Authorizer
	builtins   *admission.Builtins
	policies   *admission.Policies
	webhooks   *admission.Webhooks
	quota      *admission.ResourceQuota // nil when disabled
	// namespaceLifecycle is unset when it is disabled.
	namespaceLifecycle bool
	// objects are the policies' and webhooks' object interfaces.
	objects *admission.Objects
}

func newAdmissionPlugins(authorizationMode string, enable, disable []string, client *rest.Config) (p admissionPlugins, err error) {
	sel, err := admission.Select(enable, disable)
	if err != nil {
		return p, err
	}
	p.namespaceLifecycle = sel.Runs("NamespaceLifecycle")
	if sel.Runs("ResourceQuota") {
		if p.quota, err = admission.NewResourceQuota(); err != nil {
			return p, err
		}
	}
	if p.authorizer, err = authz.New(authorizationMode, client); err != nil {
		return p, err
	}
	p.objects = admission.NewObjects()
	if p.policies, err = admission.NewPolicies(p.authorizer, p.objects, sel); err != nil {
		return p, err
	}
	if p.webhooks, err = admission.NewWebhooks(p.authorizer, p.objects, sel); err != nil {
		return p, err
	}
	p.builtins, err = admission.NewBuiltins(p.authorizer, sel)
	return p, err
}

// chain are the plugins in the order they admit a write: kube-apiserver's
// built-in ones, the policies, the webhooks, then the quota.
func (p admissionPlugins) chain() []admissionPlugin {
	chain := []admissionPlugin{p.builtins, p.policies, p.webhooks}
	if p.quota != nil {
		chain = append(chain, p.quota)
	}
	return chain
}

// admissionPlugin is a plugin that needs a client of the server itself
// (kube-apiserver's loopback client) to act.
type admissionPlugin interface {
	Start(context.Context, admission.Clients) error
}

// openWhile opens the storage while work runs, and returns it once both
// are done; if either fails, nothing is left open.
func openWhile(open storage.Opener, work func() error) (storage.Store, error) {
	type opened struct {
		store storage.Store
		err   error
	}
	done := make(chan opened, 1)
	go func() {
		store, err := open()
		done <- opened{store, err}
	}()
	workErr := work()
	o := <-done
	if workErr != nil {
		if o.err == nil {
			o.store.Close()
		}
		return nil, workErr
	}
	return o.store, o.err
}

// bootstrapNamespaces exist from the first start on.
var bootstrapNamespaces = []string{
	metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease,
}

// apiserverResync is the default resync of the informers the server's own
// parts share (admission, the aggregator, priority and fairness): kube-apiserver's
// shared informer factory replays its caches to their handlers every 10
// minutes.
const apiserverResync = 10 * time.Minute

// Start opens the data directory and starts serving; it returns once the
// server accepts requests. A start that fails leaves nothing running.
func Start(ctx context.Context, cfg Config) (_ *Server, err error) {
	if cfg.Logger == nil {
		if cfg.Verbosity == nil {
			cfg.Verbosity = logging.NewVerbosity(0)
		}
		cfg.Logger = logging.NewVariable(os.Stderr, cfg.Verbosity)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	began := time.Now()
	// stepDone logs at V(2) how long the start took to get past a step
	// (docs/PERFORMANCE.md, "Start to ready").
	stepDone := func(step string) {
		cfg.Logger.Log(ctx, logging.Level(2), "Start step done", "step", step, "elapsed", time.Since(began))
	}
	if cfg.HistoryWindow <= 0 {
		cfg.HistoryWindow = 5 * time.Minute
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %w", cfg.Listen, err)
	}
	pki, err := auth.LoadOrCreate(cmp.Or(cfg.PKIDir, filepath.Join(cfg.DataDir, "pki")), host)
	if err != nil {
		return nil, err
	}
	if cfg.TLSCertFile != "" || cfg.TLSKeyFile != "" {
		if err := pki.UseServingFiles(cfg.TLSCertFile, cfg.TLSKeyFile); err != nil {
			return nil, err
		}
	}
	// What the first write needs is made on the other core meanwhile.
	go pipeline.Prepare()
	openStorage := cfg.OpenStorage
	if openStorage == nil {
		openStorage = StorageBackend("pebble", cfg.DataDir, nil)
	}
	ver := Version()
	if cfg.GitVersion != "" {
		ver.GitVersion = cfg.GitVersion
	}
	lb := loopback.NewListener()
	// loopbackClient is a new configuration for each of the server's own
	// clients, which may change theirs.
	loopbackClient := func() *rest.Config { return lb.Config(apiserverLoopback, "kube-apiserver/"+ver.GitVersion) }
	// Opening the storage mostly waits (for the disk, for the first run
	// of its code), making the authorizer and the admission plugins mostly
	// computes (their CEL environments): they overlap.
	var plugins admissionPlugins
	store, err := openWhile(openStorage, func() (err error) {
		plugins, err = newAdmissionPlugins(cfg.AuthorizationMode, cfg.EnableAdmissionPlugins, cfg.DisableAdmissionPlugins, loopbackClient())
		return err
	})
	if err != nil {
		return nil, err
	}
	stepDone("storage opened")
	// Nobody outside the process sees the start's writes before it
	// serves, and a crash before then loses only what the next start
	// writes again: they are synced once, before serving.
	syncStart := deferSyncs(store)
	runCtx, stop := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, store: store, done: make(chan error, 1), stop: stop, drained: make(chan struct{})}
	s.stopping, s.stopWatches = context.WithCancel(context.Background())
	s.health.server = s
	s.pki = pki
	s.loopback = lb
	s.authorizer = plugins.authorizer
	authorizer := plugins.authorizer
	defer func() {
		if err != nil {
			s.close()
		}
	}()

	reg := registry.New(store, convert.New(), cache.Options{
		Window: cfg.HistoryWindow, BookmarkInterval: cfg.BookmarkInterval, Logger: cfg.Logger, Clock: cfg.Clock,
		ReplayHistory: cfg.SharedStorage, FreshGets: !cfg.SharedStorage,
	})
	s.reg = reg
	// The server's informers serve the types the watch caches hold from
	// those caches; other types' informers drop their copy for the
	// cache's, or at least their managed fields. (The authorizer's are
	// made before the built-in types are installed: they list and watch
	// over the loopback connection.) resync is the handlers' default
	// resync period (see apiserverResync).
	newInformers := func(client kubernetes.Interface, resync time.Duration) *cacheinformers.Factory {
		return cacheinformers.New(informers.NewSharedInformerFactoryWithOptions(client, resync, informers.WithTransform(informerTransform(reg))), reg)
	}
	var admitters []any
	if plugins.namespaceLifecycle {
		admitters = append(admitters, pipeline.NamespaceLifecycle(reg))
	}
	for _, plugin := range plugins.chain() {
		admitters = append(admitters, plugin)
	}
	writes := pipeline.New(reg, admitters...)
	// The listener opens now, for the addresses that name it; it serves
	// once everything is ready.
	if s.listener, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, err
	}
	s.URL = "https://" + clientAddress(s.listener.Addr().(*net.TCPAddr))
	// The legacy tokens' Secrets are labelled with the day of their last
	// use as kube-apiserver labels them, through its loopback client.
	secrets := kubernetes.NewForConfigOrDie(loopbackClient()).CoreV1()
	tokens, err := auth.NewServiceAccountTokens(cfg.ServiceAccountTokens, pki.ServiceAccountKey, strings.TrimPrefix(s.URL, "https://"), builtin.TokenGetter(writes), secrets)
	if err != nil {
		return nil, fmt.Errorf("service account tokens: %w", err)
	}
	s.tokens = tokens
	for _, warning := range cfg.ServiceAccountTokens.Warnings() {
		cfg.Logger.Warn(warning)
	}
	if tokens.DiscoveryError != nil {
		cfg.Logger.Error("the service account issuer discovery endpoints are not served", "err", tokens.DiscoveryError)
	}
	clientCAs, err := auth.NewClientCAs(pki, cfg.ClientCAFile)
	if err != nil {
		return nil, err
	}
	authn, err := authenticator(cfg, clientCAs, tokens)
	if err != nil {
		return nil, err
	}
	if err := builtin.Install(writes, builtin.Options{
		Authorizer: authorizer, Tokens: tokens, TokenReviewer: authn.Tokens(), Release: ver,
		ComponentStatuses: s.componentStatuses(cfg.Controllers), ServiceCIDR: cfg.ServiceClusterIPRange,
	}); err != nil {
		return nil, err
	}
	stepDone("built-in backends installed")
	api := handlers.New(writes, ver.GitVersion, handlers.Options{
		MinRequestTimeout: cfg.MinRequestTimeout, Authorizer: authorizer, Stopping: s.stopping, MaxWatches: cfg.MaxWatches,
		ServerAddress: s.advertisedAddress,
	})
	agg, err := aggregator.New(aggregator.Config{
		Client:       loopbackClient(),
		Registry:     reg,
		ProxyCertPEM: pki.FrontProxyCertPEM, ProxyKeyPEM: pki.FrontProxyKeyPEM,
		Logger: cfg.Logger, Informers: newInformers(kubernetes.NewForConfigOrDie(loopbackClient()), apiserverResync),
	})
	if err != nil {
		return nil, err
	}
	auditing, err := s.openAudit(cfg)
	if err != nil {
		return nil, err
	}
	fairness, err := flowcontrol.New(loopbackClient(), newInformers(kubernetes.NewForConfigOrDie(loopbackClient()), apiserverResync), objectCounts(reg), cfg.Logger)
	if err != nil {
		return nil, err
	}
	chain := filters.Chain(s.routes(agg.Handler(api), ver, fairness), filters.Config{
		Audit:         auditing,
		Authenticator: authn,
		Authorizer:    authorizer,
		Fairness:      fairness.Filter,
		Logger:        cfg.Logger,
		Done:          runCtx.Done(),
	})
	s.inProcess = loopback.NewServer(chain)
	go s.inProcess.Serve(s.loopback)
	reg.Run(runCtx)
	s.background(func() { compact(runCtx, store, cfg.Clock, cfg.HistoryWindow, cfg.Logger) })
	s.background(func() { expireEvents(runCtx, reg, cfg.Clock, cmp.Or(cfg.EventTTL, time.Hour), cfg.Logger) })
	if err := reg.WaitReady(ctx); err != nil {
		return nil, err
	}
	stepDone("watch caches ready")
	s.health.done(hookStartInformers, hookStorageReadiness, hookObjectCounts)
	if err := ensureNamespaces(ctx, writes); err != nil {
		return nil, err
	}
	stepDone("system namespaces")
	s.health.done(hookSystemNamespaces)
	// A first start's bootstrap objects are written in process, as the
	// server's loopback user, not over the loopback connection.
	createAsServer := func(ctx context.Context, obj runtime.Object, manager string) error {
		_, err := writes.CreateObject(auth.WithUser(ctx, apiserverLoopback), obj, manager)
		return err
	}
	// The bootstrap steps depend on the namespaces only, not on one
	// another: like kube-apiserver's post-start hooks they run at once.
	// Admission starts once they are done: started alongside, its plugins
	// made each of their several hundred writes a few times dearer.
	var steps errgroup.Group
	steps.Go(func() error {
		if err := authz.EnsureBootstrapPolicy(ctx, kubernetes.NewForConfigOrDie(loopbackClient()), createAsServer); err != nil {
			return err
		}
		s.health.done(hookBootstrapRoles)
		stepDone("RBAC bootstrap policy")
		return authorizer.Start(runCtx)
	})
	steps.Go(func() error {
		runFairness, err := fairness.Start(runCtx, createAsServer)
		if err != nil {
			return err
		}
		s.background(runFairness)
		stepDone("priority and fairness configuration")
		s.health.done(flowcontrol.HookConfigProducer, flowcontrol.HookConfigConsumer, flowcontrol.HookFilter)
		return nil
	})
	steps.Go(func() error {
		if err := builtin.EnsureSystemPriorityClasses(ctx, writes); err != nil {
			return err
		}
		s.health.done(hookPriorityClasses)
		stepDone("system priority classes")
		trust := func() builtin.AuthenticationTrust {
			return builtin.AuthenticationTrust{
				ClientCA: clientCAs.PEM(), FrontProxyCA: pki.FrontProxyCAPEM, FrontProxyNames: []string{auth.FrontProxyUser},
			}
		}
		// As kube-apiserver's trust controller, the ConfigMap follows the
		// client CA file.
		clientCAs.OnChange(func() {
			if err := builtin.EnsureAuthenticationTrust(runCtx, writes, trust()); err != nil {
				cfg.Logger.Error("publishing the authentication trust again failed", "err", err)
			}
		})
		if err := builtin.EnsureAuthenticationTrust(ctx, writes, trust()); err != nil {
			return fmt.Errorf("publishing the authentication trust: %w", err)
		}
		s.health.done(hookAuthenticationInfo)
		if err := agg.Run(runCtx); err != nil {
			return err
		}
		s.aggregator.Store(agg)
		stepDone("aggregator")
		s.health.done(aggregatorHooks...)
		return nil
	})
	if err := steps.Wait(); err != nil {
		return nil, err
	}
	stepDone("bootstrap steps")
	// The admission plugins share one set of informers, as
	// kube-apiserver's plugins share its own.
	admissionInformers := newInformers(kubernetes.NewForConfigOrDie(loopbackClient()), apiserverResync)
	clients := admission.Clients{Config: loopbackClient(), Informers: admissionInformers, OpenAPIV3: api.OpenAPIV3(), Drained: s.drained}
	if err := startAdmission(runCtx, clients, plugins.chain()...); err != nil {
		return nil, err
	}
	stepDone("admission")
	s.health.done(hookAdmission)
	plugins.objects.ConvertCustom(func(obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error) {
		store := reg.Snapshot().ForKind(to)
		if store == nil {
			return nil, fmt.Errorf("%v is not served", to)
		}
		return store.Backend().Convert(obj, to.GroupVersion())
	})
	plugins.objects.DefaultCustom(func(obj runtime.Object) {
		if store := reg.Snapshot().ForKind(obj.GetObjectKind().GroupVersionKind()); store != nil {
			store.DefaultBySchema(obj)
		}
	})
	kinds := reg.Follow(func(snap *registry.Snapshot) { registerKinds(snap, plugins.objects) })
	s.background(func() { kinds(runCtx) })
	// The serving files are read again when they change, by
	// kube-apiserver's own reloader.
	s.background(func() { pki.WatchServingFiles(runCtx) })
	s.background(func() { clientCAs.Run(runCtx) })
	if err := crd.Run(runCtx, crd.Config{
		Client: loopbackClient(), Registry: reg, Writes: writes, Logger: cfg.Logger,
	}); err != nil {
		return nil, err
	}
	stepDone("custom resource definitions")
	s.health.done(apiextensionsHooks...)
	hostname, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	port := int32(s.listener.Addr().(*net.TCPAddr).Port)
	endpoints, err := newKubernetesEndpoints(loopbackClient(), &masterLeases{store: store, clock: cfg.Clock},
		cfg.AdvertiseAddress, host, port, cfg.Logger)
	if err != nil {
		return nil, err
	}
	s.advertised.Store(addressToAdvertise(endpoints.peerAddress(), s.listener.Addr().(*net.TCPAddr)))
	identity, err := identityLease(loopbackClient(), hostname, s.listener.Addr().String(), endpoints.peerAddress())
	if err != nil {
		return nil, err
	}
	s.background(func() {
		identity.Run(runCtx)
		// As kube-apiserver's pre-shutdown hook: a server that stops takes
		// its Lease with it, so that counting Leases counts running servers.
		identity.Stop()
	})
	s.health.done(hookIdentityLease)
	// As kube-apiserver's, a server deletes the identity Leases of API
	// servers that stopped renewing them (several kapi servers may share
	// storage).
	leaseGC := apiserverleasegc.NewAPIServerLeaseGC(kubernetes.NewForConfigOrDie(loopbackClient()), identityLeaseGCPeriod,
		metav1.NamespaceSystem, identityLabel+"=kube-apiserver")
	s.background(func() { leaseGC.RunWithContext(runCtx) })
	s.health.done(hookIdentityLeaseGC)
	// kube-apiserver's record of when it began tracking legacy tokens' use
	// (a ConfigMap the legacy token cleaner reads).
	tracking := legacytokentracking.NewController(kubernetes.NewForConfigOrDie(loopbackClient()))
	s.background(func() { tracking.RunWithContext(runCtx) })
	s.health.done(hookLegacyTokens)
	s.health.bootstrapped.Store(true)
	if err := builtin.EnsureKubernetesService(ctx, writes, cfg.ServiceClusterIPRange, port); err != nil {
		return nil, fmt.Errorf("creating the kubernetes service: %w", err)
	}
	if err := builtin.RepairServiceIPs(ctx, writes, cfg.ServiceClusterIPRange); err != nil {
		return nil, fmt.Errorf("repairing ClusterIP allocations: %w", err)
	}
	s.health.done(hookServiceIPRepair)
	// The endpoints are published as the server starts serving, not
	// before: kube-apiserver's controller publishes them once its /readyz
	// answers.
	s.background(func() {
		keepKubernetesService(runCtx, writes, endpoints, cfg.ServiceClusterIPRange, port, cfg.Clock, cfg.Logger)
	})
	// kube-apiserver's controller of the default ServiceCIDR, which
	// publishes the range ClusterIPs come from. Unlike kube-apiserver's,
	// readiness does not wait for it (nor lists its post-start hook):
	// kapi's allocator does not read ServiceCIDRs, and its first sync
	// waits a tenth of a second for its informer, as long as a start.
	var cidrRequests inFlight
	serviceCIDRs := defaultservicecidr.NewController(builtin.IPNet(cmp.Or(cfg.ServiceClusterIPRange, builtin.DefaultServiceCIDR)), net.IPNet{},
		kubernetes.NewForConfigOrDie(cidrRequests.client(loopbackClient())))
	s.background(func() {
		serviceCIDRs.Start(runCtx)
		<-runCtx.Done()
		cidrRequests.stop()
	})
	stepDone("kubernetes service")
	if err := syncStart(); err != nil {
		return nil, fmt.Errorf("syncing the start's writes: %w", err)
	}
	s.Kubeconfig = filepath.Join(cfg.DataDir, "kubeconfig")
	if err := pki.WriteKubeconfig(s.Kubeconfig, s.URL); err != nil {
		return nil, err
	}
	s.http = &http.Server{
		Handler:   chain,
		TLSConfig: pki.TLSConfig(authn.ClientCAs),
		// kube-apiserver's: idle connections close after 90 s (the
		// keep-alive of Go's clients), a request's headers must come
		// within 32 s.
		IdleTimeout:       idleTimeout,
		ReadHeaderTimeout: 32 * time.Second,
		ErrorLog:          httpErrorLog(cfg.Logger),
		ConnState:         s.conns.track,
	}
	if err := configureHTTP2(s.http); err != nil {
		return nil, err
	}
	stepDone("serving")
	go func() { s.done <- s.http.ServeTLS(s.conns.listen(s.listener), "", "") }()
	// The controllers start once the server is ready, as
	// kube-controller-manager starts against a ready kube-apiserver: their
	// informers' first lists would otherwise compete with the last steps
	// of the start for the CPU.
	controllerAgent := "kube-controller-manager/" + ver.GitVersion
	controllerClient := s.loopback.Config(controllerManager, controllerAgent)
	controllerAs := func(serviceAccount string) *rest.Config {
		return s.loopback.Config(serviceAccountUser(metav1.NamespaceSystem, serviceAccount), controllerAgent)
	}
	s.background(func() {
		err := controllers.Run(runCtx, controllers.Config{
			Client: controllerClient, ClientFor: controllerAs, Logger: cfg.Logger, RootCA: pki.ServingCAPEM, Controllers: cfg.Controllers,
			LegacyTokens:   s.tokens.LegacyGenerator,
			Signing:        controllers.Signing{CertFile: pki.CACertFile, KeyFile: pki.CAKeyFile},
			Scheduler:      s.loopback.Config(scheduler, "kube-scheduler/"+ver.GitVersion),
			Kubelet:        s.loopback.Config(simulatedKubelet, "kubelet/"+ver.GitVersion),
			SimulatedNodes: cfg.SimulatedNodes, KubeletVersion: ver.GitVersion,
			LeaderElection: leaderElection(cfg.SharedStorage, hostname), NewInformers: newInformers,
		})
		if err != nil {
			cfg.Logger.Error("running the controllers failed", "err", err)
		}
	})
	return s, nil
}

// deferSyncs defers the syncs of store's writes until the returned
// function, if the store can (see pebble.Store.DeferSyncs).
func deferSyncs(store storage.Store) (end func() error) {
	if d, ok := store.(interface{ DeferSyncs() func() error }); ok {
		return d.DeferSyncs()
	}
	return func() error { return nil }
}

// leaderElection is this server's candidacy for the controllers' Leases,
// with kube-controller-manager's identity (hostname_uuid).
func leaderElection(enabled bool, hostname string) *controllers.LeaderElection {
	if !enabled {
		return nil
	}
	return &controllers.LeaderElection{Identity: hostname + "_" + string(uuid.NewUUID())}
}

// openAudit loads the audit policy and opens the audit log, when both are
// configured.
func (s *Server) openAudit(cfg Config) (*filters.Audit, error) {
	if cfg.AuditPolicyFile == "" || cfg.AuditLogPath == "" {
		return nil, nil
	}
	policy, err := auditpolicy.LoadPolicyFromFile(cfg.AuditPolicyFile)
	if err != nil {
		return nil, fmt.Errorf("--audit-policy-file: %w", err)
	}
	out := io.Writer(os.Stdout)
	if cfg.AuditLogPath != "-" {
		f, err := os.OpenFile(cfg.AuditLogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("--audit-log-path: %w", err)
		}
		s.auditLog = f
		out = f
	}
	return &filters.Audit{
		Sink:   auditlog.NewBackend(out, auditlog.FormatJson, auditv1.SchemeGroupVersion),
		Policy: auditpolicy.NewPolicyRuleEvaluator(policy),
	}, nil
}

// authenticator accepts client certificates of clientCAs (the server's CA
// and cfg.ClientCAFile's), service account tokens and the static tokens of
// cfg.TokenAuthFile.
func authenticator(cfg Config, clientCAs *auth.ClientCAs, tokens *auth.ServiceAccountTokens) (*auth.Authenticator, error) {
	// In kube-apiserver's order: static tokens, then the legacy tokens of
	// Secrets, then bound tokens.
	bearer := []kubeauthenticator.Token{tokens.Legacy, tokens.Authenticator}
	if cfg.TokenAuthFile != "" {
		static, err := tokenfile.NewCSV(cfg.TokenAuthFile)
		if err != nil {
			return nil, fmt.Errorf("--token-auth-file: %w", err)
		}
		// As kube-apiserver's, static tokens are for every audience.
		bearer = append([]kubeauthenticator.Token{kubeauthenticator.WrapAudienceAgnosticToken(tokens.Audiences, static)}, bearer...)
	}
	a := auth.NewAuthenticatorOf(clientCAs.Pool).WithTokens(bearer...)
	if anonymousAllowed(cfg) {
		a = a.WithAnonymous()
	}
	return a, nil
}

// anonymousAllowed tells whether requests without credentials are
// system:anonymous's: as kube-apiserver, never with the AlwaysAllow
// authorizer among the modes, which would let them do everything.
func anonymousAllowed(cfg Config) bool {
	if !cfg.AnonymousAuth {
		return false
	}
	if slices.Contains(strings.Split(cfg.AuthorizationMode, ","), authz.ModeAlwaysAllow) {
		cfg.Logger.Warn("anonymous requests are not allowed with the AlwaysAllow authorizer: requests without credentials get 401")
		return false
	}
	return true
}

// startAdmission starts the admission plugins that need a client of the
// server itself (kube-apiserver's loopback client).
func startAdmission(ctx context.Context, clients admission.Clients, plugins ...admissionPlugin) error {
	for _, p := range plugins {
		if err := p.Start(ctx, clients); err != nil {
			return err
		}
	}
	return nil
}

// StorageBackend returns the opener of a storage backend by name: "pebble"
// keeps data on disk in dataDir, "memory" keeps it in memory until the
// server stops, "etcd" keeps it in the etcd cluster etcdOpts names (which
// only etcd uses; nil for the others). It returns nil for an unknown name,
// or for etcd without etcdOpts.
func StorageBackend(name, dataDir string, etcdOpts *etcd.Options) storage.Opener {
	switch name {
	case "pebble":
		return pebble.OnDisk(filepath.Join(dataDir, "db"))
	case "memory":
		return pebble.InMemory()
	case "etcd":
		if etcdOpts == nil {
			return nil
		}
		return etcd.Open(*etcdOpts)
	}
	return nil
}

// background runs fn in a goroutine that close waits for.
func (s *Server) background(fn func()) {
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		fn()
	}()
}

// close stops the background work and closes storage.
func (s *Server) close() error {
	s.stop()
	s.running.Wait()
	if s.authorizer != nil {
		s.authorizer.Wait()
	}
	if s.inProcess != nil {
		s.inProcess.Close() // after the controllers, which use it
	}
	s.drain.Do(func() { close(s.drained) })
	if s.reg != nil {
		s.reg.Wait()
	}
	if s.listener != nil {
		s.listener.Close()
	}
	if s.auditLog != nil {
		s.auditLog.Close()
	}
	return s.store.Close()
}

// clientAddress is where clients reach a listener: a wildcard address is
// reached on loopback.
func clientAddress(addr *net.TCPAddr) string {
	ip := addr.IP
	if ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(addr.Port))
}

func (s *Server) routes(api http.Handler, ver version.Info, fairness *flowcontrol.FlowControl) http.Handler {
	mux := http.NewServeMux()
	s.health.install(mux)
	// /version is kube-apiserver's own route, with its router's answers to
	// other methods and media types.
	versionRoute := restful.NewContainer()
	versionRoute.ServiceErrorHandler(respond.RouteError)
	routes.Version{Version: &ver}.Install(versionRoute)
	mux.Handle("/version", versionRoute)
	mux.Handle("/version/", versionRoute)
	mux.Handle("/metrics", metricsHandler(s.reg, s.store, ver))
	// The health checks' own metrics, as kube-apiserver serves them.
	slis.SLIMetricsWithReset{}.Install(mux)
	// Profiles, as kube-apiserver serves them with --profiling (its
	// default): for users RBAC allows the non-resource URL.
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	fairness.InstallDebug(mux)
	if s.cfg.Verbosity != nil {
		installDebugFlags(mux, s.cfg.Verbosity)
	}
	// With a trailing slash too, as kube-apiserver answers them (the
	// Python client asks so).
	// None for an issuer that is no https URL, as kube-apiserver.
	for _, path := range []string{satoken.OpenIDConfigPath, satoken.JWKSPath} {
		if s.tokens.Discovery != nil {
			mux.Handle(path, s.tokens.Discovery)
			mux.Handle(path+"/", s.tokens.Discovery)
		}
	}
	s.installZPages(mux, ver)
	mux.HandleFunc("/{$}", s.rootPaths)
	mux.HandleFunc("/index.html", s.rootPaths)
	mux.Handle("/", api)
	// API paths go to the API as they are: the mux would redirect a path
	// with an empty segment to its cleaned form, where kube-apiserver reads
	// /api/v1/namespaces//configmaps as a list across namespaces, as the
	// request's authorization already did. Other paths that are not clean
	// (//version, /./healthz) are not found, as in kube-apiserver, rather
	// than redirected.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/apis/"):
			api.ServeHTTP(w, r)
		case !cleanPath(p):
			http.NotFound(w, r)
		default:
			mux.ServeHTTP(w, r)
		}
	})
}

// cleanPath tells a path the mux would not redirect: clean, but for a
// trailing slash.
func cleanPath(p string) bool {
	clean := path.Clean(p)
	return p == clean || clean != "/" && p == clean+"/"
}

// installZPages serves /flagz and /statusz as kube-apiserver does
// (k8s.io/apiserver's handlers, while their feature gates are on): the
// flags kapi was started with, and what it is and since when.
func (s *Server) installZPages(mux *http.ServeMux, ver version.Info) {
	if utilfeature.DefaultFeatureGate.Enabled(zpagesfeatures.ComponentFlagz) {
		flagz.Install(mux, zpagesComponent, flagValues(s.cfg.Flags))
	}
	if utilfeature.DefaultFeatureGate.Enabled(zpagesfeatures.ComponentStatusz) {
		effective := compatibility.NewEffectiveVersionFromString(ver.Major+"."+ver.Minor, "", "")
		statusz.Install(mux, zpagesComponent, statusz.NewRegistry(effective, statusz.WithListedPaths(s.listedPaths())))
	}
}

// zpagesComponent is the name /flagz and /statusz give the server.
const zpagesComponent = "apiserver"

// flagValues shows a command line's flags on /flagz.
type flagValues map[string]string

func (f flagValues) GetFlagz() map[string]string { return f }

// rootPaths answers "/" as kube-apiserver's index does: every path it
// serves other than the resources' own, sorted; among them each served
// group and group-version (kube-aggregator lists every APIService's,
// custom resources' and aggregated servers' too).
func (s *Server) rootPaths(w http.ResponseWriter, _ *http.Request) {
	paths := s.listedPaths()
	for _, g := range s.reg.Snapshot().Resources.Groups() {
		if g.Group == "" {
			continue
		}
		paths = append(paths, "/apis/"+g.Group)
		for _, v := range g.Versions {
			paths = append(paths, "/apis/"+g.Group+"/"+v.Version)
		}
	}
	if agg := s.aggregator.Load(); agg != nil {
		paths = append(paths, agg.Paths()...)
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	data, err := json.MarshalIndent(metav1.RootPaths{Paths: paths}, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}

// listedPaths are the paths kapi serves besides the groups' and the
// resources'.
func (s *Server) listedPaths() []string {
	paths := []string{
		"/.well-known/openid-configuration", "/api", "/api/v1", "/apis", "/apis/", "/metrics", "/metrics/slis",
		"/openapi/v2", "/openapi/v3", "/openapi/v3/", "/openid/v1/jwks", "/version",
	}
	if utilfeature.DefaultFeatureGate.Enabled(zpagesfeatures.ComponentFlagz) {
		paths = append(paths, "/flagz")
	}
	if utilfeature.DefaultFeatureGate.Enabled(zpagesfeatures.ComponentStatusz) {
		paths = append(paths, "/statusz")
	}
	return append(paths, s.health.paths()...)
}

// ensureNamespaces creates the bootstrap namespaces through the write
// pipeline.
func ensureNamespaces(ctx context.Context, writes *pipeline.Pipeline) error {
	for _, name := range bootstrapNamespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := writes.EnsureObject(ctx, ns, "kube-apiserver"); err != nil {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
	}
	return nil
}

// Wait blocks until the server stops and returns why.
func (s *Server) Wait() error {
	err := <-s.done
	s.done <- err
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting requests, lets running ones finish within ctx,
// closes each connection once its requests are done and written, and
// closes storage.
func (s *Server) Shutdown(ctx context.Context) error {
	if !s.health.shuttingDown.Swap(true) {
		s.stopWatches()
	}
	err := s.conns.shutdown(ctx, s.http)
	if cerr := s.close(); err == nil {
		err = cerr
	}
	return err
}

// objectCounts tells priority and fairness how many objects a resource
// has, from its watch cache.
func objectCounts(reg *registry.Registry) flowcontrol.ObjectCounts {
	return func(gr schema.GroupResource) (int64, bool) {
		b := reg.Snapshot().Backend(gr)
		if b == nil || !b.Cache.Ready() {
			return 0, false
		}
		return int64(b.Cache.Len()), true
	}
}

// installDebugFlags serves kube-apiserver's /debug/flags: its index, and
// /debug/flags/v, whose PUT sets the log's verbosity (k8s.io/apiserver's
// own handlers).
func installDebugFlags(m *http.ServeMux, verbosity *logging.Verbosity) {
	flags := apiservermux.NewPathRecorderMux("debug-flags")
	routes.DebugFlags{}.Install(flags, "v", routes.StringFlagPutHandler(verbosity.Set))
	m.Handle("/debug/flags", flags)
	m.Handle("/debug/flags/", flags)
}

// addressToAdvertise is the address /api names: the kubernetes Service's
// endpoint, or else the listener's when it is one address (not every
// address, which clients cannot reach; then each request's own Host).
func addressToAdvertise(peer string, listener *net.TCPAddr) *string {
	if peer == "" && !listener.IP.IsUnspecified() {
		peer = listener.String()
	}
	return &peer
}

// advertisedAddress is the address /api names, once known.
func (s *Server) advertisedAddress() string {
	if addr := s.advertised.Load(); addr != nil {
		return *addr
	}
	return ""
}
