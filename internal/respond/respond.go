// Package respond writes API errors as the metav1.Status a client of
// kube-apiserver would get, in the media type the client accepts. The
// filters and the handlers share it.
package respond

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/emicklei/go-restful/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/features"

	"github.com/kapi-dev/kapi/internal/codecs"
)

// StatusGVK is how a Status is written on every endpoint.
var StatusGVK = schema.GroupVersionKind{Version: "v1", Kind: "Status"}

// apiStatus converts any error into the Status a client sees.
func Status(err error) *metav1.Status {
	var withStatus interface{ Status() metav1.Status }
	if errors.As(err, &withStatus) {
		s := withStatus.Status()
		if s.Code == 0 {
			s.Code = http.StatusInternalServerError
		}
		if s.Status == "" {
			s.Status = metav1.StatusFailure
		}
		return &s
	}
	// As kube-apiserver answers an error its storage did not make a
	// Status of: 500, with the error's own text and no reason.
	return &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: err.Error()}
}

// writeError writes err as a Status in the negotiated media type, falling
// back to JSON when the client accepts nothing we serve, as kube-apiserver
// does: the original error is never hidden behind a negotiation failure.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	ErrorIn(w, r, err, codecs.Factory.SupportedMediaTypes())
}

// ErrorIn is Error for an endpoint that serves the representations infos
// only (kube-apiserver's own routes write no CBOR).
func ErrorIn(w http.ResponseWriter, r *http.Request, err error, infos []runtime.SerializerInfo) {
	status := Status(err)
	if r.Context().Err() == context.DeadlineExceeded {
		// The request's time ran out: kube-apiserver's timeout filter
		// answers for the handler, whatever it then fails with. (Short
		// requests get the filter's own answer from the deadline's
		// writer; this is for the others with a deadline of their own.)
		status = Status(apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0))
	}
	if status.Details != nil && status.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(status.Details.RetryAfterSeconds)))
	}
	info, negErr := codecs.NegotiateOutput(r, infos)
	status.SetGroupVersionKind(StatusGVK)
	if negErr != nil {
		// As kube's, an error the client accepts no representation of is
		// written as JSON, and its audit event records no response.
		writeRawJSON(w, status)
		return
	}
	audit.LogResponseObject(r.Context(), status, StatusGVK.GroupVersion(), codecs.Factory)
	serializer := info.Serializer
	if info.PrettySerializer != nil && Pretty(r) {
		serializer = info.PrettySerializer
	}
	var buf bytes.Buffer
	if err := serializer.Encode(status, &buf); err != nil {
		http.Error(w, fmt.Sprintf("encoding error: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", info.MediaType)
	if buf.Len() > GzipThreshold && AcceptsGzip(r) {
		writeGzipped(w, int(status.Code), buf.Bytes())
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(int(status.Code))
	w.Write(buf.Bytes())
}

// GzipThreshold is the response size above which kube-apiserver
// compresses an API response, errors included, for a client that accepts
// gzip.
const GzipThreshold = 128 * 1024

// AcceptsGzip reports whether r's client takes a gzipped API response:
// by kube-apiserver's rule, an Accept-Encoding naming exactly the token
// "gzip" (no parameters, any case but lower refused).
func AcceptsGzip(r *http.Request) bool {
	return responsewriters.ContentEncodingSupported(r, features.APIResponseCompression) == "gzip"
}

// writeGzipped writes a large error compressed at kube-apiserver's level.
func writeGzipped(w http.ResponseWriter, code int, data []byte) {
	w.Header().Set("Content-Encoding", "gzip")
	w.Header().Add("Vary", "Accept-Encoding")
	w.WriteHeader(code)
	gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	gz.Write(data)
	gz.Close()
}

// writeRawJSON writes status as kube-apiserver writes an answer whose
// client accepts nothing it serves: indented JSON, without a final
// newline.
func writeRawJSON(w http.ResponseWriter, status *metav1.Status) {
	data, err := json.MarshalIndent(status, "", "  ")
	if err != nil {
		http.Error(w, fmt.Sprintf("encoding error: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(int(status.Code))
	w.Write(data)
}

// RouteError answers a request a go-restful route does not take (a method
// or an Accept it does not serve) with a Status, as kube-apiserver's
// router does.
func RouteError(e restful.ServiceError, req *restful.Request, resp *restful.Response) {
	err := apierrors.NewGenericServerResponse(e.Code, "", schema.GroupResource{}, "", e.Message, 0, false)
	ErrorIn(resp.ResponseWriter, req.Request, err, withoutCBOR)
}

// withoutCBOR are the representations of kube-apiserver's own routes.
var withoutCBOR = slices.DeleteFunc(slices.Clone(codecs.Factory.SupportedMediaTypes()), func(info runtime.SerializerInfo) bool {
	return info.MediaType == runtime.ContentTypeCBOR
})
