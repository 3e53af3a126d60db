package crd

import (
	"fmt"
	"io"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/registry"
)

// versionSchema is one served version's structural schema at work, as
// kube-apiserver's custom resource codecs use it: request bodies and
// stored objects are defaulted, pruned of unknown fields, and their
// metadata coerced.
type versionSchema struct {
	gk         schema.GroupKind
	structural *structuralschema.Structural // nil: no schema, nothing pruned
	// preserveUnknownFields keeps unknown fields (a CRD that asks for it).
	preserveUnknownFields bool
	serializers           []runtime.SerializerInfo
}

var _ registry.Schema = (*versionSchema)(nil)

func newVersionSchema(gk schema.GroupKind, structural *structuralschema.Structural, preserveUnknownFields bool) *versionSchema {
	s := &versionSchema{gk: gk, structural: structural, preserveUnknownFields: preserveUnknownFields}
	creater, typer := unstructuredscheme.NewUnstructuredCreator(), unstructuredscheme.NewUnstructuredObjectTyper()
	serializer := func(opts json.SerializerOptions) runtime.Serializer {
		return json.NewSerializerWithOptions(json.DefaultMetaFactory, creater, typer, opts)
	}
	jsonStrict := serializer(json.SerializerOptions{Strict: true})
	yamlStrict := serializer(json.SerializerOptions{Yaml: true, Strict: true})
	jsonPlain := serializer(json.SerializerOptions{})
	cborInfo := cbor.NewSerializerInfo(creater, typer)
	s.serializers = []runtime.SerializerInfo{
		{
			MediaType: runtime.ContentTypeJSON, MediaTypeType: "application", MediaTypeSubType: "json", EncodesAsText: true,
			Serializer: s.decoder(jsonPlain, false), StrictSerializer: s.decoder(jsonStrict, true),
			StreamSerializer: &runtime.StreamSerializerInfo{EncodesAsText: true, Serializer: jsonPlain, Framer: json.Framer},
		},
		{
			MediaType: runtime.ContentTypeYAML, MediaTypeType: "application", MediaTypeSubType: "yaml", EncodesAsText: true,
			Serializer: s.decoder(serializer(json.SerializerOptions{Yaml: true}), false), StrictSerializer: s.decoder(yamlStrict, true),
		},
		codecs.MetaProtobuf,
		{
			MediaType: cborInfo.MediaType, MediaTypeType: cborInfo.MediaTypeType, MediaTypeSubType: cborInfo.MediaTypeSubType,
			Serializer: s.decoder(cborInfo.Serializer, false), StrictSerializer: s.decoder(cborInfo.StrictSerializer, true),
			StreamSerializer: cborInfo.StreamSerializer,
		},
	}
	return s
}

func (s *versionSchema) Serializers() []runtime.SerializerInfo { return s.serializers }

// FromStorage defaults, prunes and repairs an object read from storage, as
// kube-apiserver's storage codec for custom resources does: invalid
// metadata is dropped instead of refused, a missing generation becomes 1.
func (s *versionSchema) FromStorage(obj runtime.Object) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	if s.structural != nil {
		structuraldefaulting.Default(u.Object, s.structural)
	}
	s.StoredConverted(u)
}

// StoredConverted prunes and repairs an object read from storage in
// another version, as kube-apiserver's storage codec for custom resources
// does: invalid metadata is dropped instead of refused, a missing
// generation becomes 1; without this version's defaults.
func (s *versionSchema) StoredConverted(obj runtime.Object) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	if _, err := s.coerce(u, true, false); err == nil && u.GetGeneration() == 0 {
		u.SetGeneration(1)
	}
}

// Default sets the schema's defaults on obj.
func (s *versionSchema) Default(obj runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok && s.structural != nil {
		structuraldefaulting.Default(u.Object, s.structural)
	}
}

// Converted prunes an object converted to this version from another, as
// kube-apiserver's converter of custom resources does: without this
// version's defaults, and without the storage codec's repair of a missing
// generation (a new object converted for admission has none).
func (s *versionSchema) Converted(obj runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		s.coerce(u, true, false)
	}
}

// coerce prunes u and coerces its metadata, returning the paths of the
// unknown fields it dropped (when track is set).
func (s *versionSchema) coerce(u *unstructured.Unstructured, dropInvalidMetadata, track bool) ([]string, error) {
	kind, apiVersion := u.GetKind(), u.GetAPIVersion()
	meta, foundMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{
		DropMalformedFields: dropInvalidMetadata, ReturnUnknownFieldPaths: track,
	})
	if err != nil {
		return nil, err
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	if gv.Group == s.gk.Group && kind == s.gk.Kind && s.structural != nil {
		if !s.preserveUnknownFields {
			unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, s.structural, true,
				structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: track})...)
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, s.structural)
		}
		err, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, s.structural, false, schemaobjectmeta.CoerceOptions{
			DropInvalidFields: dropInvalidMetadata, ReturnUnknownFieldPaths: track,
		})
		if err != nil {
			return nil, err
		}
		unknown = append(unknown, paths...)
	}
	if kind != "" {
		u.SetKind(kind)
	}
	if apiVersion != "" {
		u.SetAPIVersion(apiVersion)
	}
	if foundMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, meta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

// decoder wraps a serializer of unstructured objects with the schema.
func (s *versionSchema) decoder(delegate runtime.Serializer, strict bool) runtime.Serializer {
	return &schemaDecoder{Serializer: delegate, schema: s, strict: strict}
}

// schemaDecoder decodes a request body as kube-apiserver decodes a custom
// resource: defaults, then prunes; with strict, the pruned fields (and
// any duplicate fields) come back as a strict decoding error alongside
// the object.
type schemaDecoder struct {
	runtime.Serializer
	schema *versionSchema
	strict bool
}

func (d *schemaDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := d.Serializer.Decode(data, defaults, into)
	var strictErrs []error
	if err != nil {
		strict, ok := runtime.AsStrictDecodingError(err)
		if !ok || obj == nil {
			return obj, gvk, err
		}
		strictErrs = strict.Errors()
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, gvk, err
	}
	if d.schema.structural != nil && u.GroupVersionKind().GroupKind() == d.schema.gk {
		structuraldefaulting.Default(u.Object, d.schema.structural)
	}
	unknown, err := d.schema.coerce(u, false, d.strict)
	if err != nil {
		return nil, gvk, err
	}
	for _, path := range unknown {
		strictErrs = append(strictErrs, fmt.Errorf("unknown field %q", path))
	}
	if len(strictErrs) > 0 {
		return u, gvk, runtime.NewStrictDecodingError(strictErrs)
	}
	return u, gvk, nil
}

func (d *schemaDecoder) Encode(obj runtime.Object, w io.Writer) error {
	return d.Serializer.Encode(obj, w)
}
