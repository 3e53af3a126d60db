package builtin

import (
	"context"
	"fmt"
	"reflect"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
)

// kubeStrategy applies a built-in type's registry strategy from
// k8s.io/kubernetes exactly as kube-apiserver's generic registry does:
// the versioned object is defaulted by the scheme, converted to the
// internal type the strategy works on, prepared and validated by
// rest.BeforeCreate or rest.BeforeUpdate (metadata and type validation,
// declarative validation, warnings, canonicalisation), and converted back.
type kubeStrategy struct {
	create rest.RESTCreateStrategy
	// update holds the strategy of each writable sub-resource by name, ""
	// for the object itself; scale writes use the object's.
	update map[string]rest.RESTUpdateStrategy
	// byAction are the sub-resources written by the type's own action (a
	// pod's binding), which prepares the object itself, as kube's binding
	// storage writes the pod without its strategy.
	byAction map[string]bool
	// unstructured strategies (custom resources') work on the written
	// object itself, which has no internal type and no scheme defaults.
	unstructured bool
	// roundTrips types are made what kube's conversion to the internal
	// version and back makes of them, as they are decoded or read (see
	// roundTrip).
	roundTrips bool
}

var _ registry.Strategy = (*kubeStrategy)(nil)

// GenerateName is the name kube's strategy makes of a generateName: most
// append five random characters, some take it as it is (an IPAddress's
// name is the address).
func (s *kubeStrategy) GenerateName(base string) string { return s.create.GenerateName(base) }

// resetFields are the fields kube's strategy of a sub-resource resets
// (rest.ResetFieldsStrategy or ResetFieldsFilterStrategy), which the
// managed fields of its writes leave out, as kube-apiserver's installer
// gives its field managers; a sub-resource without a strategy of its own
// (scale) is not the strategy's to say.
func (k *kubeStrategy) resetFields(subresource string) (map[fieldpath.APIVersion]fieldpath.Filter, bool) {
	s, ok := k.update[subresource]
	if !ok {
		return nil, false
	}
	switch s := s.(type) {
	case rest.ResetFieldsStrategy:
		return fieldpath.NewExcludeFilterSetMap(s.GetResetFields()), true
	case rest.ResetFieldsFilterStrategy:
		return s.GetResetFieldsFilter(), true
	}
	return nil, true
}

// strategy is the kubeStrategy of a type whose strategy value serves
// create and update, with the strategies of its sub-resources.
func strategy(main interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}, subresources map[string]rest.RESTUpdateStrategy) *kubeStrategy {
	update := map[string]rest.RESTUpdateStrategy{"": main, "scale": main}
	for name, s := range subresources {
		update[name] = s
	}
	return &kubeStrategy{create: main, update: update}
}

// UnstructuredStrategy applies a registry strategy that works on the
// versioned unstructured object, as apiextensions' strategy of custom
// resources does, with the strategies of its sub-resources.
func UnstructuredStrategy(main interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}, subresources map[string]rest.RESTUpdateStrategy) registry.Strategy {
	k := strategy(main, subresources)
	k.unstructured = true
	return k
}

func (k *kubeStrategy) Default(obj runtime.Object) {
	if k.unstructured {
		return
	}
	legacyscheme.Scheme.Default(obj)
	if k.roundTrips {
		roundTrip(obj)
	}
}

// roundTripping marks a type whose conversion to the internal version and
// back changes it: kube-apiserver decodes a body to the internal version,
// and its field manager, storage and answers see the object converted
// back; it reads stored objects the same way. A Secret's stringData is
// merged into its data; a DaemonSet's template generation is written as
// its annotation; a StatefulSet's claim templates get their apiVersion
// and kind (which protobuf storage does not keep); an autoscaling/v1
// HorizontalPodAutoscaler gets its CPU target's default, which its field
// manager then owns; a Node's podCIDRs follow its podCIDR.
func roundTripping(s *kubeStrategy) *kubeStrategy {
	s.roundTrips = true
	return s
}

// roundTrip makes obj, in place, what the conversion to the internal
// version and back makes of it.
func roundTrip(obj runtime.Object) {
	kinds, _, err := legacyscheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return
	}
	internal, err := legacyscheme.Scheme.ConvertToVersion(obj, runtime.InternalGroupVersioner)
	if err != nil {
		return
	}
	back, err := legacyscheme.Scheme.New(kinds[0])
	if err != nil || legacyscheme.Scheme.Convert(internal, back, nil) != nil {
		return
	}
	typeMeta := obj.GetObjectKind().GroupVersionKind()
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(back).Elem())
	obj.GetObjectKind().SetGroupVersionKind(typeMeta)
}

func (k *kubeStrategy) AllowUnconditionalUpdate(ctx context.Context, subresource string) bool {
	if s := k.update[subresource]; s != nil {
		return s.AllowUnconditionalUpdate(ctx)
	}
	return true // an action's write, which prepares the object itself
}

func (k *kubeStrategy) AllowCreateOnUpdate(ctx context.Context) bool {
	s := k.update[""]
	return s != nil && s.AllowCreateOnUpdate(ctx)
}

func (k *kubeStrategy) Create(ctx context.Context, w registry.Write, obj runtime.Object) (runtime.Object, error) {
	if k.unstructured {
		return obj, rest.BeforeCreate(k.create, requestContext(ctx, w), obj)
	}
	internal, err := ownToInternal(obj)
	if err != nil {
		return nil, err
	}
	if err := rest.BeforeCreate(k.create, requestContext(ctx, w), internal); err != nil {
		return nil, err
	}
	return fromInternal(internal, w)
}

func (k *kubeStrategy) Update(ctx context.Context, w registry.Write, obj, old runtime.Object) (runtime.Object, error) {
	s := k.update[w.Subresource]
	if s == nil && k.byAction[w.Subresource] {
		keepSystemFields(obj, old)
		return obj, nil
	}
	if s == nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("no update strategy for %s/%s", w.Info.Resource, w.Subresource))
	}
	if k.unstructured {
		return obj, rest.BeforeUpdate(s, requestContext(ctx, w), obj, old)
	}
	internal, err := ownToInternal(obj)
	if err != nil {
		return nil, err
	}
	internalOld, err := ownToInternal(old)
	if err != nil {
		return nil, err
	}
	if err := rest.BeforeUpdate(s, requestContext(ctx, w), internal, internalOld); err != nil {
		return nil, err
	}
	return fromInternal(internal, w)
}

// BeforeDelete implements registry.GracefulDeleter with kube's
// rest.BeforeDelete on the internal object (a conversion, so obj is not
// changed), for types whose strategy deletes gracefully; others are never
// graceful.
func (k *kubeStrategy) BeforeDelete(ctx context.Context, w registry.Write, obj runtime.Object, opts *metav1.DeleteOptions) (runtime.Object, bool, bool, error) {
	graceful, ok := k.create.(rest.RESTDeleteStrategy)
	if _, isGraceful := k.create.(rest.RESTGracefulDeleteStrategy); !ok || !isGraceful || k.unstructured {
		return obj, false, false, nil
	}
	internal, err := toInternal(obj)
	if err != nil {
		return nil, false, false, err
	}
	isGraceful, pending, err := rest.BeforeDelete(graceful, requestContext(ctx, w), internal, opts)
	if err != nil || !isGraceful {
		return obj, false, pending, err
	}
	marked, err := fromInternal(internal, w)
	return marked, true, false, err
}

// GarbageCollectionPolicy is the strategy's default policy for the
// dependents of deleted objects (background deletion where the strategy
// has none, as kube's generic registry).
func (k *kubeStrategy) GarbageCollectionPolicy(ctx context.Context, w registry.Write) string {
	gc, ok := k.create.(rest.GarbageCollectionDeleteStrategy)
	if !ok {
		return pipeline.DeleteDependents
	}
	switch gc.DefaultGarbageCollectionPolicy(requestContext(ctx, w)) {
	case rest.OrphanDependents:
		return pipeline.OrphanDependents
	case rest.Unsupported:
		return pipeline.GCUnsupported
	}
	return pipeline.DeleteDependents
}

// keepSystemFields carries over what a write may not change.
func keepSystemFields(obj, old runtime.Object) {
	m, o := mustAccessor(obj), mustAccessor(old)
	m.SetUID(o.GetUID())
	m.SetCreationTimestamp(o.GetCreationTimestamp())
	m.SetDeletionTimestamp(o.GetDeletionTimestamp())
	m.SetDeletionGracePeriodSeconds(o.GetDeletionGracePeriodSeconds())
}

// toInternal converts a versioned object to a new internal one; obj is
// left as it was.
func toInternal(obj runtime.Object) (runtime.Object, error) {
	internal, err := legacyscheme.Scheme.ConvertToVersion(obj, runtime.InternalGroupVersioner)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return internal, nil
}

// ownToInternal converts objects the write owns (a decoded body, the
// current object read from storage for this write) to their internal form
// without a copy, as kube-apiserver's codec converts what it decodes: the
// internal object shares their parts, and obj is not to be used but
// through what the strategy answers.
func ownToInternal(obj runtime.Object) (runtime.Object, error) {
	internal, err := legacyscheme.Scheme.UnsafeConvertToVersion(obj, runtime.InternalGroupVersioner)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return internal, nil
}

// fromInternal converts a prepared internal object back to the written
// version.
func fromInternal(internal runtime.Object, w registry.Write) (runtime.Object, error) {
	out, err := legacyscheme.Scheme.UnsafeConvertToVersion(internal, w.Info.GroupVersionKind().GroupVersion())
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}

// requestContext carries what kube's strategies read from a request: the
// namespace ("" for cluster-scoped resources), the request info (group,
// version, resource, sub-resource, verb: declarative validation and some
// types' rules depend on them) and the user.
func requestContext(ctx context.Context, w registry.Write) context.Context {
	ctx = genericapirequest.WithNamespace(ctx, w.Namespace)
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true,
		Verb:              w.Verb,
		APIPrefix:         apiPrefix(w.Info.Group),
		APIGroup:          w.Info.Group,
		APIVersion:        w.Info.Version,
		Namespace:         w.Namespace,
		Resource:          w.Info.Resource,
		Subresource:       w.Subresource,
		Name:              w.Name,
		Parts:             parts(w),
	})
	return ctx
}

func apiPrefix(group string) string {
	if group == "" {
		return "api"
	}
	return "apis"
}

func parts(w registry.Write) []string {
	p := []string{w.Info.Resource}
	if w.Name != "" {
		p = append(p, w.Name)
	}
	if w.Subresource != "" {
		p = append(p, w.Subresource)
	}
	return p
}

func mustAccessor(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("object %T has no metadata: %v", obj, err)) // built-in types all have metadata
	}
	return m
}
