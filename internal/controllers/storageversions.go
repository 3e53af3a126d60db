package controllers

import (
	"context"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
	svm "k8s.io/kubernetes/pkg/controller/storageversionmigrator"
)

// runStorageVersionMigrator starts kube-controller-manager's storage
// version migrator: a StorageVersionMigration of a resource has every
// object stored before it written again (an empty patch, which kapi
// stores in the resource's storage version, converting what an older
// storage version left), and a custom resource's CRD then lists only its
// storage version in status.storedVersions. It reads the objects from the
// garbage collector's graph, as kube-controller-manager's does.
func runStorageVersionMigrator(ctx context.Context, start func(func()), config *rest.Config, graph *garbagecollector.GraphBuilder, factory informers.SharedInformerFactory, mapper meta.ResettableRESTMapper) error {
	// As kube-controller-manager's: a migration makes many requests.
	config = rest.CopyConfig(config)
	config.QPS *= 20
	config.Burst *= 100
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	dynamicClient, err := dynamic.NewForConfig(config)
	if err != nil {
		return err
	}
	discoveryClient, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return err
	}
	metadataClient, err := metadata.NewForConfig(config)
	if err != nil {
		return err
	}
	crds, err := apiextensionsclient.NewForConfig(config)
	if err != nil {
		return err
	}
	migrations := factory.Storagemigration().V1().StorageVersionMigrations()
	migrator := svm.NewSVMController(ctx, client, dynamicClient, migrations, StorageVersionMigratorController, mapper, graph)
	versions := svm.NewResourceVersionController(ctx, client, discoveryClient, metadataClient, migrations, mapper)
	storedVersions := svm.NewCustomResourceController(ctx, client, migrations, crds.ApiextensionsV1().CustomResourceDefinitions())
	start(func() { migrator.Run(ctx) })
	start(func() { versions.Run(ctx) })
	start(func() { storedVersions.Run(ctx) })
	return nil
}
