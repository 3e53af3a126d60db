package handlers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit"

	"github.com/klauspost/compress/flate"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/respond"
)

// statusGVK is how a Status is written on every endpoint.
var statusGVK = respond.StatusGVK

// writeObject encodes obj with the serializer negotiated for r.
func writeObject(w http.ResponseWriter, r *http.Request, code int, obj runtime.Object, gvk schema.GroupVersionKind, infos []runtime.SerializerInfo) {
	info, err := codecs.NegotiateOutput(r, infos)
	if err != nil {
		writeError(w, r, err)
		return
	}
	logResponse(r, obj, gvk.GroupVersion())
	writeEncoded(w, r, code, obj, gvk, info)
}

// writeResult answers a write with the object it wrote, in the
// representation the client asked for: as a Table or PartialObjectMetadata
// too, as kube-apiserver transforms the answer of any verb.
func writeResult(w http.ResponseWriter, r *http.Request, code int, obj runtime.Object, store *registry.Store) {
	target, err := negotiateRead(r, store.Serializers(), "get")
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeTransformed(w, r, code, obj, store, target)
}

// writeTransformed answers with obj in the representation target says,
// and records what it answers in the audit event.
func writeTransformed(w http.ResponseWriter, r *http.Request, code int, obj runtime.Object, store *registry.Store, target readTarget) {
	out, gvk, err := target.transform(store, obj, nil, nil)
	if err != nil {
		writeError(w, r, err)
		return
	}
	logResponse(r, out, gvk.GroupVersion())
	writeEncoded(w, r, code, out, gvk, target.info)
}

// auditList records a list answered without a list object in the audit
// event, as its object, when the event's level records responses: the
// list is made only then.
func auditList(r *http.Request, store *registry.Store, items []runtime.Object, listMeta *metav1.ListMeta) {
	if !auditsResponse(r) {
		return
	}
	if list, err := listOf(store, items, listMeta); err == nil {
		logResponse(r, list, store.Info.GroupVersionKind().GroupVersion())
	}
}

// writeShared sends obj, an object of the watch cache, from the encoding
// its readers share (a list's item is the object's encoding, and a
// protobuf one its bare message, which the envelope then wraps), made
// now if no reader has made it yet.
func writeShared(w http.ResponseWriter, r *http.Request, store *registry.Store, info runtime.SerializerInfo, obj runtime.Object, enc *cache.Encodings) {
	data, err := enc.Encode(itemEncoder(info), obj)
	if err != nil {
		writeError(w, r, err) // kube's bare 500 with the encoder's words
		return
	}
	b := &body{}
	if info.MediaType == runtime.ContentTypeProtobuf {
		b.add(appendEnvelopeHeader(nil, store.Info.GroupVersionKind(), len(data)), data, unknownTrailer)
	} else {
		b.add(data)
	}
	writeBody(w, r, http.StatusOK, b, info.MediaType)
}

// auditObject records obj, the cache's, as the response of the request,
// when its audit level records responses: a copy, since encoding sets
// the object's kind.
func auditObject(r *http.Request, store *registry.Store, obj runtime.Object) {
	if auditsResponse(r) {
		obj = obj.DeepCopyObject()
		logResponse(r, obj, store.Info.GroupVersionKind().GroupVersion())
	}
}

// logResponse records obj, the answer of r, in the request's audit event
// when its level records responses. A Table's rows carry their objects as
// bytes: they go to the event decoded, so that the policy's
// omitManagedFields drops their managed fields, as from kube's rows.
func logResponse(r *http.Request, obj runtime.Object, gv schema.GroupVersion) {
	if table, ok := obj.(*metav1.Table); ok && auditsResponse(r) {
		obj = withDecodedRows(table)
	}
	audit.LogResponseObject(r.Context(), obj, gv, auditSerializer(obj))
}

// withDecodedRows is a copy of table whose rows hold their objects decoded.
func withDecodedRows(table *metav1.Table) *metav1.Table {
	out := *table
	out.Rows = make([]metav1.TableRow, len(table.Rows))
	for i, row := range table.Rows {
		if row.Object.Object == nil && len(row.Object.Raw) > 0 {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(row.Object.Raw); err == nil {
				row.Object = runtime.RawExtension{Object: u}
			}
		}
		out.Rows[i] = row
	}
	return &out
}

// auditSerializer encodes obj for the request's audit event: the scheme's
// codecs for built-in and meta.k8s.io kinds; a custom resource (or a list
// of them), which the scheme cannot encode, in JSON as it is (the lists
// went missing from the events).
func auditSerializer(obj runtime.Object) runtime.NegotiatedSerializer {
	if _, custom := obj.(runtime.Unstructured); custom {
		return unstructuredAudit
	}
	return codecs.Factory
}

var unstructuredAudit = runtime.NewSimpleNegotiatedSerializer(codecs.UnstructuredSerializers[0])

// auditsResponse reports whether the request's audit event records its
// response.
func auditsResponse(r *http.Request) bool {
	ac := audit.AuditContextFrom(r.Context())
	return ac != nil && !ac.GetEventLevel().Less(auditinternal.LevelRequestResponse)
}

// listOf makes a list of store's kind holding items, with listMeta.
func listOf(store *registry.Store, items []runtime.Object, listMeta *metav1.ListMeta) (runtime.Object, error) {
	list, err := store.NewListOf(items)
	if err != nil {
		return nil, err
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	lm.SetResourceVersion(listMeta.ResourceVersion)
	lm.SetContinue(listMeta.Continue)
	lm.SetRemainingItemCount(listMeta.RemainingItemCount)
	return list, nil
}

// gzipLevel is kube-apiserver's level for compressed responses (the
// fastest). The compressor is klauspost/compress's: at that level it
// takes some 40% less CPU than the standard library's for a list and
// writes a fifth fewer bytes.
const gzipLevel = flate.BestSpeed

// writeEncoded encodes obj with info, compressing large responses for
// clients that accept gzip (SPEC C4).
func writeEncoded(w http.ResponseWriter, r *http.Request, code int, obj runtime.Object, gvk schema.GroupVersionKind, info runtime.SerializerInfo) {
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	err := codecs.WithEncoding(info.Serializer, obj, func(data []byte) {
		writeBytes(w, r, code, data, info.MediaType)
	})
	if err != nil {
		// As kube-apiserver's writer: a Status of the encoder's error, a
		// 500 without a reason.
		writeError(w, r, err)
	}
}

// writeBytes sends an encoded body, compressed when it is large and the
// client accepts gzip.
func writeBytes(w http.ResponseWriter, r *http.Request, code int, data []byte, mediaType string) {
	writeBody(w, r, code, &body{parts: [][]byte{data}, size: len(data)}, mediaType)
}

// writeBody sends a body in parts, compressed when it is large and the
// client accepts gzip; no part is copied into a buffer of the whole.
func writeBody(w http.ResponseWriter, r *http.Request, code int, b *body, mediaType string) {
	if prettyJSON(r, mediaType) {
		b = indented(b)
	}
	if b.size > respond.GzipThreshold && respond.AcceptsGzip(r) {
		writeGzipHeader(w, code, mediaType)
		g := newGzipWriter(w)
		g.deflate(b.parts, true, nil)
		g.close()
		return
	}
	writePlain(w, code, mediaType, b.size, b.parts)
}

// prettyJSON reports whether a body in mediaType is indented for r.
func prettyJSON(r *http.Request, mediaType string) bool {
	return mediaType == runtime.ContentTypeJSON && respond.Pretty(r)
}

// indented is a JSON body as kube-apiserver's pretty serializer writes it
// (json.MarshalIndent's two spaces, no newline after): the compact
// encoding, which kapi keeps and splices, indented.
func indented(b *body) *body {
	compact := slices.Concat(b.parts...)
	var out bytes.Buffer
	out.Grow(len(compact) * 2)
	if err := json.Indent(&out, bytes.TrimRight(compact, "\n"), "", "  "); err != nil {
		return b
	}
	return &body{parts: [][]byte{out.Bytes()}, size: out.Len()}
}

// writeGzipHeader starts a compressed response, which is compressed as it
// is sent (so without a Content-Length, as kube-apiserver sends it).
func writeGzipHeader(w http.ResponseWriter, code int, mediaType string) {
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Content-Encoding", "gzip")
	w.Header().Add("Vary", "Accept-Encoding")
	w.WriteHeader(code)
}

// writePlain sends a body of size bytes, given as runs of parts, as it is.
func writePlain(w http.ResponseWriter, code int, mediaType string, size int, runs ...[][]byte) {
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Content-Length", strconv.Itoa(size))
	w.WriteHeader(code)
	if len(runs) == 1 && len(runs[0]) == 1 {
		w.Write(runs[0][0])
		return
	}
	bw := bufferedWriters.Get().(*bufio.Writer)
	bw.Reset(w)
	for _, parts := range runs {
		writeParts(bw, parts)
	}
	bw.Flush()
	bw.Reset(nil)
	bufferedWriters.Put(bw)
}

// bufferedWriters gather a body's small parts (a list's separators and
// field headers) into writes of a useful size.
var bufferedWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 64<<10) }}

// writeParts writes parts until one fails: the client has gone, and the
// rest would fail too.
func writeParts(w io.Writer, parts [][]byte) {
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return
		}
	}
}

// apiStatus converts any error into the Status a client sees.
func apiStatus(err error) *metav1.Status { return respond.Status(err) }

// writeError writes err as a Status.
func writeError(w http.ResponseWriter, r *http.Request, err error) { respond.Error(w, r, err) }
