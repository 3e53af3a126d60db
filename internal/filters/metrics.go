package filters

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	endpointsmetrics "k8s.io/apiserver/pkg/endpoints/metrics"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kapi-dev/kapi/internal/request"
)

// component is the component label of kapi's request metrics, as
// kube-apiserver labels the requests it serves itself.
const component = "apiserver"

// withMetrics records every request in kube-apiserver's request metrics
// (k8s.io/apiserver's apiserver_request_total,
// apiserver_request_duration_seconds, apiserver_response_sizes,
// apiserver_request_sli_duration_seconds (from the latency trackers
// withLatencyTrackers puts in the request's context),
// apiserver_requested_deprecated_apis, and apiserver_longrunning_requests
// for watches), with its labels.
func withMetrics(next http.Handler) http.Handler {
	endpointsmetrics.Register()
	var inflight inflightCounts
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kubeInfo, ok := genericapirequest.RequestInfoFrom(r.Context())
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		rec := &recordingWriter{ResponseWriter: w, code: http.StatusOK}
		start := time.Now()
		serve := func() { next.ServeHTTP(rec, r) }
		if kubeInfo.Verb == "watch" {
			endpointsmetrics.RecordLongRunning(r, kubeInfo, component, serve)
		} else {
			done := inflight.start(kubeInfo.Verb)
			serve()
			done()
		}
		if !kubeInfo.IsResourceRequest {
			return
		}
		var deprecated bool
		var removedRelease string
		if info, ok := request.From(r.Context()); ok {
			deprecated, removedRelease = info.Deprecated, info.RemovedRelease
		}
		endpointsmetrics.MonitorRequest(r, strings.ToUpper(kubeInfo.Verb), kubeInfo.APIGroup, kubeInfo.APIVersion,
			kubeInfo.Resource, kubeInfo.Subresource, endpointsmetrics.CleanScope(kubeInfo), component, deprecated, removedRelease,
			rec.code, rec.size, time.Since(start))
	})
}

// inflightCounts are the requests being served, long-running ones left
// out, for kube-apiserver's apiserver_current_inflight_requests. Counting
// takes no lock: the gauge is set from whatever both counts read.
type inflightCounts struct {
	readOnly, mutating atomic.Int64
}

// start counts a request in until the returned func is called.
func (c *inflightCounts) start(verb string) func() {
	count := &c.readOnly
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		count = &c.mutating
	}
	count.Add(1)
	c.report()
	return func() {
		count.Add(-1)
		c.report()
	}
}

func (c *inflightCounts) report() {
	endpointsmetrics.UpdateInflightRequestMetrics(endpointsmetrics.ExecutingPhase, int(c.readOnly.Load()), int(c.mutating.Load()))
}

// recordingWriter notes the status code and size of a response; it keeps
// the writer's flushing (watches) and hijacking (proxied upgrades).
type recordingWriter struct {
	http.ResponseWriter
	code        int
	size        int
	wroteHeader bool
}

func (w *recordingWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.code, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	n, err := w.ResponseWriter.Write(b)
	w.size += n
	return n, err
}

func (w *recordingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *recordingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := w.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("the connection cannot be taken over")
}

func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
