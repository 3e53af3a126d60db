package filters

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kapi-dev/kapi/internal/request"
	"github.com/kapi-dev/kapi/internal/respond"
)

// requestTimeout bounds every request that is not long-running, as
// kube-apiserver's --request-timeout default does; a client's `timeout`
// option can only shorten it.
const requestTimeout = time.Minute

// longRunning are the sub-resources whose requests stream for as long as
// the client wants.
var longRunning = map[string]bool{"proxy": true, "exec": true, "attach": true, "log": true, "portforward": true}

// streams tells the requests that last for as long as the client wants:
// watches and the streaming sub-resources.
func streams(info *request.Info) bool {
	return info.Verb == "watch" || longRunning[info.Subresource]
}

// withRequestDeadline gives each request that is not long-running (watches
// and streaming sub-resources are) a deadline: the `timeout` option, or
// requestTimeout, counted from when the request was received (as
// kube-apiserver's, so that time queued and authenticating counts). A
// `timeout` that is not a duration is kube-apiserver's 400.
func withRequestDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, _ := request.From(r.Context())
		if info != nil && streams(info) {
			next.ServeHTTP(w, r)
			return
		}
		timeout := requestTimeout
		if value := r.URL.Query().Get("timeout"); value != "" {
			asked, err := time.ParseDuration(value)
			if err != nil {
				respond.Error(w, r, apierrors.NewBadRequest(fmt.Sprintf("invalid timeout specified in the request URL - %v", err)))
				return
			}
			if asked > 0 && asked < timeout {
				timeout = asked
			}
		}
		received, ok := genericapirequest.ReceivedTimestampFrom(r.Context())
		if !ok {
			received = time.Now()
		}
		ctx, cancel := context.WithDeadline(r.Context(), received.Add(timeout))
		defer cancel()
		next.ServeHTTP(newDeadlineWriter(w, ctx), r.WithContext(ctx))
	})
}

// deadlineWriter answers for a handler that starts its answer after the
// request's deadline has passed, as kube-apiserver's timeout filter, which
// answers when the deadline passes and drops what the handler writes
// after: 504, the Status as bare JSON of no declared type, with only the
// headers the filters outside kube's timeout set (the audit ID and
// Cache-Control; not the handler's, nor priority and fairness's). (A
// handler whose work outlives the deadline fails with it anyway: every
// storage call takes the request's context.)
type deadlineWriter struct {
	http.ResponseWriter
	ctx                   context.Context
	auditID, cacheControl string
	started, timedOut     bool
}

func newDeadlineWriter(w http.ResponseWriter, ctx context.Context) *deadlineWriter {
	h := w.Header()
	return &deadlineWriter{ResponseWriter: w, ctx: ctx, auditID: h.Get(auditIDHeader), cacheControl: h.Get("Cache-Control")}
}

// auditIDHeader is where kube-apiserver names a request's audit ID.
const auditIDHeader = "Audit-Id"

// timeoutBody is kube's timeout filter's body, encoded as it encodes it.
const timeoutBody = `{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}` + "\n"

// start decides, at the handler's first write, whether it answers.
func (w *deadlineWriter) start() {
	if w.started {
		return
	}
	w.started = true
	if w.ctx.Err() != context.DeadlineExceeded {
		return
	}
	w.timedOut = true
	h := w.ResponseWriter.Header()
	clear(h)
	for key, value := range map[string]string{auditIDHeader: w.auditID, "Cache-Control": w.cacheControl} {
		if value != "" {
			h.Set(key, value)
		}
	}
	w.ResponseWriter.WriteHeader(http.StatusGatewayTimeout)
	io.WriteString(w.ResponseWriter, timeoutBody)
}

func (w *deadlineWriter) WriteHeader(code int) {
	w.start()
	if !w.timedOut {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.start()
	if w.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	return w.ResponseWriter.Write(b)
}

// Flush and Hijack are the wrapped writer's, as kube's timeout writer
// passes them on, until the deadline has answered.
func (w *deadlineWriter) Flush() {
	w.start()
	if !w.timedOut {
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func (w *deadlineWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if !w.started && w.ctx.Err() == context.DeadlineExceeded {
		w.start()
	}
	if w.timedOut {
		return nil, nil, http.ErrHandlerTimeout
	}
	w.started = true
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Handlers in the deadline's scope find a flusher and a hijacker (an
// upgrade proxied to an aggregated API takes the connection).
var _ interface {
	http.Flusher
	http.Hijacker
} = (*deadlineWriter)(nil)
