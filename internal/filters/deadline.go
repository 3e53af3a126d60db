package filters

import (
	"context"
	"fmt"
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
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
