package crd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/internal/registry"
)

// byVersion applies the strategy of the version a write is in: each
// version of a custom resource has its own schema.
type byVersion struct {
	versions map[string]registry.Strategy
	schemas  map[string]*versionSchema
	// terminating refuses creates while the CRD is being deleted.
	terminating bool
}

func (b byVersion) of(version string) registry.Strategy { return b.versions[version] }

// Default sets the schema's defaults on an object that did not come
// through the schema's codec (a server-side apply).
func (b byVersion) Default(obj runtime.Object) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	if s := b.schemas[u.GroupVersionKind().Version]; s != nil && s.structural != nil {
		structuraldefaulting.Default(u.Object, s.structural)
	}
}

func (b byVersion) Create(ctx context.Context, w registry.Write, obj runtime.Object) (runtime.Object, error) {
	if b.terminating {
		return nil, apierrors.NewForbidden(w.Info.GroupResource(), w.Name,
			errors.New("create not allowed while custom resource definition is terminating"))
	}
	return b.of(w.Info.Version).Create(ctx, w, obj)
}

func (b byVersion) Update(ctx context.Context, w registry.Write, obj, old runtime.Object) (runtime.Object, error) {
	return b.of(w.Info.Version).Update(ctx, w, obj, old)
}

func (b byVersion) AllowUnconditionalUpdate(ctx context.Context, subresource string) bool {
	return false // custom resources' strategy never allows it
}

func (b byVersion) AllowCreateOnUpdate(context.Context) bool {
	return false // custom resources' strategy never allows it
}

func (b byVersion) GarbageCollectionPolicy(ctx context.Context, w registry.Write) string {
	return b.of(w.Info.Version).GarbageCollectionPolicy(ctx, w)
}

// converter converts custom resources between the versions of their CRD
// with apiextensions' converter (apiVersion only for the None strategy,
// a ConversionReview to the CRD's webhook for the Webhook strategy), then
// prunes what the version's schema does not know, as kube-apiserver's
// converter of custom resources does.
type converter struct {
	safe    runtime.ObjectConvertor
	schemas map[string]registry.Schema
}

func (c converter) Convert(obj runtime.Object, to schema.GroupVersion) (runtime.Object, error) {
	out, err := c.safe.ConvertToVersion(obj, to)
	if err != nil {
		return nil, err
	}
	if s := c.schemas[to.Version]; s != nil && out != obj {
		s.Converted(out)
	}
	return out, nil
}

// scaleHooks serve the scale sub-resource from the JSON paths the CRD
// names, as apiextensions' scale storage does.
func scaleHooks(scale *apiextensionsv1.CustomResourceSubresourceScale, paths managedfields.ResourcePathMappings) *registry.Scale {
	return &registry.Scale{
		ReplicasPaths: paths, ValidatesReplicas: true, UIDOnlyReplaced: true,
		Of: func(obj runtime.Object) (*autoscalingv1.Scale, error) {
			u := obj.(*unstructured.Unstructured)
			out := &autoscalingv1.Scale{}
			out.Name, out.Namespace, out.UID = u.GetName(), u.GetNamespace(), u.GetUID()
			out.ResourceVersion, out.CreationTimestamp = u.GetResourceVersion(), u.GetCreationTimestamp()
			// A value of another type is refused with the accessor's
			// error, as apiextensions' scale storage refuses it.
			spec, _, err := unstructured.NestedInt64(u.Object, pathFields(scale.SpecReplicasPath)...)
			if err != nil {
				return nil, err
			}
			status, _, err := unstructured.NestedInt64(u.Object, pathFields(scale.StatusReplicasPath)...)
			if err != nil {
				return nil, err
			}
			out.Spec.Replicas, out.Status.Replicas = int32(spec), int32(status)
			if scale.LabelSelectorPath != nil {
				if out.Status.Selector, _, err = unstructured.NestedString(u.Object, pathFields(*scale.LabelSelectorPath)...); err != nil {
					return nil, err
				}
			}
			return out, nil
		},
		Readable: func(obj runtime.Object) error {
			u := obj.(*unstructured.Unstructured)
			if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, pathFields(scale.SpecReplicasPath)...); !found {
				return apierrors.NewInternalError(fmt.Errorf("the spec replicas field %q does not exist", scale.SpecReplicasPath))
			}
			return nil
		},
		WithReplicas: func(obj runtime.Object, replicas int32) (runtime.Object, error) {
			u := obj.(*unstructured.Unstructured).DeepCopy()
			if err := unstructured.SetNestedField(u.Object, int64(replicas), pathFields(scale.SpecReplicasPath)...); err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
			return u, nil
		},
	}
}

// replicasPaths are where each version of the CRD's resources has its
// replicas, nil in a version without the scale sub-resource, as
// apiextensions maps a Scale's managed fields.
func replicasPaths(crd *apiextensionsv1.CustomResourceDefinition) managedfields.ResourcePathMappings {
	paths := managedfields.ResourcePathMappings{}
	for _, v := range crd.Spec.Versions {
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}.String()
		paths[gv] = nil
		subresources, err := apiextensionshelpers.GetSubresourcesForVersion(crd, v.Name)
		if err != nil || subresources == nil || subresources.Scale == nil {
			continue
		}
		if path, err := fieldpath.MakePath(toInterfaces(pathFields(subresources.Scale.SpecReplicasPath))...); err == nil {
			paths[gv] = path
		}
	}
	return paths
}

func toInterfaces(fields []string) []interface{} {
	out := make([]interface{}, len(fields))
	for i, f := range fields {
		out[i] = f
	}
	return out
}

// pathFields splits a CRD scale path (".spec.replicas") into its fields;
// CRD validation allows only such dotted paths.
func pathFields(path string) []string {
	return strings.Split(strings.TrimPrefix(path, "."), ".")
}
