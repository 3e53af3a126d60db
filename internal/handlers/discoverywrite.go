package handlers

import (
	"bytes"
	"crypto/sha512"
	"fmt"
	"net/http"
	"strconv"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/endpoints/discovery/aggregated"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/respond"
)

// discoveryMedia are the representations kube-apiserver serves discovery
// documents in: JSON, YAML and protobuf (not CBOR).
var discoveryMedia = func() []runtime.SerializerInfo {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	if err := apidiscoveryv2.AddToScheme(scheme); err != nil {
		panic(err) // generated registration
	}
	return serializer.NewCodecFactory(scheme).SupportedMediaTypes()
}()

// The media types of aggregated discovery's answers, by the media type
// asked for.
var aggregatedMediaTypes = map[string]string{
	runtime.ContentTypeJSON:     "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
	runtime.ContentTypeYAML:     "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
	runtime.ContentTypeProtobuf: "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
}

// WriteDiscovery writes a legacy discovery document (obj; data is its JSON
// when already encoded) in the representation r negotiates. routed says
// whether kube-apiserver serves it by its router, which refuses media
// types it does not produce with its own 406, or outside it (see
// document.routed).
func WriteDiscovery(w http.ResponseWriter, r *http.Request, obj runtime.Object, data []byte, routed bool) {
	if routed {
		if err := codecs.CheckRoute(r, discoveryMedia, nil); err != nil {
			respond.ErrorIn(w, r, err, discoveryMedia)
			return
		}
	}
	info, err := codecs.NegotiateOutput(r, discoveryMedia)
	if err != nil {
		respond.ErrorIn(w, r, err, discoveryMedia)
		return
	}
	data, err = encodeDiscovery(r, info, obj, data)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", info.MediaType)
	w.Write(data)
}

// encodeDiscovery encodes obj in info's representation, indented when r
// asks for it; json is obj's compact JSON when already encoded.
func encodeDiscovery(r *http.Request, info runtime.SerializerInfo, obj runtime.Object, json []byte) ([]byte, error) {
	pretty := info.PrettySerializer != nil && respond.Pretty(r)
	if json != nil && info.MediaType == runtime.ContentTypeJSON && !pretty {
		return json, nil
	}
	encoder := info.Serializer
	if pretty {
		encoder = info.PrettySerializer
	}
	var buf bytes.Buffer
	err := encoder.Encode(obj, &buf)
	return buf.Bytes(), err
}

// AcceptsAggregated reports whether r asks for aggregated discovery
// (apidiscovery.k8s.io/v2 APIGroupDiscoveryList), and in which
// representation, by kube-apiserver's own negotiation of it: the first
// Accept clause naming it wins wherever it comes, a plain clause never
// does.
func AcceptsAggregated(r *http.Request) (runtime.SerializerInfo, bool) {
	mediaType, ok := negotiation.NegotiateMediaTypeOptions(r.Header.Get("Accept"), discoveryMedia, aggregated.DiscoveryEndpointRestrictions)
	if !ok || !aggregated.IsAggregatedDiscoveryGVK(mediaType.Convert) {
		return runtime.SerializerInfo{}, false
	}
	return mediaType.Accepted, true
}

// AggregatedDocument is an aggregated discovery document, its JSON and its
// ETag: as kube-apiserver's, a client that names the ETag in
// If-None-Match gets 304, and the answer may be cached.
type AggregatedDocument struct {
	list *apidiscoveryv2.APIGroupDiscoveryList
	json []byte
	etag string
}

// NewAggregatedDocument encodes list and computes its ETag as
// kube-apiserver does (a SHA-512 of its JSON).
func NewAggregatedDocument(list *apidiscoveryv2.APIGroupDiscoveryList) *AggregatedDocument {
	data := mustJSON(list)
	// kube hashes the list it builds, which names no kind.
	unkinded := *list
	unkinded.TypeMeta = metav1.TypeMeta{}
	sum := sha512.Sum512(bytes.TrimSuffix(mustJSON(&unkinded), []byte("\n")))
	return &AggregatedDocument{list: list, json: data, etag: strconv.Quote(fmt.Sprintf("%X", sum))}
}

// Items are the document's groups.
func (d *AggregatedDocument) Items() []apidiscoveryv2.APIGroupDiscovery { return d.list.Items }

// Write answers r with the document in info's representation.
func (d *AggregatedDocument) Write(w http.ResponseWriter, r *http.Request, info runtime.SerializerInfo) {
	w.Header().Set("ETag", d.etag)
	w.Header().Set("Vary", "Accept")
	w.Header().Set("Cache-Control", "public")
	if r.Header.Get("If-None-Match") == d.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	data, err := encodeDiscovery(r, info, d.list, d.json)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", aggregatedMediaTypes[info.MediaType])
	w.Write(data)
}
