// Package openapi describes kapi's API the way kube-apiserver does: the
// schema definitions of every built-in kind, built by reflection over the Go
// types (json tags, SwaggerDoc descriptions, patch tags), with the facts
// only kube's comment markers carry added from tables (kube.go, checked
// against kube's own apply schema and the API sources, and the generated
// zz_generated.enums.go); and the /openapi/v2 and /openapi/v3 documents that
// put them together with the paths of the served resources.
package openapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strings"
	"sync"

	apiextensionsopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	aggregatoropenapi "k8s.io/kube-aggregator/pkg/generated/openapi"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/resources"
)

// Extension names kube-apiserver's definitions carry.
const (
	extGVK              = "x-kubernetes-group-version-kind"
	extPatchStrategy    = "x-kubernetes-patch-strategy"
	extPatchMergeKey    = "x-kubernetes-patch-merge-key"
	extListType         = "x-kubernetes-list-type"
	extListMapKeys      = "x-kubernetes-list-map-keys"
	extMapType          = "x-kubernetes-map-type"
	extUnions           = "x-kubernetes-unions"
	extPreserve         = "x-kubernetes-preserve-unknown-fields"
	extSelectableFields = "x-kubernetes-selectable-fields"
	extAction           = "x-kubernetes-action"
)

// Interfaces the generated code of k8s.io/api and k8s.io/apimachinery gives
// their types.
type (
	modelNamer      interface{ OpenAPIModelName() string }
	swaggerDocer    interface{ SwaggerDoc() map[string]string }
	schemaTyper     interface{ OpenAPISchemaType() []string }
	schemaFormatter interface{ OpenAPISchemaFormat() string }
	v3OneOfTyper    interface{ OpenAPIV3OneOfTypes() []string }
)

var (
	modelNamerType   = reflect.TypeFor[modelNamer]()
	swaggerDocType   = reflect.TypeFor[swaggerDocer]()
	schemaTyperType  = reflect.TypeFor[schemaTyper]()
	formatterType    = reflect.TypeFor[schemaFormatter]()
	v3OneOfTyperType = reflect.TypeFor[v3OneOfTyper]()
	unmarshalerType  = reflect.TypeFor[json.Unmarshaler]()
)

// defSet is the computed set of definitions: the OpenAPI v2 forms, plus the
// v3 forms of the few types whose v3 schema differs (int-or-string and
// quantity, which are oneOf in v3).
type defSet struct {
	v2 map[string]*spec.Schema
	v3 map[string]*spec.Schema
	// byGVK names the definition of each kind of the built-in scheme.
	byGVK map[schema.GroupVersionKind]string
	// types are the Go types of the definitions built by reflection.
	types map[string]reflect.Type
	names map[reflect.Type]string
	// own are the set's schemas, v2 and v3 (the built-in set only).
	own map[*spec.Schema]bool
}

// holds reports whether s is one of d's own schemas (the same one, not an
// equal one).
func (d *defSet) holds(s *spec.Schema) bool { return d.own[s] }

// forRegistry returns the definitions for the documents of reg: the
// built-in ones, plus those of the kinds of reg kapi has no Go type for.
func (d *defSet) forRegistry(reg *resources.Registry) *defSet {
	missing := false
	for _, g := range reg.Groups() {
		for _, v := range g.Versions {
			for _, info := range v.Resources {
				_, known := d.byGVK[info.GroupVersionKind()]
				missing = missing || !known
			}
		}
	}
	if !missing {
		return d
	}
	// Copies of the maps: the built-in set is shared.
	v3 := make(map[string]*spec.Schema, len(d.v3))
	for name, s := range d.v3 {
		v3[name] = s
	}
	b := &builder{defs: map[string]*spec.Schema{}, v3: v3, byGVK: map[schema.GroupVersionKind]string{}, gvks: map[reflect.Type][]schema.GroupVersionKind{}, names: map[reflect.Type]string{}}
	for name, s := range d.v2 {
		b.defs[name] = s
	}
	for gvk, name := range d.byGVK {
		b.byGVK[gvk] = name
	}
	for t, name := range d.names {
		b.names[t] = name
	}
	b.addUntyped(reg)
	return &defSet{v2: b.defs, v3: b.v3, byGVK: b.byGVK, types: d.types, names: b.names}
}

var builtin = sync.OnceValue(func() *defSet {
	reg := resources.NewBuiltin()
	b := newBuilder(codecs.Scheme)
	for _, gvk := range rootKinds(reg) {
		if t, ok := codecs.Scheme.AllKnownTypes()[gvk]; ok {
			b.ref(t)
		}
	}
	// The body of every PATCH, which is no kind.
	b.ref(reflect.TypeFor[metav1.Patch]())
	// The answer of /version, which is no kind either.
	b.ref(reflect.TypeFor[version.Info]())
	b.addUntyped(reg)
	types := map[string]reflect.Type{}
	for t, name := range b.names {
		types[name] = t
	}
	own := map[*spec.Schema]bool{}
	for _, defs := range []map[string]*spec.Schema{b.defs, b.v3} {
		for _, s := range defs {
			own[s] = true
		}
	}
	return &defSet{v2: b.defs, v3: b.v3, byGVK: b.byGVK, types: types, names: b.names, own: own}
})

// versionInfoDefinition is the definition of what /version answers.
const versionInfoDefinition = "io.k8s.apimachinery.pkg.version.Info"

// Definitions returns the schema definitions (OpenAPI v2 style) of every
// built-in kind kapi serves and every type they reference, keyed by
// kube-apiserver's definition names such as "io.k8s.api.core.v1.Pod". The
// map is computed once and shared: callers must not modify it.
func Definitions() map[string]*spec.Schema { return builtin().v2 }

// TypeConverterDefinitions are the definitions kube-apiserver builds the
// type converter of its field managers from: their OpenAPI v3 forms (an
// int-or-string or a quantity is one of its JSON types, not a string).
// Computed once and shared: callers must not modify it.
var TypeConverterDefinitions = sync.OnceValue(func() map[string]*spec.Schema {
	d := builtin()
	defs := maps.Clone(d.v2)
	maps.Copy(defs, d.v3)
	return defs
})

// DefinitionsFor returns s under name together with the built-in
// definitions it refers to, directly or through others.
func DefinitionsFor(name string, s *spec.Schema) map[string]*spec.Schema {
	defs := builtin().v2
	lookup := func(n string) *spec.Schema {
		if n == name {
			return s
		}
		return defs[n]
	}
	out := map[string]*spec.Schema{}
	for _, n := range closureOf(lookup, []string{name}) {
		out[n] = lookup(n)
	}
	return out
}

// DefinitionName is the definition name of the Go type of a built-in kind,
// or "" when kapi has no schema for the kind.
func DefinitionName(gvk schema.GroupVersionKind) string {
	if name, ok := builtin().byGVK[gvk]; ok {
		return name
	}
	if t, ok := codecs.Scheme.AllKnownTypes()[gvk]; ok {
		return typeName(t)
	}
	return ""
}

// rootKinds lists the kinds whose definitions the documents of reg refer to:
// each resource's kind and list kind, the kinds of its served
// sub-resources, and the meta kinds every path uses.
func rootKinds(reg *resources.Registry) []schema.GroupVersionKind {
	meta := schema.GroupVersion{Group: "meta.k8s.io", Version: "v1"}
	out := []schema.GroupVersionKind{
		{Version: "v1", Kind: "Status"},
		{Version: "v1", Kind: "APIVersions"},
		{Version: "v1", Kind: "APIGroupList"},
		{Version: "v1", Kind: "APIGroup"},
		{Version: "v1", Kind: "APIResourceList"},
		meta.WithKind("DeleteOptions"),
		meta.WithKind("WatchEvent"),
	}
	for _, g := range reg.Groups() {
		for _, v := range g.Versions {
			for _, info := range v.Resources {
				gvk := info.GroupVersionKind()
				out = append(out, gvk)
				if contains(info.Verbs, "list") {
					out = append(out, info.ListGroupVersionKind())
				}
				for _, sub := range info.Subresources {
					if sub.Served {
						out = append(out, subresourceGVK(info, &sub))
					}
				}
			}
		}
	}
	return out
}

// subresourceGVK is the kind a sub-resource exchanges.
func subresourceGVK(info *resources.Info, sub *resources.SubresourceInfo) schema.GroupVersionKind {
	gvk := info.GroupVersionKind()
	if sub.Kind != "" {
		gvk.Kind = sub.Kind
	}
	if sub.Version != "" {
		gvk.Group, gvk.Version = sub.Group, sub.Version
	}
	return gvk
}

// builder turns Go types into definitions, each once.
type builder struct {
	// kube are the definitions kube's generated code publishes, by name:
	// those of apiextensions-apiserver and kube-aggregator, with the
	// apimachinery and autoscaling/v1 types they use. A type defined
	// there is defined so, each built afresh for this builder.
	kube  map[string]common.OpenAPIDefinition
	defs  map[string]*spec.Schema
	v3    map[string]*spec.Schema
	byGVK map[schema.GroupVersionKind]string
	// gvks lists the kinds the scheme registers each type under, sorted as
	// kube-apiserver's definition namer sorts them.
	gvks  map[reflect.Type][]schema.GroupVersionKind
	names map[reflect.Type]string
}

func newBuilder(scheme *runtime.Scheme) *builder {
	b := &builder{
		kube:  kubeDefinitions(),
		defs:  map[string]*spec.Schema{},
		v3:    map[string]*spec.Schema{},
		byGVK: map[schema.GroupVersionKind]string{},
		gvks:  map[reflect.Type][]schema.GroupVersionKind{},
		names: map[reflect.Type]string{},
	}
	for gvk, t := range scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		b.gvks[t] = append(b.gvks[t], gvk)
	}
	for _, list := range b.gvks {
		sort.Slice(list, func(i, j int) bool {
			a, c := list[i], list[j]
			if a.Group != c.Group {
				return a.Group < c.Group
			}
			if a.Version != c.Version {
				return a.Version < c.Version
			}
			return a.Kind < c.Kind
		})
	}
	return b
}

// kubeDefinitions are the definitions the generated OpenAPI code of
// apiextensions-apiserver and kube-aggregator gives, by name, their
// references made as kapi's are.
func kubeDefinitions() map[string]common.OpenAPIDefinition {
	ref := func(name string) spec.Ref { return spec.MustCreateRef("#/definitions/" + name) }
	defs := apiextensionsopenapi.GetOpenAPIDefinitions(ref)
	maps.Copy(defs, aggregatoropenapi.GetOpenAPIDefinitions(ref))
	return defs
}

// typeName is kube-apiserver's definition name of a named Go type: the
// OpenAPIModelName the generated code gives it, else the reversed domain of
// its package path followed by the path and the type name.
func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(modelNamerType) {
		return reflect.Zero(t).Interface().(modelNamer).OpenAPIModelName()
	}
	if reflect.PointerTo(t).Implements(modelNamerType) {
		return reflect.New(t).Interface().(modelNamer).OpenAPIModelName()
	}
	parts := strings.Split(t.PkgPath(), "/")
	domain := strings.Split(parts[0], ".")
	for i, j := 0, len(domain)-1; i < j; i, j = i+1, j-1 {
		domain[i], domain[j] = domain[j], domain[i]
	}
	parts[0] = strings.Join(domain, ".")
	return strings.Join(append(parts, t.Name()), ".")
}

// ref defines t (a struct type, or a pointer to one) if it is not yet
// defined and returns its definition name.
func (b *builder) ref(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if name, ok := b.names[t]; ok {
		return name
	}
	name := typeName(t)
	b.names[t] = name
	s := &spec.Schema{}
	b.defs[name] = s // before the fields, for recursive types
	*s = b.define(t, name)
	for _, gvk := range b.gvks[t] {
		if _, taken := b.byGVK[gvk]; !taken {
			b.byGVK[gvk] = name
		}
	}
	return name
}

// docs is a type's generated SwaggerDoc, or nil.
func docs(t reflect.Type) map[string]string {
	if t.Implements(swaggerDocType) {
		return reflect.Zero(t).Interface().(swaggerDocer).SwaggerDoc()
	}
	return nil
}

// define builds the definition of struct type t.
func (b *builder) define(t reflect.Type, name string) spec.Schema {
	kube, published := b.kube[name]
	description := docs(t)[""]
	if d, ok := typeDescriptions[name]; ok {
		description = d
	}
	if published {
		description = kube.Schema.Description
	}
	var s spec.Schema
	s.Description = description
	if typer, ok := valueAs[schemaTyper](t, schemaTyperType); ok {
		// Types that marshal themselves as a JSON scalar (times, quantities,
		// int-or-string) describe their JSON form.
		s.Type = typer.OpenAPISchemaType()
		if f, ok := valueAs[schemaFormatter](t, formatterType); ok {
			s.Format = f.OpenAPISchemaFormat()
		}
		if oneOf, ok := valueAs[v3OneOfTyper](t, v3OneOfTyperType); ok {
			v3 := spec.Schema{}
			v3.Description, v3.Format = s.Description, s.Format
			for _, typ := range oneOf.OpenAPIV3OneOfTypes() {
				v3.OneOf = append(v3.OneOf, spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{typ}}})
			}
			b.v3[name] = &v3
		}
		return s
	}
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("openapi: %v is not a struct", t))
	}
	s.Type = []string{"object"}
	b.addMembers(&s, t) // defines the types t refers to, too
	if published {
		// kube's own definition, all its markers read.
		s = kube.Schema
	}
	if kinds := b.gvks[t]; len(kinds) > 0 {
		list := make([]interface{}, len(kinds))
		for i, gvk := range kinds {
			list[i] = gvkExtension(gvk)
		}
		s.AddExtension(extGVK, list)
	}
	if mt, ok := structTypes[name]; ok {
		s.AddExtension(extMapType, mt)
	}
	if u, ok := unions[name]; ok {
		s.AddExtension(extUnions, u)
	}
	return s
}

// valueAs returns the zero value of t (or of *t) as an I, when either
// implements it.
func valueAs[I any](t, iface reflect.Type) (I, bool) {
	if t.Implements(iface) {
		return reflect.Zero(t).Interface().(I), true
	}
	if reflect.PointerTo(t).Implements(iface) {
		return reflect.New(t).Interface().(I), true
	}
	var zero I
	return zero, false
}

// jsonTag splits a struct field's json tag into its name and options.
func jsonTag(f reflect.StructField) (name string, opts []string, tagged bool) {
	tag, tagged := f.Tag.Lookup("json")
	parts := strings.Split(tag, ",")
	return parts[0], parts[1:], tagged
}

func hasOpt(opts []string, opt string) bool {
	for _, o := range opts {
		if o == opt {
			return true
		}
	}
	return false
}

// addMembers adds the properties (and required names) of struct type t to
// s: fields by their json names, embedded structs inlined, in field order.
func (b *builder) addMembers(s *spec.Schema, t reflect.Type) {
	doc := docs(t)
	// The marker tables name fields by the type that declares them.
	owner := typeName(t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, tagged := jsonTag(f)
		if name == "-" && len(opts) == 0 {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				b.addMembers(s, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			if tagged {
				continue
			}
			name = f.Name
		}
		if s.Properties == nil {
			s.Properties = map[string]spec.Schema{}
		}
		description := doc[name]
		s.Properties[name] = b.property(f, name, opts, description, owner)
		optional := hasOpt(opts, "omitempty") || hasOpt(opts, "omitzero")
		if req, ok := requiredOverrides[owner+"."+name]; ok {
			optional = !req
		}
		if !optional {
			s.Required = append(s.Required, name)
		}
	}
}

// property builds the schema of one field.
func (b *builder) property(f reflect.StructField, name string, opts []string, description, owner string) spec.Schema {
	key := owner + "." + name
	var p spec.Schema
	if hasOpt(opts, "string") {
		p.Type = []string{"string"}
		p.Description = description
		return p
	}
	p = b.valueSchema(f.Type)
	p.Description = description
	if e, ok := enumOf(f.Type); ok {
		// Kube's generator appends the values of an enum, one a line, to
		// the description of a field of its type.
		if p.Description != "" {
			p.Description += "\n\n" + strings.Repeat("\n", enumParagraphBreaks[key])
		}
		p.Description += e.doc
	}
	if def, ok := markerDefaults[key]; ok {
		p.Default = def
	} else if def := enforcedDefault(f.Type, hasOpt(opts, "omitempty")); def != nil {
		p.Default = def
	}

	strategy := f.Tag.Get("patchStrategy")
	mergeKey := f.Tag.Get("patchMergeKey")
	if strategy != "" {
		p.AddExtension(extPatchStrategy, strategy)
	}
	if mergeKey != "" {
		p.AddExtension(extPatchMergeKey, mergeKey)
	}
	// A list kind's items carry no list type (kube's List types have no
	// marker there; unmarked, a list is atomic all the same).
	if p.Type.Contains("array") && !(name == "items" && strings.HasSuffix(owner, "List")) {
		lt := listSemantics(strategy, mergeKey)
		if o, ok := listTypes[key]; ok {
			lt = o
		}
		p.AddExtension(extListType, lt.Type)
		if lt.Type == "map" {
			keys := make([]interface{}, len(lt.Keys))
			for i, k := range lt.Keys {
				keys[i] = k
			}
			p.AddExtension(extListMapKeys, keys)
		}
	}
	if mt, ok := mapTypes[key]; ok {
		p.AddExtension(extMapType, mt)
	}
	return p
}

// enumType is what kube's generator knows of a +enum string type.
type enumType struct {
	values []string // sorted
	doc    string   // "Possible enum values:\n - ..."
}

// enumOf is the enum type t (or *t) is, if any.
func enumOf(t reflect.Type) (enumType, bool) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.String {
		return enumType{}, false
	}
	e, ok := enums[t.PkgPath()+"."+t.Name()]
	return e, ok
}

// listType is the server-side apply semantics of a list.
type listType struct {
	Type string   // atomic, set or map
	Keys []string // for map
}

// listSemantics is what a list's patch strategy implies: a list merged by a
// key is a map keyed by it, a merged list of scalars is a set, and any
// other list is replaced as a whole.
func listSemantics(strategy, mergeKey string) listType {
	merge := false
	for _, s := range strings.Split(strategy, ",") {
		merge = merge || s == "merge"
	}
	switch {
	case merge && mergeKey != "":
		return listType{Type: "map", Keys: []string{mergeKey}}
	case merge:
		return listType{Type: "set"}
	}
	return listType{Type: "atomic"}
}

// valueSchema is the schema of a value of type t: a reference for structs,
// a type and format for scalars, and arrays and objects for slices and maps.
func (b *builder) valueSchema(t reflect.Type) spec.Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var s spec.Schema
	simple := func(typ, format string) spec.Schema {
		s.Type, s.Format = []string{typ}, format
		return s
	}
	switch t.Kind() {
	case reflect.Struct:
		s.Ref = spec.MustCreateRef("#/definitions/" + b.ref(t))
		return s
	case reflect.String:
		if e, ok := enumOf(t); ok {
			for _, v := range e.values {
				s.Enum = append(s.Enum, v)
			}
		}
		return simple("string", "")
	case reflect.Bool:
		return simple("boolean", "")
	case reflect.Int, reflect.Int16, reflect.Int32, reflect.Uint, reflect.Uint16:
		return simple("integer", "int32")
	case reflect.Int8, reflect.Uint8:
		return simple("integer", "byte")
	case reflect.Int64, reflect.Uint32, reflect.Uint64:
		return simple("integer", "int64")
	case reflect.Float32:
		return simple("number", "float")
	case reflect.Float64:
		return simple("number", "double")
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return simple("string", "byte") // base64
		}
		items := b.valueSchema(t.Elem())
		s.Type = []string{"array"}
		s.Items = &spec.SchemaOrArray{Schema: &items}
		return s
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			panic(fmt.Sprintf("openapi: map key of %v is not a string", t))
		}
		value := b.valueSchema(t.Elem())
		s.Type = []string{"object"}
		s.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: &value}
		return s
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return simple("object", "")
		}
		return s
	}
	panic(fmt.Sprintf("openapi: cannot describe %v", t))
}

// enforcedDefault is the default kube's generator gives a field whose JSON
// form always carries a value: {} for a struct value (unless it decodes
// itself, as times and quantities do), the zero value for a scalar without
// omitempty, and nothing for pointers, slices and maps.
func enforcedDefault(t reflect.Type, omitEmpty bool) interface{} {
	if t.Kind() == reflect.Struct && reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Array, reflect.Interface:
		return nil
	case reflect.Struct:
		if t.NumField() == 1 && t.Field(0).Anonymous {
			return enforcedDefault(t.Field(0).Type, omitEmpty)
		}
		return map[string]interface{}{}
	}
	if omitEmpty {
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		return ""
	case reflect.Bool:
		return false
	default:
		return 0
	}
}

// CustomDefinitionName is the definition name of a kind without a Go type (a
// custom resource): the reversed group, version and kind, as
// kube-apiserver names custom resources.
func CustomDefinitionName(gvk schema.GroupVersionKind) string {
	labels := strings.Split(gvk.Group, ".")
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	return strings.Join(labels, ".") + "." + gvk.Version + "." + gvk.Kind
}

// addUntyped defines the kinds of reg the scheme has no Go type for (custom
// resources): objects with the type
// and object metadata of every kind, whose other fields are kept as sent,
// and their lists.
func (b *builder) addUntyped(reg *resources.Registry) {
	typeMeta := reflect.TypeFor[metav1.TypeMeta]()
	for _, g := range reg.Groups() {
		for _, v := range g.Versions {
			for _, info := range v.Resources {
				gvk := info.GroupVersionKind()
				if _, typed := codecs.Scheme.AllKnownTypes()[gvk]; typed {
					continue
				}
				name := CustomDefinitionName(gvk)
				if _, done := b.defs[name]; done {
					continue
				}
				listGVK := info.ListGroupVersionKind()
				listName := CustomDefinitionName(listGVK)
				// A kind whose definitions cannot be made is published as
				// an object of any shape; its writes fail on the error.
				v3, v2, _ := info.Schemas()
				b.defs[name] = b.untypedObject(info, name, v2)
				if v3 != nil {
					b.v3[name] = v3
				}
				b.byGVK[gvk] = name

				list := &spec.Schema{}
				list.Description = listGVK.Kind + " is a list of " + gvk.Kind
				if d, ok := typeDescriptions[listName]; ok {
					list.Description = d
				}
				list.Type = []string{"object"}
				b.addMembers(list, typeMeta)
				item := refSchema(name, "")
				list.Properties["items"] = spec.Schema{SchemaProps: spec.SchemaProps{
					Description: "List of " + info.Resource + ". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
					Type:        []string{"array"},
					Items:       &spec.SchemaOrArray{Schema: &item},
				}}
				list.Properties["metadata"] = refSchema(b.ref(reflect.TypeFor[metav1.ListMeta]()),
					"Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds")
				list.Required = []string{"items"}
				list.AddExtension(extGVK, []interface{}{gvkExtension(listGVK)})
				if v2 != nil {
					// As apiextensions' builder, the list names the fields
					// a selector may use too.
					if fields, ok := v2.Extensions[extSelectableFields]; ok {
						list.AddExtension(extSelectableFields, fields)
					}
				}
				b.defs[listName] = list
				b.byGVK[listGVK] = listName
			}
		}
	}
}

// untypedObject is the definition of a kind without a Go type: its
// schema when it has one, else any object with the type and object
// metadata of every kind.
func (b *builder) untypedObject(info *resources.Info, name string, schema *spec.Schema) *spec.Schema {
	if schema != nil {
		return schema
	}
	obj := &spec.Schema{}
	obj.Description = typeDescriptions[name]
	obj.Type = []string{"object"}
	b.addMembers(obj, reflect.TypeFor[metav1.TypeMeta]())
	obj.Properties["metadata"] = refSchema(b.ref(reflect.TypeFor[metav1.ObjectMeta]()),
		"Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")
	obj.AddExtension(extPreserve, true)
	obj.AddExtension(extGVK, []interface{}{gvkExtension(info.GroupVersionKind())})
	return obj
}

// refSchema is a reference to a definition, with a description.
func refSchema(name, description string) spec.Schema {
	var s spec.Schema
	s.Ref = spec.MustCreateRef("#/definitions/" + name)
	s.Description = description
	return s
}

func gvkExtension(gvk schema.GroupVersionKind) map[string]interface{} {
	return map[string]interface{}{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}
}
