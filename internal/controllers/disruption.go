package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/scale"
	"k8s.io/kubernetes/pkg/controller/disruption"
)

// disruptionWorkers is kube-controller-manager's default.
const disruptionWorkers = 1

// runDisruption starts kube-controller-manager's disruption controller:
// it keeps each PodDisruptionBudget's status (expected and healthy pods,
// disruptions allowed) from the pods it selects and their controllers'
// scale.
func runDisruption(ctx context.Context, start func(func()), config *rest.Config, client kubernetes.Interface, factory informers.SharedInformerFactory,
	discoveryClient discovery.DiscoveryInterface, mapper meta.ResettableRESTMapper) error {
	scales, err := scale.NewForConfig(config, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(discoveryClient))
	if err != nil {
		return err
	}
	c := disruption.NewDisruptionController(ctx, factory.Core().V1().Pods(), factory.Policy().V1().PodDisruptionBudgets(),
		factory.Core().V1().ReplicationControllers(), factory.Apps().V1().ReplicaSets(), factory.Apps().V1().Deployments(),
		factory.Apps().V1().StatefulSets(), client, mapper, scales, discoveryClient)
	start(func() { c.Run(ctx, disruptionWorkers) })
	return nil
}
