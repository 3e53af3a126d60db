package filters

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

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
// requestTimeout. A `timeout` that is not a duration is kube-apiserver's
// 400.
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
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		next.ServeHTTP(&deadlineWriter{ResponseWriter: w, ctx: ctx}, r.WithContext(ctx))
	})
}

// deadlineWriter answers for a handler that starts its answer after the
// request's deadline has passed, as kube-apiserver's timeout filter, which
// answers when the deadline passes and drops what the handler writes
// after: 504, the Status as bare JSON of no declared type. (A handler
// whose work outlives the deadline fails with it anyway: every storage
// call takes the request's context.)
type deadlineWriter struct {
	http.ResponseWriter
	ctx      context.Context
	started  bool
	timedOut bool
}

// timeoutBody is kube's timeout filter's body, encoded as it encodes it.
const timeoutBody = `{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}` + "\n"

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
	for _, key := range []string{"Content-Type", "Content-Length", "Content-Encoding", "Vary", "Etag", "Last-Modified"} {
		h.Del(key)
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

func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
