package crd

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/finalizer"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
)

// storedCustomResources give apiextensions' CRD finalizer the custom
// resources of a CRD as kube-apiserver's storage gives them: in the
// storage version, served or not (only objects stored in an older version
// are converted, as kube's storage converts them), deleted past admission,
// their finalizers honoured. (Through the API, a CRD serving no version,
// or only versions its failing conversion webhook must convert to, or one
// whose resources a policy keeps from being deleted, stayed Terminating.)
type storedCustomResources struct {
	registry *registry.Registry
	writes   *pipeline.Pipeline
}

func (s storedCustomResources) GetCustomResourceListerCollectionDeleter(crd *apiextensionsv1.CustomResourceDefinition) (finalizer.ListerCollectionDeleter, error) {
	gr := schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Status.AcceptedNames.Plural}
	backend := s.registry.Snapshot().Backend(gr)
	if backend == nil {
		return nil, fmt.Errorf("the custom resources of %s are not served", crd.Name)
	}
	return &storedCRs{store: backend.Storage(), writes: s.writes}, nil
}

// storedCRs is the list and delete-collection the finalizer uses, in the
// namespace its context names (all of them when none).
type storedCRs struct {
	rest.TableConvertor // unused by the finalizer
	store               *registry.Store
	writes              *pipeline.Pipeline
}

func (c *storedCRs) NewList() runtime.Object { return &unstructured.UnstructuredList{} }

func (c *storedCRs) List(ctx context.Context, _ *metainternalversion.ListOptions) (runtime.Object, error) {
	return c.store.List(ctx, genericapirequest.NamespaceValue(ctx), nil)
}

func (c *storedCRs) DeleteCollection(ctx context.Context, _ rest.ValidateObjectFunc, options *metav1.DeleteOptions, _ *metainternalversion.ListOptions) (runtime.Object, error) {
	list, err := c.List(ctx, nil)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	if options == nil {
		options = &metav1.DeleteOptions{}
	}
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			return nil, err
		}
		_, _, err = c.writes.Delete(ctx, c.store, m.GetNamespace(), m.GetName(), options, pipeline.Options{Unadmitted: true, InCollection: true})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return &metav1.Status{Status: metav1.StatusSuccess}, nil
}
