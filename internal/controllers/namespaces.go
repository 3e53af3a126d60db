package controllers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/kubernetes/pkg/controller/namespace"
)

// namespaceWorkers is how many namespaces are emptied at once
// (kube-controller-manager's --concurrent-namespace-syncs default).
const namespaceWorkers = 10

// runNamespaces starts kube-controller-manager's namespace controller: it
// empties namespaces being deleted (reporting progress in their status
// conditions), retries while finalizers hold their content, and then
// removes the kubernetes finalizer so that the namespace goes.
func runNamespaces(ctx context.Context, start func(func()), client kubernetes.Interface, metadataClient metadata.Interface, factory informers.SharedInformerFactory, resync time.Duration) {
	c := namespace.NewNamespaceController(ctx, client, metadataClient,
		client.Discovery().ServerPreferredNamespacedResources,
		factory.Core().V1().Namespaces(), resync, corev1.FinalizerKubernetes)
	start(func() { c.Run(ctx, namespaceWorkers) })
}
