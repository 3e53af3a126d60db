// Package resources is the registry: it describes every resource kapi serves
// (names, kind, scope, verbs, sub-resources) and the strategy that prepares,
// defaults and validates its objects. It knows nothing about HTTP or storage.
package resources

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Info is what discovery reports about one resource, plus the few facts the
// generic handlers need to treat it the way kube-apiserver does.
type Info struct {
	Group    string
	Version  string
	Resource string // plural name used in URLs
	Singular string
	Kind     string
	// ListKind is the kind of its lists; empty means Kind + "List" (a
	// custom resource's spec.names.listKind may name another).
	ListKind   string
	Namespaced bool
	ShortNames []string
	Categories []string
	Verbs      []string
	// Terminating is set while the resource's CustomResourceDefinition is
	// being deleted: discovery then lists only the verbs that read and
	// delete (DiscoveryVerbs), as kube-apiserver's does.
	Terminating bool

	// Subresources lists the sub-resources kube-apiserver reports for the
	// resource. Only those with Served set are advertised and routed.
	Subresources []SubresourceInfo

	// Generation is true when kube-apiserver's strategy for the type sets
	// metadata.generation to 1 on create and increments it whenever anything
	// but metadata and status changes.
	Generation bool

	// ReturnsDeletedObject is true when a DELETE answers with the object
	// rather than a success Status; DeleteDocumentedAsStatus when
	// kube-apiserver's OpenAPI says it answers a Status all the same (its
	// storage of the type wraps the one that returns the object).
	ReturnsDeletedObject, DeleteDocumentedAsStatus bool

	// PrinterColumns, when set, are the Table columns (after Name) of a
	// resource defined by data, such as a custom resource's
	// additionalPrinterColumns.
	PrinterColumns []PrinterColumn
	// FieldLabelConversion, when set, is the field label conversion func
	// kube registers for the kind (scheme.ConvertFieldLabel); it takes the
	// place of this package's own table.
	FieldLabelConversion func(label, value string) (string, string, error)
	// ResetFields, when set, returns the fields a write of a sub-resource
	// ("" for the object itself) resets, which its writer does not own,
	// as the type's strategy says (ok false where it says nothing: the
	// status sub-resource owns status, the object the rest).
	ResetFields func(subresource string) (reset map[fieldpath.APIVersion]fieldpath.Filter, ok bool)
	// FieldAttrs, when set, are the fields a field selector matches on an
	// object besides its metadata (a custom resource's selectableFields);
	// it takes the place of this package's own table.
	FieldAttrs func(obj runtime.Object) fields.Set

	// ValidateName checks metadata.name; nil means a DNS subdomain.
	ValidateName func(name string, prefix bool) []string

	// OpenAPI, for a kind defined by data (a custom resource), gives the
	// OpenAPI v3 and v2 definitions of its objects, as kube-apiserver
	// publishes them; nil means objects of any shape. They are made when
	// first asked for (some 10 ms of CPU a version for a CRD of some
	// size), by the kind's first write or a document's first reader, not
	// when the kind comes to be served.
	OpenAPI func() (v3, v2 *spec.Schema, err error)
	// OpenAPIV3Document, for a custom resource, makes the OpenAPI v3
	// document of its version (paths and definitions) as apiextensions
	// builds it for kube-apiserver's /openapi/v3; a group-version's
	// document merges its resources'.
	OpenAPIV3Document func() (*spec3.OpenAPI, error)
	// OpenAPIV2Document is the same for /openapi/v2: the version's paths,
	// their shared parameters and definitions.
	OpenAPIV2Document func() (*spec.Swagger, error)
	// StorageVersionHash, reported by discovery, changes when the
	// version objects are stored in changes (set by the registry).
	StorageVersionHash string
	// Warnings are sent with every request to the version (a deprecated
	// custom resource version's deprecation warning).
	Warnings []string
	// Deprecated marks a version deprecated in this release, and
	// RemovedRelease names the release that removes it, if known.
	Deprecated     bool
	RemovedRelease string
	// PreserveUnknownFields is set when objects keep fields their schema
	// does not name (a CRD's spec.preserveUnknownFields).
	PreserveUnknownFields bool
	// FieldTypes, for a kind defined by data (a CRD's), are the types
	// its field managers read objects with, in each version the kind has
	// (served or not), and the conversion between those versions, so that
	// a managedFields entry of another version is read in that version's
	// schema, as kube-apiserver reads it; nil: the kind's own schema
	// (Schemas), in its one version.
	FieldTypes func() (managedfields.TypeConverter, runtime.ObjectConvertor, error)
}

// SubresourceInfo describes one sub-resource such as status or scale.
type SubresourceInfo struct {
	Name string
	// Group, Version and Kind of the object the sub-resource exchanges; empty
	// means the parent's kind (as for status).
	Group   string
	Version string
	Kind    string
	Verbs   []string
	Served  bool
	// Accepts are other group-versions whose bodies of Kind the
	// sub-resource takes too, converted to its own (as kube's pods/eviction
	// takes policy/v1beta1 Evictions).
	Accepts []schema.GroupVersion
	// KeepsSystemFields marks a sub-resource whose created body keeps the
	// metadata only the server sets (its uid and resourceVersion are
	// preconditions: pods/binding, serviceaccounts/token); every other
	// create clears them first, as kube-apiserver's create handler does.
	KeepsSystemFields bool
}

// DiscoveryVerbs are the verbs discovery lists for the resource.
func (i *Info) DiscoveryVerbs() []string {
	if i.Terminating {
		return []string{"delete", "deletecollection", "get", "list", "watch"}
	}
	return i.Verbs
}

// GroupVersionResource returns the resource's GVR.
func (i *Info) GroupVersionResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: i.Group, Version: i.Version, Resource: i.Resource}
}

// GroupResource names the resource across its versions; per-type
// behaviour is keyed by it, never by the plural alone.
func (i *Info) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: i.Group, Resource: i.Resource}
}

// GroupVersionKind returns the resource's GVK.
func (i *Info) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: i.Group, Version: i.Version, Kind: i.Kind}
}

// ListGroupVersionKind is the group, version and kind of its lists.
func (i *Info) ListGroupVersionKind() schema.GroupVersionKind {
	kind := i.ListKind
	if kind == "" {
		kind = i.Kind + "List"
	}
	return schema.GroupVersionKind{Group: i.Group, Version: i.Version, Kind: kind}
}

// Subresource returns the named served sub-resource, or nil.
func (i *Info) Subresource(name string) *SubresourceInfo {
	for k := range i.Subresources {
		if i.Subresources[k].Name == name && i.Subresources[k].Served {
			return &i.Subresources[k]
		}
	}
	return nil
}

// Schemas are the kind's OpenAPI v3 and v2 definitions (Info.OpenAPI),
// nil for objects of any shape.
func (i *Info) Schemas() (v3, v2 *spec.Schema, err error) {
	if i.OpenAPI == nil {
		return nil, nil, nil
	}
	return i.OpenAPI()
}

// PrinterColumn is one data-defined Table column.
type PrinterColumn struct {
	Name, Type, Format, Description string
	Priority                        int32
	JSONPath                        string
}
