package admission

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// Objects are what the policy and webhook plugins make, convert and match
// objects with, as kube-apiserver's request scopes give them: built-in
// kinds through the scheme, custom resources through their CRD's
// conversion, and the versions and groups that serve one resource
// (matchPolicy: Equivalent).
type Objects struct {
	apiadmission.ObjectInterfaces
	equivalents runtime.EquivalentResourceRegistry

	mu sync.RWMutex
	// storedAs names the resources stored as another's (events.k8s.io
	// Events as core Events): kube-apiserver takes them as one resource.
	storedAs map[schema.GroupResource]schema.GroupResource
	// custom converts a custom resource to another version of its kind.
	custom func(obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error)
	// customDefaults sets a custom resource's defaults.
	customDefaults func(obj runtime.Object)
}

// NewObjects returns the objects of the built-in kinds; RegisterKind,
// StoredAs and ConvertCustom tell it of the served resources.
func NewObjects() *Objects {
	o := &Objects{ObjectInterfaces: objectInterfaces, storedAs: map[schema.GroupResource]schema.GroupResource{}}
	o.equivalents = runtime.NewEquivalentResourceRegistryWithIdentity(o.identity)
	return o
}

// objectInterfaces convert between the internal and versioned forms of
// built-in objects.
var objectInterfaces = apiadmission.NewObjectInterfacesFromScheme(legacyscheme.Scheme)

// RegisterKind records that the version gvr (and its sub-resource) serves
// kind, as kube-apiserver's API installer records every served version.
func (o *Objects) RegisterKind(gvr schema.GroupVersionResource, subresource string, kind schema.GroupVersionKind) {
	o.equivalents.RegisterKindFor(gvr, subresource, kind)
}

// StoredAs records that gr's objects are stored as those of another
// resource, which makes the two equivalent.
func (o *Objects) StoredAs(gr, storage schema.GroupResource) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.storedAs[gr] = storage
}

// ConvertCustom sets how custom resources are converted between versions.
func (o *Objects) ConvertCustom(convert func(obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.custom = convert
}

// DefaultCustom sets how custom resources get their schema's defaults,
// which mutating admission's plugins set again on what they changed.
func (o *Objects) DefaultCustom(setDefaults func(obj runtime.Object)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.customDefaults = setDefaults
}

// identity names a resource by what it is stored as.
func (o *Objects) identity(gr schema.GroupResource) string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if storage, ok := o.storedAs[gr]; ok {
		gr = storage
	}
	return gr.String()
}

func (o *Objects) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper {
	return o.equivalents
}
func (o *Objects) GetObjectCreater() runtime.ObjectCreater     { return creater{} }
func (o *Objects) GetObjectConvertor() runtime.ObjectConvertor { return convertor{o} }
func (o *Objects) GetObjectDefaulter() runtime.ObjectDefaulter { return defaulter{o} }

// defaulter defaults built-in objects through the scheme, and custom
// resources by their schema, as kube-apiserver's request scope of each
// does.
type defaulter struct{ o *Objects }

func (d defaulter) Default(obj runtime.Object) {
	if _, custom := obj.(*unstructured.Unstructured); !custom {
		objectInterfaces.GetObjectDefaulter().Default(obj)
		return
	}
	d.o.mu.RLock()
	setDefaults := d.o.customDefaults
	d.o.mu.RUnlock()
	if setDefaults != nil {
		setDefaults(obj)
	}
}

// creater makes built-in objects from the scheme, and custom resources as
// unstructured objects of their kind. A kind of a built-in group the
// scheme does not know (a webhook's patch to apiVersion v2) is its error.
type creater struct{}

func (creater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	if legacyscheme.Scheme.Recognizes(gvk) || legacyscheme.Scheme.IsGroupRegistered(gvk.Group) {
		return legacyscheme.Scheme.New(gvk)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// convertor converts built-in objects through the scheme, and custom
// resources (unstructured into unstructured) through their CRD.
type convertor struct{ o *Objects }

func (c convertor) Convert(in, out, context any) error {
	from, fromCustom := in.(*unstructured.Unstructured)
	into, intoCustom := out.(*unstructured.Unstructured)
	if !fromCustom || !intoCustom {
		return convertBuiltin(in, out, context)
	}
	c.o.mu.RLock()
	convert := c.o.custom
	c.o.mu.RUnlock()
	if convert == nil {
		return fmt.Errorf("no conversion of %v", from.GroupVersionKind())
	}
	converted, err := convert(from, into.GroupVersionKind())
	if err != nil {
		return err
	}
	into.Object = runtime.DeepCopyJSON(converted.(runtime.Unstructured).UnstructuredContent())
	return nil
}

// convertBuiltin converts a built-in object. kube-apiserver's admission
// holds the internal form of a request's object, which converts to any
// version of an equivalent kind (a policy on autoscaling/v2 sees a v1
// HorizontalPodAutoscaler, one on events.k8s.io a core Event); kapi's
// holds the version of the request, and two external versions have no
// conversion between them, so the conversion goes through the internal
// form.
func convertBuiltin(in, out, context any) error {
	err := legacyscheme.Scheme.Convert(in, out, context)
	obj, isObject := in.(runtime.Object)
	if err == nil || !isObject {
		return err
	}
	internal, internalErr := legacyscheme.Scheme.ConvertToVersion(obj, runtime.InternalGroupVersioner)
	if internalErr != nil {
		return err
	}
	return legacyscheme.Scheme.Convert(internal, out, context)
}

func (c convertor) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	return legacyscheme.Scheme.ConvertToVersion(in, gv)
}

func (c convertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return legacyscheme.Scheme.ConvertFieldLabel(gvk, label, value)
}
