package controllers

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/kubernetes/pkg/controller/disruption"
)

// disruptionWorkers is kube-controller-manager's default.
const disruptionWorkers = 1

// runDisruption starts kube-controller-manager's disruption controller:
// it keeps each PodDisruptionBudget's status (expected and healthy pods,
// disruptions allowed) from the pods it selects and their controllers'
// scale.
func runDisruption(ctx context.Context, start func(func()), config *rest.Config, client kubernetes.Interface, factory informers.SharedInformerFactory, discoveryClient discovery.DiscoveryInterface) error {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discoveryClient))
	scales, err := scale.NewForConfig(config, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(discoveryClient))
	if err != nil {
		return err
	}
	c := disruption.NewDisruptionController(ctx, factory.Core().V1().Pods(), factory.Policy().V1().PodDisruptionBudgets(),
		factory.Core().V1().ReplicationControllers(), factory.Apps().V1().ReplicaSets(), factory.Apps().V1().Deployments(),
		factory.Apps().V1().StatefulSets(), client, mapper, scales, discoveryClient)
	start(func() { c.Run(ctx, disruptionWorkers) })
	// The mapper learns resources added later (custom resources with a
	// scale sub-resource) when it is reset.
	start(func() { wait.Until(mapper.Reset, 30*time.Second, ctx.Done()) })
	return nil
}
