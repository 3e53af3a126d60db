package handlers

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/codecs"
)

// statusGVK is how a Status is written on every endpoint.
var statusGVK = schema.GroupVersionKind{Version: "v1", Kind: "Status"}

// writeObject encodes obj with the serializer negotiated for r.
func writeObject(w http.ResponseWriter, r *http.Request, code int, obj runtime.Object, gvk schema.GroupVersionKind, infos []runtime.SerializerInfo) {
	info, err := codecs.NegotiateOutput(r, infos)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeEncoded(w, r, code, obj, gvk, info)
}

// gzipThreshold is the response size from which kube-apiserver compresses
// for clients that accept gzip.
const gzipThreshold = 128 * 1024

// writeEncoded encodes obj with info, compressing large responses for
// clients that accept gzip (SPEC C4).
func writeEncoded(w http.ResponseWriter, r *http.Request, code int, obj runtime.Object, gvk schema.GroupVersionKind, info runtime.SerializerInfo) {
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	var buf bytes.Buffer
	if err := info.Serializer.Encode(obj, &buf); err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	writeBytes(w, r, code, buf.Bytes(), info.MediaType)
}

// writeBytes sends an encoded body, compressed when it is large and the
// client accepts gzip.
func writeBytes(w http.ResponseWriter, r *http.Request, code int, body []byte, mediaType string) {
	w.Header().Set("Content-Type", mediaType)
	if len(body) >= gzipThreshold && acceptsGzip(r) {
		var zipped bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&zipped, gzip.DefaultCompression)
		zw.Write(body)
		zw.Close()
		body = zipped.Bytes()
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Add("Vary", "Accept-Encoding")
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	w.Write(body)
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && !strings.Contains(strings.ReplaceAll(params, " ", ""), "q=0") {
			return true
		}
	}
	return false
}

// apiStatus converts any error into the Status a client sees.
func apiStatus(err error) *metav1.Status {
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
	return &apierrors.NewInternalError(err).ErrStatus
}

// writeError writes err as a Status in the negotiated media type, falling
// back to JSON when the client accepts nothing we serve, as kube-apiserver
// does: the original error is never hidden behind a negotiation failure.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := apiStatus(err)
	if status.Details != nil && status.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(status.Details.RetryAfterSeconds)))
	}
	info, negErr := codecs.NegotiateOutput(r, codecs.Factory.SupportedMediaTypes())
	if negErr != nil {
		info = codecs.Factory.SupportedMediaTypes()[0]
	}
	status.SetGroupVersionKind(statusGVK)
	var buf bytes.Buffer
	if err := info.Serializer.Encode(status, &buf); err != nil {
		http.Error(w, fmt.Sprintf("encoding error: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", info.MediaType)
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(int(status.Code))
	w.Write(buf.Bytes())
}

// Unauthorized answers a request that presented no valid credentials.
func Unauthorized(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, apierrors.NewUnauthorized("Unauthorized"))
}

// Recover turns a panic in next into a 500 Status instead of a dropped
// connection, and logs it.
func Recover(next http.Handler, logf func(format string, args ...interface{})) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				logf("panic serving %s %s: %v\n%s", r.Method, r.URL.Path, p, debug.Stack())
				writeError(w, r, apierrors.NewInternalError(fmt.Errorf("%v", p)))
			}
		}()
		next.ServeHTTP(w, r)
	})
}
