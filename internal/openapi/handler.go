package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	openapi_v3 "github.com/google/gnostic-models/openapiv3"
	"github.com/munnerz/goautoneg"
	"google.golang.org/protobuf/proto"
	crdopenapi "k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kapi-dev/kapi/internal/resources"
)

// Media types of the documents.
const (
	mediaJSON          = "application/json"
	mediaV2Protobuf    = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	mediaV2ProtobufOld = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	mediaV3Protobuf    = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"
	mediaV3ProtobufOld = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"
)

// document is one served document: its JSON, its protobuf form (made on
// first use) and the hash that names this version of it.
type document struct {
	json     []byte
	etag     string
	toProto  func([]byte) ([]byte, error)
	pbOnce   sync.Once
	pb       []byte
	pbErr    error
	modified time.Time
	// gz holds the gzipped forms, by media type.
	gz sync.Map
}

func newDocument(json []byte, toProto func([]byte) ([]byte, error)) *document {
	return &document{json: json, etag: fmt.Sprintf("%X", sha512.Sum512(json)), toProto: toProto, modified: time.Now()}
}

func (d *document) protobuf() ([]byte, error) {
	d.pbOnce.Do(func() { d.pb, d.pbErr = d.toProto(d.json) })
	return d.pb, d.pbErr
}

// gzipped is body, doc's form in contentType, compressed (once).
func (d *document) gzipped(contentType string, body []byte) []byte {
	if gz, ok := d.gz.Load(contentType); ok {
		return gz.([]byte)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression) // a valid level
	zw.Write(body)
	zw.Close()
	gz, _ := d.gz.LoadOrStore(contentType, buf.Bytes())
	return gz.([]byte)
}

func v2Proto(json []byte) ([]byte, error) {
	doc, err := openapi_v2.ParseDocument(json)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(doc)
}

func v3Proto(json []byte) ([]byte, error) {
	doc, err := openapi_v3.ParseDocument(json)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(doc)
}

// handler serves the documents of one registry, built on first request.
type handler struct {
	reg     *resources.Registry
	version string

	defsOnce sync.Once
	defs     *defSet

	v2Once sync.Once
	v2     *document

	v3Once sync.Once
	v3     map[string]*v3Document // "api/v1", "apis/apps/v1", "apis/apps", "api", "apis"
	// v3Inputs are the resources each group-version document is made
	// from; v3Laid says v3 and v3Inputs are complete.
	v3Inputs map[string][]*resources.Info
	v3Laid   atomic.Bool
	// previous is the handler of the registry before, whose documents of
	// the group-versions whose resources did not change are this one's
	// too; dropped once this one's are laid out.
	previous atomic.Pointer[handler]

	v3IndexOnce sync.Once
	v3Index     *document
}

// v3Document is one document of /openapi/v3, made when first asked for:
// the index names every document by its hash, so reading it makes them
// all, but the server's own reader (InProcessV3) asks only for those it
// needs.
type v3Document struct {
	layout uint64 // unique in the process, see InProcessV3
	once   sync.Once
	build  func() []byte
	doc    *document
}

func newV3Document(build func() []byte) *v3Document {
	return &v3Document{layout: layouts.Add(1), build: build}
}

func (d *v3Document) get() *document {
	d.once.Do(func() {
		d.doc = newDocument(d.build(), v3Proto)
		d.build = nil
	})
	return d.doc
}

// NewHandler serves /openapi/v2 (JSON, or protobuf when asked for) and
// /openapi/v3 (the index of group-version documents, and each document) for
// the resources of reg, the way kube-apiserver does, reporting version in
// info.version.
func NewHandler(reg *resources.Registry, version string) http.Handler {
	return &handler{reg: reg, version: version}
}

// NextHandler is NewHandler for the registry that follows the one
// previous (a NewHandler or NextHandler of the same version) serves: the
// group-version documents of resources that did not change are taken from
// previous instead of made again (a CRD added or changed remakes only its
// own group-version's).
func NextHandler(previous http.Handler, reg *resources.Registry, version string) http.Handler {
	h := &handler{reg: reg, version: version}
	if prev, ok := previous.(*handler); ok && prev.version == version {
		if !prev.v3Laid.Load() {
			prev = prev.previous.Load() // it laid out nothing to take: the one before it may have
		}
		h.previous.Store(prev)
	}
	return h
}

func (h *handler) definitions() *defSet {
	h.defsOnce.Do(func() { h.defs = builtin().forRegistry(h.reg) })
	return h.defs
}

// groupVersionItems lists the paths of every served group-version, keyed
// as the v3 index names them.
func (h *handler) groupVersionItems() map[string][]*pathItem {
	d := h.definitions()
	defName := func(gvk schema.GroupVersionKind) string { return d.byGVK[gvk] }
	out := map[string][]*pathItem{}
	for _, g := range h.reg.Groups() {
		for _, v := range g.Versions {
			key := strings.TrimPrefix(gvPrefix(g.Group, v.Version), "/")
			out[key] = groupVersionPaths(g.Group, v.Version, v.Resources, defName)
		}
	}
	return out
}

func (h *handler) buildV2() {
	d := h.definitions()
	defName := func(gvk schema.GroupVersionKind) string { return d.byGVK[gvk] }
	var items []*pathItem
	for _, list := range rootPaths(h.reg) {
		items = append(items, list...)
	}
	var custom []*spec.Swagger
	for _, g := range h.reg.Groups() {
		for _, v := range g.Versions {
			if docs, ok := customV2Documents(v.Resources); ok {
				custom = append(custom, docs...)
				continue
			}
			items = append(items, groupVersionPaths(g.Group, v.Version, v.Resources, defName)...)
		}
	}
	h.v2 = newDocument(mustJSON(d.v2Document(items, custom, h.version)), v2Proto)
}

// customV2Documents are apiextensions' v2 documents of a group-version's
// custom resources, whose paths kube-apiserver merges into its
// /openapi/v2. ok is false for a group-version with built-in resources,
// or whose documents cannot be made (kapi's own paths are served then).
func customV2Documents(infos []*resources.Info) (docs []*spec.Swagger, ok bool) {
	for _, info := range infos {
		if info.OpenAPIV2Document == nil {
			return nil, false
		}
		doc, err := info.OpenAPIV2Document()
		if err != nil {
			return nil, false
		}
		docs = append(docs, doc)
	}
	return docs, len(docs) > 0
}

// layOutV3 lists the v3 documents, each to be made when first asked for;
// those of the group-versions whose resources did not change since the
// previous handler are its own.
func (h *handler) layOutV3() {
	d := h.definitions()
	defName := func(gvk schema.GroupVersionKind) string { return d.byGVK[gvk] }
	prev := h.previous.Swap(nil)
	h.v3 = map[string]*v3Document{}
	h.v3Inputs = map[string][]*resources.Info{}
	// The documents keep what they are made from until made: the
	// definitions and the resources, not this handler.
	serverVersion := h.version
	for key, items := range rootPaths(h.reg) {
		h.v3[key] = newV3Document(func() []byte { return mustJSON(d.v3Document(items, serverVersion, nil)) })
	}
	for _, g := range h.reg.Groups() {
		for _, v := range g.Versions {
			key := strings.TrimPrefix(gvPrefix(g.Group, v.Version), "/")
			h.v3Inputs[key] = v.Resources
			// The same Infos make the same document: a group-version's
			// paths and the definitions they refer to follow from its
			// resources alone.
			if prev != nil && prev.v3[key] != nil && slices.Equal(prev.v3Inputs[key], v.Resources) {
				h.v3[key] = prev.v3[key]
				continue
			}
			group, version, infos := g.Group, v.Version, v.Resources
			h.v3[key] = newV3Document(func() []byte {
				if doc, ok := customDocument(infos); ok {
					return doc
				}
				gv := schema.GroupVersion{Group: group, Version: version}
				return mustJSON(d.v3Document(groupVersionPaths(group, version, infos, defName), serverVersion, &gv))
			})
		}
	}
	h.v3Laid.Store(true)
}

// customDocument is the v3 document of a group-version of custom
// resources as kube-apiserver publishes it: apiextensions' documents of
// its resources, merged. ok is false for a group-version with built-in
// resources, or whose documents cannot be made (then kapi's own document,
// with any-shape objects for the kinds that fail, is served).
func customDocument(infos []*resources.Info) (doc []byte, ok bool) {
	specs := make([]*spec3.OpenAPI, 0, len(infos))
	for _, info := range infos {
		if info.OpenAPIV3Document == nil {
			return nil, false
		}
		s, err := info.OpenAPIV3Document()
		if err != nil {
			return nil, false
		}
		specs = append(specs, s)
	}
	merged, err := crdopenapi.MergeSpecsV3(specs...)
	if err != nil || len(specs) == 0 {
		return nil, false
	}
	out, err := json.Marshal(merged)
	return out, err == nil
}

// buildV3Index makes every v3 document, for the index names each by its
// hash.
func (h *handler) buildV3Index() {
	h.v3Once.Do(h.layOutV3)
	paths := object{}
	for key, doc := range h.v3 {
		paths[key] = object{"serverRelativeURL": serverRelativeURL(key, doc.get().etag)}
	}
	h.v3Index = newDocument(mustJSON(object{"paths": paths}), nil)
}

func serverRelativeURL(key, etag string) string {
	u := url.URL{Path: "/openapi/v3/" + key, RawQuery: url.Values{"hash": {etag}}.Encode()}
	return u.String()
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch path := r.URL.Path; {
	case path == "/openapi/v2":
		h.v2Once.Do(h.buildV2)
		serveV2(w, r, h.v2)
	case path == "/openapi/v3":
		h.v3IndexOnce.Do(h.buildV3Index)
		// The type kube-apiserver's index has (what its content sniffs as).
		// Unlike kube-apiserver's, it has an entity tag: its time alone
		// would let a client's cache keep an index a CRD established in
		// the same second changed (kubectl explain failed so).
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Etag", strconv.Quote(h.v3Index.etag))
		http.ServeContent(w, r, "", h.v3Index.modified, bytes.NewReader(h.v3Index.json))
	case strings.HasPrefix(path, "/openapi/v3/"):
		h.v3Once.Do(h.layOutV3)
		key := strings.TrimPrefix(path, "/openapi/v3/") // as kube: "api/v1/" names no group-version
		lazy := h.v3[key]
		if lazy == nil {
			w.WriteHeader(http.StatusNotFound) // kube-apiserver's answer has no body
			return
		}
		serveV3(w, r, key, lazy.get())
	default:
		http.NotFound(w, r) // kube-apiserver's mux answers other paths
	}
}

// serveV2 writes the v2 document as JSON or, when the Accept header
// prefers it, as protobuf, with its hash as entity tag, compressed for a
// client that takes gzip, as kube-apiserver serves it.
func serveV2(w http.ResponseWriter, r *http.Request, doc *document) {
	w.Header().Add("Vary", "Accept-Encoding")
	w.Header().Add("Vary", "Accept")
	contentType, body, ok := writeForm(w, acceptedTypes(r.Header.Get("Accept")), doc, v2Forms)
	if !ok {
		return
	}
	if r.Method != http.MethodHead && acceptsGzip(r) {
		body = doc.gzipped(contentType, body)
		w.Header().Set("Content-Encoding", "gzip")
	}
	http.ServeContent(w, r, "", doc.modified, bytes.NewReader(body))
}

// serveV3 writes a group-version's v3 document as JSON or protobuf, with
// its hash as entity tag; a link naming another hash is sent to the
// current one, and one naming this one may be cached forever.
func serveV3(w http.ResponseWriter, r *http.Request, key string, doc *document) {
	accepted := acceptedTypes(r.Header.Get("Accept"))
	if len(accepted) == 0 {
		return // as kube-apiserver's: an Accept of no media types gets nothing
	}
	w.Header().Add("Vary", "Accept")
	_, body, ok := writeForm(w, accepted, doc, v3Forms)
	if !ok {
		return
	}
	if hash := r.URL.Query().Get("hash"); hash != "" {
		if hash != doc.etag {
			// An old link: send the client to the current document.
			http.Redirect(w, r, serverRelativeURL(key, doc.etag), http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Cache-Control", "public, immutable")
		w.Header().Set("Expires", time.Now().AddDate(1, 0, 0).Format(time.RFC1123))
	}
	http.ServeContent(w, r, "", doc.modified, bytes.NewReader(body))
}

// writeForm picks doc's form by the accepted media types and sets its
// type and entity tag; when there is none to give, it answers (406, or
// 500) and reports false.
func writeForm(w http.ResponseWriter, accepted []goautoneg.Accept, doc *document, forms []form) (contentType string, body []byte, ok bool) {
	contentType, body, err := negotiated(accepted, doc, forms)
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return "", nil, false
	case contentType == "":
		w.WriteHeader(http.StatusNotAcceptable)
		return "", nil, false
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Etag", strconv.Quote(doc.etag))
	return contentType, body, true
}

// form is a media type a document is served for, and the type it is
// then served as.
type form struct{ accepts, returns string }

// The forms of the v2 and v3 documents, in the order kube-openapi tries
// them for each Accept clause; either protobuf name gets the current one.
var (
	v2Forms = []form{{mediaJSON, mediaJSON}, {mediaV2ProtobufOld, mediaV2Protobuf}, {mediaV2Protobuf, mediaV2Protobuf}}
	v3Forms = []form{{mediaJSON, mediaJSON}, {mediaV3Protobuf, mediaV3Protobuf}, {mediaV3ProtobufOld, mediaV3Protobuf}}
)

// negotiated picks doc's JSON or protobuf form for the first Accept
// clause that names one of forms, as kube-openapi matches them: the
// clause's type and subtype each equal or "*". An empty content type
// means none.
func negotiated(accepted []goautoneg.Accept, doc *document, forms []form) (contentType string, body []byte, err error) {
	for _, clause := range accepted {
		for _, f := range forms {
			typ, subtype, _ := strings.Cut(f.accepts, "/")
			if (clause.Type != typ && clause.Type != "*") || (clause.SubType != subtype && clause.SubType != "*") {
				continue
			}
			if f.returns == mediaJSON {
				return mediaJSON, doc.json, nil
			}
			pb, err := doc.protobuf()
			return f.returns, pb, err
		}
	}
	return "", nil, nil
}

// acceptsGzip reports whether r's Accept-Encoding takes gzip as the
// compressing handler kube-apiserver puts before its OpenAPI v2 document
// reads it: the coding in any case, its q value above 0 (the last clause
// naming gzip decides; one whose q does not parse is ignored), "*" not
// counted.
func acceptsGzip(r *http.Request) bool {
	q := 0.0
	for _, clause := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(clause, ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		if value, ok := qValue(params); ok {
			q = value
		}
	}
	return q > 0
}

// qValue is an Accept-Encoding clause's q value as that handler reads its
// parameters: each sets it back to 1 unless it is a q, so the last one
// counts; a q is clamped to [0, 1], and one that does not parse makes the
// clause count for nothing (ok false).
func qValue(params string) (value float64, ok bool) {
	value, ok = 1, true
	for _, param := range strings.Split(params, ";") {
		value = 1
		raw, isQ := strings.CutPrefix(strings.TrimSpace(param), "q=")
		if !isQ {
			continue
		}
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			ok = false
		}
		value = min(max(f, 0), 1)
	}
	return value, ok
}

// acceptedTypes are the clauses of an Accept header in kube-openapi's
// order (its parser's); no header accepts anything.
func acceptedTypes(header string) []goautoneg.Accept {
	if header == "" {
		header = "*/*"
	}
	return goautoneg.ParseAccept(header)
}

// V2Document is an OpenAPI v2 document served as kube-apiserver serves
// /openapi/v2 (JSON or protobuf by the Accept header, with an entity tag):
// kapi's own merged with an aggregated server's.
type V2Document struct{ doc *document }

// NewV2Document serves the given swagger JSON.
func NewV2Document(json []byte) *V2Document { return &V2Document{newDocument(json, v2Proto)} }

// Serve answers a request for the document.
func (d *V2Document) Serve(w http.ResponseWriter, r *http.Request) {
	serveV2(w, r, d.doc)
}
