package controllers

import (
	"context"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/certificates/rootcacertpublisher"
	"k8s.io/kubernetes/pkg/controller/serviceaccount"
	satoken "k8s.io/kubernetes/pkg/serviceaccount"
	"k8s.io/utils/clock"
)

// serviceAccountWorkers, tokenWorkers and rootCAWorkers are the workers
// kube-controller-manager starts the controllers with.
const (
	serviceAccountWorkers = 1
	tokenWorkers          = 5
	rootCAWorkers         = 1
)

// legacyTokenCleanUpPeriod is kube-controller-manager's default
// --legacy-service-account-token-clean-up-period: how long an
// auto-generated token goes unused before it is marked invalid, and then
// before it is deleted.
const legacyTokenCleanUpPeriod = 365 * 24 * time.Hour

// runServiceAccounts starts kube-controller-manager's service account
// controller, which gives every namespace its "default" ServiceAccount.
func runServiceAccounts(ctx context.Context, start func(func()), client kubernetes.Interface, factory informers.SharedInformerFactory) error {
	c, err := serviceaccount.NewServiceAccountsController(klog.FromContext(ctx),
		factory.Core().V1().ServiceAccounts(), factory.Core().V1().Namespaces(),
		client, serviceaccount.DefaultServiceAccountsControllerOptions())
	if err != nil {
		return err
	}
	start(func() { c.Run(ctx, serviceAccountWorkers) })
	return nil
}

// runRootCAPublisher starts kube-controller-manager's root CA publisher,
// which keeps a kube-root-ca.crt ConfigMap holding the cluster's CA in
// every namespace.
func runRootCAPublisher(ctx context.Context, start func(func()), client kubernetes.Interface, factory informers.SharedInformerFactory, rootCA []byte) error {
	c, err := rootcacertpublisher.NewPublisher(factory.Core().V1().ConfigMaps(), factory.Core().V1().Namespaces(), client, rootCA)
	if err != nil {
		return err
	}
	start(func() { c.Run(ctx, rootCAWorkers) })
	return nil
}

// runTokens starts kube-controller-manager's tokens controller, which
// fills each Secret of type kubernetes.io/service-account-token with a
// long-lived token of its service account, the CA and the namespace, and
// deletes the Secrets of service accounts that are gone. As in
// kube-controller-manager, it acts with the manager's own identity: the
// other controllers' service accounts may need it.
func runTokens(ctx context.Context, start func(func()), client kubernetes.Interface, factory informers.SharedInformerFactory, generator satoken.TokenGenerator, rootCA []byte) error {
	c, err := serviceaccount.NewTokensController(klog.FromContext(ctx),
		factory.Core().V1().ServiceAccounts(), factory.Core().V1().Secrets(), client,
		serviceaccount.TokensControllerOptions{TokenGenerator: generator, RootCA: rootCA})
	if err != nil {
		return err
	}
	start(func() { c.Run(ctx, tokenWorkers) })
	return nil
}

// runLegacyTokenCleaner starts kube-controller-manager's cleaner of
// auto-generated service account tokens left unused for a year.
func runLegacyTokenCleaner(ctx context.Context, start func(func()), client kubernetes.Interface, factory informers.SharedInformerFactory) error {
	c, err := serviceaccount.NewLegacySATokenCleaner(
		factory.Core().V1().ServiceAccounts(), factory.Core().V1().Secrets(), factory.Core().V1().Pods(),
		client, clock.RealClock{}, serviceaccount.LegacySATokenCleanerOptions{
			CleanUpPeriod: legacyTokenCleanUpPeriod,
			SyncInterval:  serviceaccount.DefaultCleanerSyncInterval,
		})
	if err != nil {
		return err
	}
	start(func() { c.Run(ctx) })
	return nil
}
