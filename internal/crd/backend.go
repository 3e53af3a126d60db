package crd

import (
	"fmt"
	"log/slog"
	"maps"
	"sync"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kapi-dev/kapi/internal/builtin"
	"github.com/kapi-dev/kapi/internal/openapi"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/resources"
)

// verbs of every custom resource, as kube-apiserver serves them.
var verbs = []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}

// backendSpec is the registry backend that serves crd's custom resources:
// one store per served version under the accepted names, each with its
// structural schema, and the storage version's strategy.
func backendSpec(crd *apiextensionsv1.CustomResourceDefinition, terminating bool, conversions *conversion.CRConverterFactory, logger *slog.Logger) (registry.Spec, error) {
	storageVersion, err := apiextensionshelpers.GetCRDStorageVersion(crd)
	if err != nil {
		return registry.Spec{}, err
	}
	safe, unsafe, err := conversions.NewConverter(crd)
	if err != nil {
		return registry.Spec{}, err
	}
	names := crd.Status.AcceptedNames
	spec := registry.Spec{
		StorageVersion:  storageVersion,
		StorageUnserved: !apiextensionshelpers.HasServedCRDVersion(crd, storageVersion),
		Schemas:         map[string]registry.Schema{},
	}
	spec.Converter = converter{safe: safe, schemas: spec.Schemas}
	strategies := map[string]registry.Strategy{}
	scales := map[string]*registry.Scale{}
	schemas := map[string]*versionSchema{}
	openAPI := map[string]lazySchemas{}
	for _, v := range crd.Spec.Versions {
		openAPI[v.Name] = lazyOpenAPISchemas(crd, v.Name, logger)
	}
	fieldTypes := fieldManagerTypes(crd, openAPI, safe)
	for _, v := range crd.Spec.Versions {
		if !v.Served && v.Name != storageVersion {
			continue
		}
		structural, err := structuralFor(crd, v.Name)
		if err != nil {
			return registry.Spec{}, err
		}
		gk := schema.GroupKind{Group: crd.Spec.Group, Kind: names.Kind}
		schemas[v.Name] = newVersionSchema(gk, structural, crd.Spec.PreserveUnknownFields)
		spec.Schemas[v.Name] = schemas[v.Name]
		strategy, attrs, err := versionStrategy(crd, v, structural)
		if err != nil {
			return registry.Spec{}, err
		}
		strategies[v.Name] = strategy
		info, hooks, err := versionInfo(crd, v, logger)
		if err != nil {
			return registry.Spec{}, err
		}
		info.FieldAttrs = attrs
		info.OpenAPI, info.FieldTypes = openAPI[v.Name], fieldTypes
		info.Terminating = terminating
		gvk := info.GroupVersionKind()
		info.FieldLabelConversion = func(label, value string) (string, string, error) {
			return unsafe.ConvertFieldLabel(gvk, label, value)
		}
		spec.Versions = append(spec.Versions, info)
		scales[v.Name] = hooks.Scale
		if v.Name == storageVersion {
			spec.Hooks = hooks
		}
	}
	// Each version serves the scale sub-resource by its own paths, as
	// apiextensions' storage of each version does.
	spec.Hooks.Scales = scales
	spec.Strategy = byVersion{versions: strategies, schemas: schemas, terminating: terminating}
	return spec, nil
}

// structuralFor is the structural schema of a version with its defaults
// pruned, as kube-apiserver serves it; nil when the version has none.
func structuralFor(crd *apiextensionsv1.CustomResourceDefinition, version string) (*structuralschema.Structural, error) {
	validation, err := apiextensionshelpers.GetSchemaForVersion(crd, version)
	if err != nil || validation == nil {
		return nil, err
	}
	internal := &apiextensionsinternal.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(validation, internal, nil); err != nil {
		return nil, err
	}
	s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		if crd.Spec.PreserveUnknownFields {
			return nil, nil
		}
		return nil, fmt.Errorf("the server could not properly serve the CR schema: %w", err)
	}
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, fmt.Errorf("the server could not properly serve the CR schema: %w", err)
	}
	return s, nil
}

// versionStrategy is apiextensions' strategy of one version's custom
// resources (schema and CEL validation, status and scale rules), with the
// fields its objects can be selected by (selectableFields).
func versionStrategy(crd *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion, structural *structuralschema.Structural) (registry.Strategy, func(runtime.Object) fields.Set, error) {
	var props *apiextensionsinternal.JSONSchemaProps
	validation, err := apiextensionshelpers.GetSchemaForVersion(crd, v.Name)
	if err != nil {
		return nil, nil, err
	}
	if validation != nil {
		internal := &apiextensionsinternal.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(validation, internal, nil); err != nil {
			return nil, nil, err
		}
		props = internal.OpenAPIV3Schema
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(props)
	if err != nil {
		return nil, nil, err
	}
	subresources, err := apiextensionshelpers.GetSubresourcesForVersion(crd, v.Name)
	if err != nil {
		return nil, nil, err
	}
	var statusSpec *apiextensionsinternal.CustomResourceSubresourceStatus
	var statusValidator apiservervalidation.SchemaValidator
	if subresources != nil && subresources.Status != nil {
		statusSpec = &apiextensionsinternal.CustomResourceSubresourceStatus{}
		if props != nil && props.Properties != nil {
			if statusSchema, ok := props.Properties["status"]; ok {
				if statusValidator, _, err = apiservervalidation.NewSchemaValidator(&statusSchema); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	var scaleSpec *apiextensionsinternal.CustomResourceSubresourceScale
	if subresources != nil && subresources.Scale != nil {
		scaleSpec = &apiextensionsinternal.CustomResourceSubresourceScale{}
		if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(subresources.Scale, scaleSpec, nil); err != nil {
			return nil, nil, err
		}
	}
	kind := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Status.AcceptedNames.Kind}
	main := customresource.NewStrategy(unstructuredTyper{}, crd.Spec.Scope == apiextensionsv1.NamespaceScoped, kind,
		validator, statusValidator, structural, statusSpec, scaleSpec, v.SelectableFields)
	subs := map[string]rest.RESTUpdateStrategy{}
	if statusSpec != nil {
		subs["status"] = customresource.NewStatusStrategy(main)
	}
	attrs := func(obj runtime.Object) fields.Set {
		_, set, err := main.GetAttrs(obj)
		if err != nil {
			return nil
		}
		return set
	}
	return builtin.UnstructuredStrategy(main, subs), attrs, nil
}

// versionInfo describes one served version for routing, discovery and
// tables, with the hooks of its sub-resources.
func versionInfo(crd *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion, logger *slog.Logger) (*resources.Info, registry.Hooks, error) {
	names := crd.Status.AcceptedNames
	info := &resources.Info{
		Group: crd.Spec.Group, Version: v.Name, Resource: names.Plural, Singular: names.Singular, Kind: names.Kind,
		ListKind:   names.ListKind,
		Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		ShortNames: names.ShortNames, Categories: names.Categories, Verbs: verbs,
		Generation: true,
	}
	var hooks registry.Hooks
	subresources, err := apiextensionshelpers.GetSubresourcesForVersion(crd, v.Name)
	if err != nil {
		return nil, hooks, err
	}
	if subresources != nil && subresources.Status != nil {
		info.Subresources = append(info.Subresources, resources.SubresourceInfo{
			Name: "status", Verbs: []string{"get", "patch", "update"}, Served: true,
		})
	}
	if subresources != nil && subresources.Scale != nil {
		info.Subresources = append(info.Subresources, resources.SubresourceInfo{
			Name: "scale", Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: []string{"get", "patch", "update"}, Served: true,
		})
		hooks.Scale = scaleHooks(subresources.Scale, replicasPaths(crd))
	}
	info.OpenAPIV3Document = func() (*spec3.OpenAPI, error) {
		return builder.BuildOpenAPIV3(crd, v.Name, builder.Options{IncludeSelectableFields: true})
	}
	info.OpenAPIV2Document = func() (*spec.Swagger, error) {
		return builder.BuildOpenAPIV2(crd, v.Name, builder.Options{V2: true, IncludeSelectableFields: true})
	}
	info.PreserveUnknownFields = crd.Spec.PreserveUnknownFields
	if v.Deprecated {
		info.Deprecated = true
		info.Warnings = []string{deprecationWarning(crd, v)}
	}
	for _, c := range columnsFor(crd, v) {
		info.PrinterColumns = append(info.PrinterColumns, resources.PrinterColumn{
			Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority, JSONPath: c.JSONPath,
		})
	}
	return info, hooks, nil
}

// deprecationWarning is the warning of a deprecated version: the CRD's
// own, else kube-apiserver's default naming the newest served version
// that is not deprecated.
func deprecationWarning(crd *apiextensionsv1.CustomResourceDefinition, deprecated apiextensionsv1.CustomResourceDefinitionVersion) string {
	if deprecated.DeprecationWarning != nil {
		return *deprecated.DeprecationWarning
	}
	msg := fmt.Sprintf("%s/%s %s is deprecated", crd.Spec.Group, deprecated.Name, crd.Spec.Names.Kind)
	newest := ""
	for _, v := range crd.Spec.Versions {
		if v.Served && !v.Deprecated && version.CompareKubeAwareVersionStrings(deprecated.Name, v.Name) < 0 &&
			(newest == "" || version.CompareKubeAwareVersionStrings(v.Name, newest) > 0) {
			newest = v.Name
		}
	}
	if newest != "" {
		msg += fmt.Sprintf("; use %s/%s %s", crd.Spec.Group, newest, crd.Spec.Names.Kind)
	}
	return msg
}

// fieldManagerTypes are the types and conversion of crd's field managers
// (resources.Info.FieldTypes), made at the first write: as kube-apiserver
// makes them, every version's schema, served or not, and the CRD's
// conversion, so that a managedFields entry of an earlier version is read
// in that version's schema. An applier whose entry is of a version without
// a field the object has since been defaulted with gets kube's "field not
// declared in schema", which tools such as Flux look for to migrate their
// entries. A version whose definitions cannot be built leaves the types to
// be deduced from the objects, as in kube-apiserver.
func fieldManagerTypes(crd *apiextensionsv1.CustomResourceDefinition, openAPI map[string]lazySchemas, convertor runtime.ObjectConvertor) func() (managedfields.TypeConverter, runtime.ObjectConvertor, error) {
	types := sync.OnceValues(func() (managedfields.TypeConverter, error) {
		models := map[string]*spec.Schema{}
		for _, v := range crd.Spec.Versions {
			v3, _, err := openAPI[v.Name]()
			if err != nil {
				// Logged by lazyOpenAPISchemas; as kube-apiserver, the
				// types are then deduced from the objects.
				return managedfields.NewDeducedTypeConverter(), nil
			}
			gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Status.AcceptedNames.Kind}
			maps.Copy(models, openapi.DefinitionsFor(openapi.CustomDefinitionName(gvk), v3))
		}
		return managedfields.NewTypeConverter(models, crd.Spec.PreserveUnknownFields)
	})
	return func() (managedfields.TypeConverter, runtime.ObjectConvertor, error) {
		t, err := types()
		return t, convertor, err
	}
}

// lazySchemas gives a version's OpenAPI v3 and v2 definitions, made once.
type lazySchemas = func() (v3, v2 *spec.Schema, err error)

// lazyOpenAPISchemas makes a version's OpenAPI definitions when first
// asked for: kube's builder takes some 10 ms of CPU for the two of a CRD
// with a schema of some size, the largest part of serving a new CRD, and
// most CRDs a test or a cluster installs see few requests. kube-apiserver
// also builds a CRD's serving schema at its first request. crd is read
// only (an informer's object). A build that fails is logged once; the
// kind's writes fail with its error, and the documents show the kind as
// an object of any shape.
func lazyOpenAPISchemas(crd *apiextensionsv1.CustomResourceDefinition, version string, logger *slog.Logger) func() (v3, v2 *spec.Schema, err error) {
	var once sync.Once
	var v3, v2 *spec.Schema
	var err error
	return func() (*spec.Schema, *spec.Schema, error) {
		once.Do(func() {
			if v3, v2, err = openAPISchemas(crd, version); err != nil {
				logger.Error("building a custom resource's OpenAPI definitions failed", "crd", crd.Name, "version", version, "err", err)
			}
		})
		return v3, v2, err
	}
}

// openAPISchemas are the OpenAPI v3 and v2 definitions of a version's
// kind, as apiextensions' OpenAPI builder makes them for kube-apiserver's
// published documents.
func openAPISchemas(crd *apiextensionsv1.CustomResourceDefinition, version string) (v3, v2 *spec.Schema, err error) {
	name := openapi.CustomDefinitionName(schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Status.AcceptedNames.Kind})
	opts := builder.Options{IncludeSelectableFields: true}
	doc3, err := builder.BuildOpenAPIV3(crd, version, opts)
	if err != nil {
		return nil, nil, err
	}
	opts.V2 = true
	doc2, err := builder.BuildOpenAPIV2(crd, version, opts)
	if err != nil {
		return nil, nil, err
	}
	if doc3.Components == nil || doc3.Components.Schemas[name] == nil {
		return nil, nil, fmt.Errorf("no OpenAPI definition %s", name)
	}
	v2def, ok := doc2.Definitions[name]
	if !ok {
		return nil, nil, fmt.Errorf("no OpenAPI v2 definition %s", name)
	}
	return doc3.Components.Schemas[name], &v2def, nil
}

// columnsFor are a version's printer columns; a version without any gets
// kube-apiserver's default Age column.
func columnsFor(crd *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion) []apiextensionsv1.CustomResourceColumnDefinition {
	if len(v.AdditionalPrinterColumns) > 0 {
		return v.AdditionalPrinterColumns
	}
	return []apiextensionsv1.CustomResourceColumnDefinition{{
		Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp",
		Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"],
	}}
}

// unstructuredTyper types unstructured objects by their own apiVersion
// and kind, as kube's strategies of custom resources expect.
type unstructuredTyper struct{}

func (unstructuredTyper) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	return []schema.GroupVersionKind{obj.GetObjectKind().GroupVersionKind()}, false, nil
}

func (unstructuredTyper) Recognizes(schema.GroupVersionKind) bool { return true }
