package crd

import (
	"context"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/finalizer"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/dynamic"
)

// dynamicCRClients give apiextensions' CRD finalizer the custom resources
// of a CRD through the API (kube's goes to storage directly), so that
// their deletion honours finalizers and admission like any other.
type dynamicCRClients struct{ client dynamic.Interface }

func (d dynamicCRClients) GetCustomResourceListerCollectionDeleter(crd *apiextensionsv1.CustomResourceDefinition) (finalizer.ListerCollectionDeleter, error) {
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: servedVersion(crd), Resource: crd.Status.AcceptedNames.Plural}
	return &crClient{resource: d.client.Resource(gvr), namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped}, nil
}

// servedVersion is the version the finalizer reaches the custom resources
// by: the storage version, or the first served one when the storage
// version is no longer served.
func servedVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	served := ""
	for _, v := range crd.Spec.Versions {
		if v.Served && v.Storage {
			return v.Name
		}
		if v.Served && served == "" {
			served = v.Name
		}
	}
	if served == "" {
		storage, _ := apiextensionshelpers.GetCRDStorageVersion(crd)
		return storage // nothing served: nothing to reach them by
	}
	return served
}

// crClient is the list and delete-collection the finalizer uses.
type crClient struct {
	rest.TableConvertor // unused by the finalizer
	resource            dynamic.NamespaceableResourceInterface
	namespaced          bool
}

func (c *crClient) NewList() runtime.Object { return &unstructured.UnstructuredList{} }

func (c *crClient) List(ctx context.Context, _ *metainternalversion.ListOptions) (runtime.Object, error) {
	return c.resource.List(ctx, metav1.ListOptions{})
}

func (c *crClient) DeleteCollection(ctx context.Context, _ rest.ValidateObjectFunc, options *metav1.DeleteOptions, _ *metainternalversion.ListOptions) (runtime.Object, error) {
	opts := metav1.DeleteOptions{}
	if options != nil {
		opts = *options
	}
	var err error
	if ns := genericapirequest.NamespaceValue(ctx); c.namespaced && ns != "" {
		err = c.resource.Namespace(ns).DeleteCollection(ctx, opts, metav1.ListOptions{})
	} else {
		err = c.resource.DeleteCollection(ctx, opts, metav1.ListOptions{})
	}
	return &metav1.Status{Status: metav1.StatusSuccess}, err
}
