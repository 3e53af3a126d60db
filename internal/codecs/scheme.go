// Package codecs turns objects into bytes and back for each media type kapi
// serves, and negotiates which one a request gets. It never touches storage.
package codecs

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// Scheme knows the Go type of every built-in kind kapi serves. Kinds it does
// not know (custom resources) are unstructured.
var Scheme = runtime.NewScheme()

// Factory holds the serializers for every media type over Scheme.
var Factory serializer.CodecFactory

func init() {
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme,
		autoscalingv1.AddToScheme, autoscalingv2.AddToScheme, policyv1.AddToScheme,
		rbacv1.AddToScheme, coordinationv1.AddToScheme, eventsv1.AddToScheme,
		networkingv1.AddToScheme, storagev1.AddToScheme, schedulingv1.AddToScheme,
		discoveryv1.AddToScheme, nodev1.AddToScheme, certificatesv1.AddToScheme,
		admissionregistrationv1.AddToScheme, flowcontrolv1.AddToScheme,
		resourcev1.AddToScheme, storagemigrationv1.AddToScheme,
		apiextensionsv1.AddToScheme, apiregistrationv1.AddToScheme,
		authenticationv1.AddToScheme, authorizationv1.AddToScheme,
	} {
		utilruntime.Must(add(Scheme))
	}
	utilruntime.Must(addEvictionV1beta1(Scheme))
	// Status, the option types and WatchEvent are understood in every version.
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	metav1.AddToGroupVersion(Scheme, metav1.SchemeGroupVersion)
	// Table and PartialObjectMetadata, in both versions clients ask for.
	utilruntime.Must(metav1.AddMetaToScheme(Scheme))
	utilruntime.Must(metav1beta1.AddMetaToScheme(Scheme))
	Factory = serializer.NewCodecFactory(Scheme, serializer.WithSerializer(cbor.NewSerializerInfo))
	TypedSerializers = typedSerializers(Factory.SupportedMediaTypes())
}

// MetaInternalFactory decodes the option types of any group or version
// (DeleteOptions in a delete's body) as kube-apiserver's meta codecs do
// with CBOR served (its CBORServingAndStorage gate): into
// meta.k8s.io/__internal, from JSON, YAML, protobuf or CBOR.
var MetaInternalFactory = serializer.NewCodecFactory(metainternalversionscheme.Scheme, serializer.WithSerializer(cbor.NewSerializerInfo))

// MetaProtobuf serves resources without protobuf (custom resources) as
// kube-apiserver's handler of custom resources serves them in protobuf:
// the meta.k8s.io kinds a client may ask for instead of the objects
// (PartialObjectMetadata and its list, as metadata informers ask) only.
// Listed among their media types, it never encodes an object itself nor
// decodes a request body (see conversionOnly).
var MetaProtobuf = runtime.SerializerInfo{
	MediaType: runtime.ContentTypeProtobuf, MediaTypeType: "application", MediaTypeSubType: "vnd.kubernetes.protobuf",
	Serializer: protobuf.NewSerializer(Scheme, Scheme),
	StreamSerializer: &runtime.StreamSerializerInfo{
		Serializer: protobuf.NewRawSerializer(Scheme, Scheme),
		Framer:     protobuf.LengthDelimitedFramer,
	},
}

// conversionOnly tells whether info serves only conversions (MetaProtobuf).
func conversionOnly(info runtime.SerializerInfo) bool {
	return info.Serializer == MetaProtobuf.Serializer
}

// UnstructuredSerializers serve objects kapi has no Go type for: JSON and
// YAML only, as kube-apiserver serves custom resources.
var UnstructuredSerializers = func() []runtime.SerializerInfo {
	creater, typer := unstructuredscheme.NewUnstructuredCreator(), unstructuredscheme.NewUnstructuredObjectTyper()
	jsonSerializer := json.NewSerializerWithOptions(json.DefaultMetaFactory, creater, typer, json.SerializerOptions{})
	yamlSerializer := json.NewSerializerWithOptions(json.DefaultMetaFactory, creater, typer, json.SerializerOptions{Yaml: true})
	return []runtime.SerializerInfo{
		{MediaType: runtime.ContentTypeJSON, MediaTypeType: "application", MediaTypeSubType: "json", EncodesAsText: true,
			Serializer: jsonSerializer, StrictSerializer: jsonSerializer,
			StreamSerializer: &runtime.StreamSerializerInfo{EncodesAsText: true, Serializer: jsonSerializer, Framer: json.Framer}},
		{MediaType: runtime.ContentTypeYAML, MediaTypeType: "application", MediaTypeSubType: "yaml", EncodesAsText: true,
			Serializer: yamlSerializer, StrictSerializer: yamlSerializer},
		cbor.NewSerializerInfo(creater, typer),
	}
}()

// ParameterCodec decodes query parameters into option types.
var ParameterCodec = runtime.NewParameterCodec(Scheme)

// ProtobufRaw encodes built-in objects as bare protobuf messages, without
// the envelope: the form of items inside a protobuf list.
var ProtobufRaw = protobuf.NewRawSerializer(Scheme, Scheme)

// addEvictionV1beta1 teaches scheme the one kind of a version kapi does
// not serve that a request may still carry: kube-apiserver's pods/eviction
// takes a policy/v1beta1 Eviction (kubectl drain sent one until policy/v1
// came), the same fields as policy/v1's.
func addEvictionV1beta1(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(policyv1beta1.SchemeGroupVersion, &policyv1beta1.Eviction{})
	return scheme.AddConversionFunc((*policyv1beta1.Eviction)(nil), (*policyv1.Eviction)(nil), func(a, b any, _ conversion.Scope) error {
		in, out := a.(*policyv1beta1.Eviction), b.(*policyv1.Eviction)
		out.ObjectMeta, out.DeleteOptions = in.ObjectMeta, in.DeleteOptions
		return nil
	})
}
