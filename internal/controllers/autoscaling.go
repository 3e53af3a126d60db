package controllers

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/scale"
	"k8s.io/kubernetes/pkg/controller/podautoscaler"
	"k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
	resourceclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
	"k8s.io/metrics/pkg/client/custom_metrics"
	"k8s.io/metrics/pkg/client/external_metrics"
)

// The horizontal pod autoscaler's settings, kube-controller-manager's
// defaults (its --horizontal-pod-autoscaler-* flags).
const (
	hpaWorkers                 = 5
	hpaSyncPeriod              = 15 * time.Second
	hpaDownscaleStabilization  = 5 * time.Minute
	hpaTolerance               = 0.1
	hpaCPUInitializationPeriod = 5 * time.Minute
	hpaInitialReadinessDelay   = 30 * time.Second
)

// runAutoscaler starts kube-controller-manager's horizontal pod
// autoscaler. It reads metrics from the metrics APIs (metrics.k8s.io,
// custom.metrics.k8s.io, external.metrics.k8s.io) an aggregated server
// such as metrics-server provides; without one, as in a cluster without
// it, an autoscaler keeps its target between its minimum and maximum
// replicas and reports in its conditions and events that it cannot get
// the metrics.
func runAutoscaler(ctx context.Context, start func(func()), config *rest.Config, client kubernetes.Interface, factory informers.SharedInformerFactory, mapper meta.RESTMapper) error {
	// Not cached: the scale kind resolver caches what it learns itself.
	scales, err := scale.NewForConfig(config, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(client.Discovery()))
	if err != nil {
		return err
	}
	resources, err := resourceclient.NewForConfig(config)
	if err != nil {
		return err
	}
	external, err := external_metrics.NewForConfig(config)
	if err != nil {
		return err
	}
	customVersions := custom_metrics.NewAvailableAPIsGetter(client.Discovery())
	metricsClient := metrics.NewRESTMetricsClient(resources, custom_metrics.NewForConfig(config, mapper, customVersions), external)
	c := podautoscaler.NewHorizontalController(ctx, client.CoreV1(), scales, client.AutoscalingV2(), mapper, metricsClient,
		factory.Autoscaling().V2().HorizontalPodAutoscalers(), factory.Core().V1().Pods(),
		hpaSyncPeriod, hpaDownscaleStabilization, hpaTolerance, hpaCPUInitializationPeriod, hpaInitialReadinessDelay)
	start(func() { custom_metrics.PeriodicallyInvalidate(customVersions, hpaSyncPeriod, ctx.Done()) })
	start(func() { c.Run(ctx, hpaWorkers) })
	return nil
}
