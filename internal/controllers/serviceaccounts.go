package controllers

import (
	"context"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/certificates/rootcacertpublisher"
	"k8s.io/kubernetes/pkg/controller/serviceaccount"
)

// serviceAccountWorkers and rootCAWorkers are the workers
// kube-controller-manager starts the two controllers with.
const (
	serviceAccountWorkers = 1
	rootCAWorkers         = 1
)

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
