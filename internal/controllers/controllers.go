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
	"log"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// Config is what the controllers need.
type Config struct {
	// Client is the connection to the server, with the identity the
	// controllers act as.
	Client *rest.Config
	Logger *log.Logger
	// Controllers selects the controllers that run (all when empty).
	Controllers Selection
	// RootCA is the PEM of the CA clients verify the server with, which
	// every namespace gets in its kube-root-ca.crt ConfigMap.
	RootCA []byte
	// Resync is how often informers replay their whole cache to the
	// controllers (0: never, as kube-controller-manager's default
	// min-resync of 12 hours is, for a test server, never).
	Resync time.Duration
}

// Run starts the controllers and blocks until ctx ends and every one of
// their goroutines has returned.
func Run(ctx context.Context, cfg Config) error {
	client, err := kubernetes.NewForConfig(cfg.Client)
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
	ctx = klog.NewContext(ctx, logrTo(cfg.Logger))
	factory := informers.NewSharedInformerFactory(client, cfg.Resync)
	defer factory.Shutdown()
	metadataFactory := metadatainformer.NewSharedInformerFactory(metadataClient, cfg.Resync)
	defer metadataFactory.Shutdown()
	informersStarted := make(chan struct{})

	var running sync.WaitGroup
	defer running.Wait()
	start := func(run func()) {
		running.Add(1)
		go func() {
			defer running.Done()
			run()
		}()
	}
	if cfg.Controllers.Enabled(NamespaceController) {
		runNamespaces(ctx, start, client, metadataClient, factory, cfg.Resync)
	}
	if cfg.Controllers.Enabled(ServiceAccountController) {
		if err := runServiceAccounts(ctx, start, client, factory); err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
	}
	if cfg.Controllers.Enabled(RootCACertificatePublisherController) {
		if err := runRootCAPublisher(ctx, start, client, factory, cfg.RootCA); err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
	}

	if cfg.Controllers.Enabled(GarbageCollector) {
		if err := runGarbageCollector(ctx, start, client, metadataClient, factory, metadataFactory, informersStarted, discoveryClient); err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
	}

	if cfg.Controllers.Enabled(ResourceQuotaController) {
		if err := runResourceQuota(ctx, start, client, factory, metadataFactory, informersStarted, discoveryClient); err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
	}
	if cfg.Controllers.Enabled(DisruptionController) {
		if err := runDisruption(ctx, start, cfg.Client, client, factory, discoveryClient); err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
	}
	if cfg.Controllers.Enabled(PolicyStatusController) {
		if err := runPolicyStatus(ctx, start, client, factory, discoveryClient); err != nil {
			return fmt.Errorf("controllers: %w", err)
		}
	}
	for _, w := range workloads {
		if !cfg.Controllers.Enabled(w.name) {
			continue
		}
		run, err := w.start(ctx, client, factory)
		if err != nil {
			return fmt.Errorf("controllers: %s: %w", w.name, err)
		}
		start(run)
	}

	factory.Start(ctx.Done())
	metadataFactory.Start(ctx.Done())
	close(informersStarted)
	<-ctx.Done()
	return nil
}

// logrTo makes the controllers' structured log lines (at the default
// verbosity: starts, stops and errors) lines of logger.
func logrTo(logger *log.Logger) logr.Logger {
	return funcr.New(func(prefix, args string) {
		if prefix != "" {
			logger.Printf("%s: %s", prefix, args)
			return
		}
		logger.Print(args)
	}, funcr.Options{})
}
