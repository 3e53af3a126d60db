package pipeline

import (
	"fmt"
	goruntime "runtime"
	"sync"
	"weak"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/openapi"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/resources"
)

// fieldManagers builds, once per resource and sub-resource, the field
// manager that tracks metadata.managedFields and merges applied
// configurations (SPEC U3), with the type schemas of the OpenAPI
// description.
type fieldManagers struct {
	convert registry.Converter

	mu       sync.Mutex
	managers map[managerKey]*managedfields.FieldManager
}

// managerKey names a field manager by the Info it was made for (a custom
// resource's Info is replaced with its CRD) without keeping that Info
// alive: once a CRD changes or goes, its managers and their type
// converters go with its old Info.
type managerKey struct {
	info        weak.Pointer[resources.Info]
	subresource string
}

// builtinTypeConverter is the type converter of the built-in types, made
// once per process from their OpenAPI v3 definitions, as kube-apiserver's (some 10-20 ms of CPU);
// it is read only, so every pipeline of the process shares it.
var builtinTypeConverter = sync.OnceValues(func() (*recordedObjectTypes, error) {
	c, err := managedfields.NewTypeConverter(openapi.TypeConverterDefinitions(), false)
	if err != nil {
		return nil, err
	}
	return &recordedObjectTypes{TypeConverter: c}, nil
})

func (f *fieldManagers) get(info *resources.Info, subresource string) (*managedfields.FieldManager, error) {
	builtinConverter, err := builtinTypeConverter()
	if err != nil {
		return nil, err
	}
	// A custom kind's schemas are built at its first use (some 10 ms a
	// version): not under the lock every write takes.
	if info.FieldTypes != nil {
		if _, _, err := info.FieldTypes(); err != nil {
			return nil, err
		}
	} else if _, _, err := info.Schemas(); err != nil {
		return nil, err
	}
	key := managerKey{weak.Make(info), subresource}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.managers == nil {
		f.managers = map[managerKey]*managedfields.FieldManager{}
	}
	if m, ok := f.managers[key]; ok {
		return m, nil
	}
	gvk := info.GroupVersionKind()
	reset := resetFields(info, subresource)
	var m *managedfields.FieldManager
	if codecs.Scheme.Recognizes(gvk) {
		m, err = managedfields.NewDefaultFieldManager(builtinConverter, versionConvertor{codecs.Scheme, f.convert}, noDefaults{}, kindedCreater{}, gvk, gvk.GroupVersion(), subresource, reset)
	} else {
		types, convertor, cerr := f.customTypes(info)
		if cerr != nil {
			return nil, cerr
		}
		m, err = managedfields.NewDefaultCRDFieldManager(types, convertor, noDefaults{}, unstructuredCreater{}, gvk, gvk.GroupVersion(), subresource, reset)
	}
	if err != nil {
		return nil, err
	}
	f.managers[key] = m
	goruntime.AddCleanup(info, f.forget, key)
	return m, nil
}

func (f *fieldManagers) forget(key managerKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.managers, key)
}

// customTypes are the type converter and version convertor of a kind
// defined by data. A CRD's kind has them in its Info (every version of
// the CRD). Otherwise they are built as kube-apiserver builds a custom
// resource's, in its one version, so that apply merges lists and maps as
// the schema's x-kubernetes-list-type and map-type say: its schema with
// the built-in definitions it refers to (object metadata; kube-apiserver
// adds every built-in definition, to the same effect, some 2.5 MB per
// kind). A kind without a schema gets types deduced from the objects.
func (f *fieldManagers) customTypes(info *resources.Info) (managedfields.TypeConverter, runtime.ObjectConvertor, error) {
	if info.FieldTypes != nil {
		return info.FieldTypes()
	}
	schema, _, err := info.Schemas()
	if err != nil {
		return nil, nil, err
	}
	if schema == nil {
		return managedfields.NewDeducedTypeConverter(), identityConvertor{}, nil
	}
	models := openapi.DefinitionsFor(openapi.CustomDefinitionName(info.GroupVersionKind()), schema)
	types, err := managedfields.NewTypeConverter(models, info.PreserveUnknownFields)
	return types, identityConvertor{}, err
}

// resetFields are the fields an endpoint does not own: the main resource
// leaves status to its sub-resource, and the status sub-resource spec and
// metadata.
func resetFields(info *resources.Info, subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	if info.ResetFields != nil {
		if reset, ok := info.ResetFields(subresource); ok {
			return reset
		}
	}
	if info.Subresource("status") == nil {
		return nil
	}
	version := fieldpath.APIVersion(info.GroupVersionKind().GroupVersion().String())
	if subresource == "status" {
		// As apiextensions' status strategy: a status write changes no
		// metadata, so its manager owns none.
		return map[fieldpath.APIVersion]fieldpath.Filter{
			version: fieldpath.NewExcludeSetFilter(fieldpath.NewSet(fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("metadata"))),
		}
	}
	return map[fieldpath.APIVersion]fieldpath.Filter{
		version: fieldpath.NewExcludeSetFilter(fieldpath.NewSet(fieldpath.MakePathOrDie("status"))),
	}
}

// identityConvertor converts nothing: each custom resource is served in
// one version, which is also its hub.
type identityConvertor struct{}

func (identityConvertor) Convert(in, out, context interface{}) error {
	return fmt.Errorf("conversion between versions is not supported")
}

func (identityConvertor) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	if _, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{in.GetObjectKind().GroupVersionKind()}); ok {
		return in, nil
	}
	kinds, _, err := codecs.Scheme.ObjectKinds(in)
	if err == nil {
		if target, ok := gv.KindForGroupVersionKinds(kinds); ok && target.GroupVersion() == kinds[0].GroupVersion() {
			return in, nil
		}
	}
	return nil, fmt.Errorf("conversion of %T to %v is not supported", in, gv)
}

func (identityConvertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// versionConvertor is the scheme's convertor (between typed and
// unstructured objects of one version) that also converts built-in objects
// between the versions of their group, which the field manager needs for
// the managedFields entries of other versions (an HPA updated through
// autoscaling/v1 keeps the entries of appliers of autoscaling/v2). Like
// kube-apiserver's, it does not copy an object already in the version
// asked: the field manager only reads what it converts, and the objects
// it is given are the write's own.
type versionConvertor struct {
	*runtime.Scheme
	convert registry.Converter // nil: resources are served in one version
}

func (c versionConvertor) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	from := in.GetObjectKind().GroupVersionKind()
	if kinds, _, err := c.ObjectKinds(in); err == nil {
		from = kinds[0]
	}
	target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{from})
	if !ok || c.convert == nil || target.GroupVersion() == from.GroupVersion() {
		return c.Scheme.UnsafeConvertToVersion(in, gv)
	}
	typed, err := c.Scheme.UnsafeConvertToVersion(in, from.GroupVersion())
	if err != nil {
		return nil, err
	}
	return c.convert.Convert(typed, target.GroupVersion())
}

type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

// kindedCreater makes typed objects that carry their kind, which the type
// converter needs to find their schema.
type kindedCreater struct{}

func (kindedCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	obj, err := codecs.Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj, nil
}

type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
