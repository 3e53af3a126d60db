package controllers

import (
	"context"
	"time"

	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/controller-manager/pkg/informerfactory"
	"k8s.io/kubernetes/pkg/controller"
	resourcequotacontroller "k8s.io/kubernetes/pkg/controller/resourcequota"
	quotainstall "k8s.io/kubernetes/pkg/quota/v1/install"
)

const (
	// resourceQuotaWorkers is kube-controller-manager's
	// --concurrent-resource-quota-syncs default.
	resourceQuotaWorkers = 5
	// resourceQuotaSyncPeriod is its --resource-quota-sync-period default:
	// how often every quota's usage is recomputed in full.
	resourceQuotaSyncPeriod = 5 * time.Minute
	// quotaDiscoveryPeriod is how often the controller looks for new
	// resources to count, as kube-controller-manager does.
	quotaDiscoveryPeriod = 30 * time.Second
)

// runResourceQuota starts kube-controller-manager's resource quota
// controller: it keeps each ResourceQuota's status.used current as
// objects come and go (quota admission charges creates at once; the
// controller gives back what deletes free).
func runResourceQuota(ctx context.Context, start func(func()), client kubernetes.Interface, factory informers.SharedInformerFactory,
	metadataFactory metadatainformer.SharedInformerFactory, informersStarted <-chan struct{}, discoveryClient discovery.DiscoveryInterface) error {
	objectOrMetadata := informerfactory.NewInformerFactory(factory, metadataFactory)
	listerFuncForResource := generic.ListerFuncForResourceFunc(objectOrMetadata.ForResource)
	config, err := quotainstall.NewQuotaConfigurationForControllers(listerFuncForResource, factory)
	if err != nil {
		return err
	}
	c, err := resourcequotacontroller.NewController(ctx, &resourcequotacontroller.ControllerOptions{
		QuotaClient:               client.CoreV1(),
		ResourceQuotaInformer:     factory.Core().V1().ResourceQuotas(),
		ResyncPeriod:              controller.StaticResyncPeriodFunc(resourceQuotaSyncPeriod),
		InformerFactory:           objectOrMetadata,
		ReplenishmentResyncPeriod: resyncPeriod, // a draw per monitor, as kube-controller-manager's
		DiscoveryFunc:             discoveryClient.ServerPreferredNamespacedResources,
		IgnoredResourcesFunc:      config.IgnoredResources,
		InformersStarted:          informersStarted,
		Registry:                  generic.NewRegistry(config.Evaluators()),
		UpdateFilter:              quotainstall.DefaultUpdateFilter(),
	})
	if err != nil {
		return err
	}
	start(func() { c.Run(ctx, resourceQuotaWorkers) })
	start(func() { c.Sync(ctx, discoveryClient.ServerPreferredNamespacedResources, quotaDiscoveryPeriod) })
	return nil
}
