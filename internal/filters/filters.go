// Package filters is the chain every request passes before the handlers:
// panic recovery, the request's info parsed once into its context,
// authentication, impersonation (not yet), priority and fairness (not yet)
// and authorisation. A filter answers with a Status and stops the request,
// or passes it on; filters never touch objects or storage.
package filters

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/auth"
	"github.com/kapi-dev/kapi/internal/request"
	"github.com/kapi-dev/kapi/internal/respond"
)

// Authenticator puts the user of a request in its context (auth.UserFrom),
// lets the public paths (auth.IsPublicPath) through without one, and hands
// the rest to unauthorized.
type Authenticator interface {
	Middleware(next http.Handler, unauthorized func(http.ResponseWriter, *http.Request)) http.Handler
}

// Authorizer decides whether a user may do what a request asks.
type Authorizer interface {
	Authorize(ctx context.Context, user *auth.User, req *request.Info) (allowed bool, reason string, err error)
}

// AlwaysAllow authorises every authenticated request, as
// --authorization-mode=AlwaysAllow does.
type AlwaysAllow struct{}

// Authorize implements Authorizer.
func (AlwaysAllow) Authorize(context.Context, *auth.User, *request.Info) (bool, string, error) {
	return true, "", nil
}

// Config is what the chain needs.
type Config struct {
	Authenticator Authenticator
	Authorizer    Authorizer
	Logf          func(format string, args ...any)
}

// Chain wraps handler in the filters, outermost first: recovery, request
// info, authentication, authorisation, deadline, warnings.
func Chain(handler http.Handler, cfg Config) http.Handler {
	if cfg.Authorizer == nil {
		cfg.Authorizer = AlwaysAllow{}
	}
	h := withMetrics(authorize(withRequestDeadline(withWarnings(handler)), cfg.Authorizer))
	h = cfg.Authenticator.Middleware(h, unauthorized)
	h = withRequestInfo(h)
	return recoverPanics(h, cfg.Logf)
}

// recoverPanics turns a panic in next into a 500 Status instead of a
// dropped connection, and logs it.
func recoverPanics(next http.Handler, logf func(format string, args ...any)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				logf("panic serving %s %s: %v\n%s", r.Method, r.URL.Path, p, debug.Stack())
				respond.Error(w, r, apierrors.NewInternalError(fmt.Errorf("%v", p)))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// withRequestInfo parses the request's URL and method once.
func withRequestInfo(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(request.WithInfo(r.Context(), request.Parse(r))))
	})
}

// unauthorized answers a request without valid credentials.
func unauthorized(w http.ResponseWriter, r *http.Request) {
	respond.Error(w, r, apierrors.NewUnauthorized("Unauthorized"))
}

// authorize refuses what the user may not do with kube-apiserver's 403.
func authorize(next http.Handler, authz Authorizer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, authenticated := auth.UserFrom(r.Context())
		if !authenticated && auth.IsPublicPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		info, _ := request.From(r.Context())
		allowed, reason, err := authz.Authorize(r.Context(), user, info)
		if err != nil {
			respond.Error(w, r, apierrors.NewInternalError(err))
			return
		}
		if !allowed {
			respond.Error(w, r, forbidden(user, info, r.URL.Path, reason))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// forbidden is kube-apiserver's 403 for an authorisation refusal.
func forbidden(user *auth.User, info *request.Info, path, reason string) error {
	var msg string
	var gr schema.GroupResource
	if info.IsResourceRequest {
		gr = schema.GroupResource{Group: info.Group, Resource: info.Resource}
		if info.Subresource != "" {
			gr.Resource += "/" + info.Subresource
		}
		scope := "at the cluster scope"
		if info.Namespace != "" {
			scope = fmt.Sprintf("in the namespace %q", info.Namespace)
		}
		msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q %s", user.Name, info.Verb, gr.Resource, info.Group, scope)
	} else {
		msg = fmt.Sprintf("User %q cannot %s path %q", user.Name, info.Verb, path)
	}
	if reason != "" {
		msg += ": " + reason
	}
	return apierrors.NewForbidden(gr, info.Name, errors.New(msg))
}
