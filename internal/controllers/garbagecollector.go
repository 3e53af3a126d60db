package controllers

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/restmapper"
	"k8s.io/controller-manager/pkg/informerfactory"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
)

// gcWorkers is kube-controller-manager's --concurrent-gc-syncs default;
// gcSyncPeriod how often it looks for new resources to watch.
const (
	gcWorkers    = 20
	gcSyncPeriod = 30 * time.Second
)

// runGarbageCollector starts kube-controller-manager's garbage collector:
// it watches the metadata of every deletable resource, deletes objects
// whose owners are gone, and carries out foreground and orphan deletion
// (the foregroundDeletion and orphan finalizers).
func runGarbageCollector(ctx context.Context, start func(func()), client kubernetes.Interface, metadataClient metadata.Interface,
	factory informers.SharedInformerFactory, metadataFactory metadatainformer.SharedInformerFactory, informersStarted <-chan struct{},
	discoveryClient discovery.DiscoveryInterface) error {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discoveryClient))
	gc, err := garbagecollector.NewGarbageCollector(ctx, client, metadataClient, mapper,
		garbagecollector.DefaultIgnoredResources(), informerfactory.NewInformerFactory(factory, metadataFactory), informersStarted)
	if err != nil {
		return err
	}
	start(func() { gc.Run(ctx, gcWorkers, gcSyncPeriod) })
	// Sync takes its own discovery client: it resets the mapper's.
	start(func() { gc.Sync(ctx, client.Discovery(), gcSyncPeriod) })
	start(func() { wait.Until(mapper.Reset, gcSyncPeriod, ctx.Done()) })
	return nil
}
