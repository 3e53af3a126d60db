package handlers

import (
	"io"
	"net/http"

	"k8s.io/apiserver/pkg/util/flushwriter"

	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
)

// stream serves a sub-resource read as a stream of bytes (a pod's log) as
// kube-apiserver streams one: its content type, each write flushed when
// the stream asks for it, 204 No Content when there is nothing to stream.
func (a *API) stream(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store, stream registry.Stream) {
	// A stream (a pod's log) is a read: as kube-apiserver's route of it,
	// the answer's representation is agreed on first, and it is no Table.
	if _, err := negotiateRead(r, store.Serializers(), "get"); err != nil {
		writeError(w, r, err)
		return
	}
	s, err := stream(r.Context(), req.Namespace, req.Name, r.URL.Query())
	if err != nil {
		writeError(w, r, err)
		return
	}
	out, flush, contentType, err := s.InputStream(r.Context(), store.Info.GroupVersionKind().GroupVersion().String(), r.Header.Get("Accept"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if out == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	defer out.Close()
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	var dst io.Writer = w
	if flush {
		// Each write flushed, so that a followed log reaches the client
		// as it is written.
		dst = flushwriter.Wrap(w)
	}
	io.Copy(dst, out)
}
