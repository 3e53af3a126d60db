// Package controllers runs, inside the server, the controllers that make
// the API behave as documented without a cluster. They are Kubernetes' own
// controllers (k8s.io/kubernetes/pkg/controller/...), run as
// kube-controller-manager runs them: through client-go, with their own
// identity, over the server's in-process connection (package loopback), so
// everything they do passes the same filters, admission and write pipeline
// as any client's request.
package controllers

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/klog/v2"
	satoken "k8s.io/kubernetes/pkg/serviceaccount"

	"github.com/kapi-dev/kapi/internal/cacheinformers"
	"github.com/kapi-dev/kapi/internal/loopback"
	"github.com/kapi-dev/kapi/internal/scheduler"
	"github.com/kapi-dev/kapi/internal/simnodes"
)

// Config is what the controllers need.
type Config struct {
	// Client is the connection to the server with kube-controller-manager's
	// own identity, which the shared informers and discovery use.
	Client *rest.Config
	// ClientFor returns the connection a controller acts through, as its
	// service account (see ServiceAccount); nil means Client.
	ClientFor func(serviceAccount string) *rest.Config
	// Logger gets the controllers' lines: Kubernetes' controllers log
	// through the logr in their context, whose V(n) lines are records of
	// level -n (logr's slog bridge), shown as the logger's handler allows.
	Logger *slog.Logger
	// Controllers selects the controllers that run (all when empty).
	Controllers Selection
	// RootCA is the PEM of the CA clients verify the server with, which
	// every namespace gets in its kube-root-ca.crt ConfigMap.
	RootCA []byte
	// LegacyTokens signs the tokens of Secrets of type
	// kubernetes.io/service-account-token; nil: the tokens controller
	// does not run (as kube-controller-manager's without
	// --service-account-private-key-file).
	LegacyTokens satoken.TokenGenerator
	// Signing is the CA that signs approved certificate requests; with
	// no files, the signing controller does not run (as
	// kube-controller-manager's without --cluster-signing-cert-file).
	Signing Signing
	// Scheduler is kube-scheduler's connection to the server.
	Scheduler *rest.Config
	// Kubelet is the simulated nodes' connection to the server, and
	// SimulatedNodes how many of them to register on start.
	Kubelet        *rest.Config
	SimulatedNodes int
	KubeletVersion string
	// LeaderElection, when set, runs the controllers and the scheduler
	// only while this server holds their Leases (for several servers
	// sharing storage); nil runs them at once.
	LeaderElection *LeaderElection
	// NewInformers makes the informer factories the controllers and the
	// scheduler keep themselves: the server's serve the types its watch
	// caches hold from those caches. They are their own, as
	// kube-controller-manager's are, started once every controller has
	// registered its handlers: an informer already running (admission's)
	// hands its objects to a handler the moment it is added, before the
	// controller that added it has finished its own setup (kube's
	// StatefulSet controller reads its lister, not yet set, from its pod
	// handler).
	NewInformers func(client kubernetes.Interface, resync time.Duration) *cacheinformers.Factory
}

// minResync is kube-controller-manager's --min-resync-period: its informer
// factories' default resync is drawn between it and twice it. That is, in
// practice, never; but a default that is not 0 lets a handler's own
// shorter period run (the autoscaler's 15 s, resource quota's 5 minutes,
// the namespace controller's), which a default of 0 turns off.
const minResync = 12 * time.Hour

// resyncPeriod draws a factory's default resync, as kube-controller-manager
// draws one per factory.
func resyncPeriod() time.Duration {
	return time.Duration(float64(minResync) * (1 + rand.Float64()))
}

// namespaceResync is kube-controller-manager's --namespace-sync-period: how
// often the namespace controller looks at every namespace again.
const namespaceResync = 5 * time.Minute

// Run runs the controllers and the scheduler, each set while it leads
// (see LeaderElection), and blocks until ctx ends and every one of their
// goroutines has returned. Without leader election, a controller that
// fails to start is Run's error; with it, the failure is logged and the
// Lease given up, for another server to try.
func Run(ctx context.Context, cfg Config) error {
	ctx = klog.NewContext(ctx, logr.FromSlogHandler(cfg.Logger.Handler()))
	var scheduling sync.WaitGroup
	defer scheduling.Wait()
	if cfg.Controllers.Enabled(Scheduler) {
		scheduling.Go(func() {
			err := lead(ctx, cfg.LeaderElection, cfg.Scheduler, schedulerLease, cfg.Logger, func(ctx context.Context) error {
				return scheduler.Run(ctx, cfg.Scheduler, cfg.NewInformers)
			})
			if err != nil && ctx.Err() == nil {
				cfg.Logger.Error("running the scheduler failed", "err", err)
			}
		})
	}
	return lead(ctx, cfg.LeaderElection, cfg.Client, controllerManagerLease, cfg.Logger, func(ctx context.Context) error {
		return runManager(ctx, cfg)
	})
}

// runManager starts kube-controller-manager's controllers (and the
// simulated nodes) and blocks until ctx ends and every one of their
// goroutines has returned.
func runManager(ctx context.Context, cfg Config) error {
	client, err := kubernetes.NewForConfig(cfg.Client) // the shared informers' client
	if err != nil {
		return fmt.Errorf("controllers: %w", err)
	}
	metadataClient, err := metadata.NewForConfig(cfg.Client)
	if err != nil {
		return fmt.Errorf("controllers: %w", err)
	}
	discoveryClient, err := discovery.NewDiscoveryClientForConfig(cfg.Client)
	if err != nil {
		return fmt.Errorf("controllers: %w", err)
	}
	// One REST mapper for the controllers that map kinds to resources
	// (disruption, autoscaler, storage version migrator), as
	// kube-controller-manager shares its own, reset every 30 s to learn
	// resources added later (custom resources).
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discoveryClient))
	factory := cfg.NewInformers(client, resyncPeriod())
	defer factory.Shutdown()
	metadataFactory := metadatainformer.NewSharedInformerFactoryWithOptions(metadataClient, resyncPeriod(), metadatainformer.WithTransform(loopback.TrimManagedFields))
	defer metadataFactory.Shutdown()
	informersStarted := make(chan struct{})

	var running sync.WaitGroup
	defer running.Wait()
	// Whatever way this returns, the controllers started so far stop, and
	// those still waiting for the informers to start (the garbage
	// collector's graph builder waits without a context) stop waiting:
	// the server's shutdown can come while they start.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	informersStart := sync.OnceFunc(func() { close(informersStarted) })
	defer informersStart()
	start := func(run func()) {
		running.Add(1)
		go func() {
			defer running.Done()
			run()
		}()
	}
	var accounts []string // the service accounts the controllers act as
	own := func(controller string) *identity {
		config := cfg.Client
		if cfg.ClientFor != nil {
			config = cfg.ClientFor(ServiceAccount(controller))
			accounts = append(accounts, ServiceAccount(controller))
		}
		return newIdentity(config)
	}
	if cfg.Controllers.Enabled(NamespaceController) {
		id := own(NamespaceController)
		runNamespaces(ctx, start, id.client, id.metadata, factory)
	}
	if cfg.Controllers.Enabled(ServiceAccountController) {
		if err := runServiceAccounts(ctx, start, own(ServiceAccountController).client, factory); err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
	}
	if cfg.Controllers.Enabled(ServiceAccountTokenController) && cfg.LegacyTokens != nil {
		if err := runTokens(ctx, start, client, factory, cfg.LegacyTokens, cfg.RootCA); err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
	}
	if cfg.Controllers.Enabled(LegacySATokenCleanerController) {
		if err := runLegacyTokenCleaner(ctx, start, own(LegacySATokenCleanerController).client, factory); err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
	}
	if cfg.Controllers.Enabled(RootCACertificatePublisherController) {
		if err := runRootCAPublisher(ctx, start, own(RootCACertificatePublisherController).client, factory, cfg.RootCA); err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
	}
	if cfg.Controllers.Enabled(CSRSigningController) && cfg.Signing.CertFile != "" {
		if err := runSigning(ctx, start, own(CSRSigningController).client, factory, cfg.Signing); err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
	}
	if cfg.Controllers.Enabled(CSRApprovingController) {
		runApproving(ctx, start, own(CSRApprovingController).client, factory)
	}
	if cfg.Controllers.Enabled(CSRCleanerController) {
		runCSRCleaner(ctx, start, own(CSRCleanerController).client, factory)
	}
	if cfg.Controllers.Enabled(ClusterRoleAggregationController) {
		runClusterRoleAggregation(ctx, start, own(ClusterRoleAggregationController).client, factory)
	}

	if cfg.Controllers.Enabled(GarbageCollector) {
		id := own(GarbageCollector)
		graph, err := runGarbageCollector(ctx, start, id.client, id.metadata, factory, metadataFactory, informersStarted, discoveryClient)
		if err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
		// As kube-controller-manager's, the migrator needs the collector.
		if cfg.Controllers.Enabled(StorageVersionMigratorController) {
			if err := runStorageVersionMigrator(ctx, start, own(StorageVersionMigratorController).config, graph, factory, mapper); err != nil {
				return fmt.Errorf("controllers: %w", err)
			}
		}
	}

	if cfg.Controllers.Enabled(ResourceQuotaController) {
		if err := runResourceQuota(ctx, start, own(ResourceQuotaController).client, factory, metadataFactory, informersStarted, discoveryClient); err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
	}
	if cfg.Controllers.Enabled(DisruptionController) {
		id := own(DisruptionController)
		if err := runDisruption(ctx, start, id.config, id.client, factory, discoveryClient, mapper); err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
	}
	if cfg.Controllers.Enabled(HorizontalPodAutoscalerController) {
		id := own(HorizontalPodAutoscalerController)
		if err := runAutoscaler(ctx, start, id.config, id.client, factory, mapper); err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
	}
	if cfg.Controllers.Enabled(PolicyStatusController) {
		if err := runPolicyStatus(ctx, start, own(PolicyStatusController).client, factory, discoveryClient); err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
	}
	if cfg.Controllers.Enabled(SimulatedNodes) {
		run, err := simnodes.Run(ctx, simnodes.Config{
			Client: kubernetes.NewForConfigOrDie(cfg.Kubelet), Informers: factory,
			Nodes: cfg.SimulatedNodes, Logger: cfg.Logger, KubeletVersion: cfg.KubeletVersion,
		})
		if err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
		start(run)
	}
	for _, w := range workloads {
		if !cfg.Controllers.Enabled(w.name) {
			continue
		}
		run, err := w.start(ctx, own(w.name).client, factory)
		if err != nil {
			return fmt.Errorf("controllers: %s: %w", w.name, err)
		}
		start(run)
	}

	start(func() { ensureServiceAccounts(ctx, client, accounts, cfg.Logger) })
	start(func() { wait.Until(mapper.Reset, 30*time.Second, ctx.Done()) })
	factory.StartWithContext(ctx)
	// The metadata factory's interface lacks the method its implementation
	// has: started from ctx itself, its informers' contexts need no
	// goroutine each to follow a channel's (what Start derives).
	if f, ok := metadataFactory.(interface{ StartWithContext(context.Context) }); ok {
		f.StartWithContext(ctx)
	} else {
		metadataFactory.Start(ctx.Done())
	}
	informersStart()
	<-ctx.Done()
	return nil
}

// identity is the connection a controller acts through.
type identity struct {
	config   *rest.Config
	client   kubernetes.Interface
	metadata metadata.Interface
}

func newIdentity(config *rest.Config) *identity {
	// Neither constructor fails on a configuration without TLS files or
	// an unknown content type, which the server's own never has.
	return &identity{
		config:   config,
		client:   kubernetes.NewForConfigOrDie(config),
		metadata: metadata.NewForConfigOrDie(config),
	}
}
