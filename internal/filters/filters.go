// Package filters is the chain every request passes before the handlers:
// panic recovery, the request's info parsed once into its context,
// authentication, impersonation, priority and fairness and
// authorisation. A filter answers with a Status and stops the request,
// or passes it on; filters never touch objects or storage.
package filters

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	endpointsfilters "k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/filters/impersonation"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/features"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/request"
	"github.com/kapi-dev/kapi/internal/respond"
)

// Authenticator puts the user of a request in its context (auth.UserFrom)
// and hands a request it finds none for to unauthorized.
type Authenticator interface {
	Middleware(next http.Handler, unauthorized func(http.ResponseWriter, *http.Request)) http.Handler
}

// Config is what the chain needs.
type Config struct {
	Authenticator Authenticator
	// Authorizer decides requests, and who may impersonate whom
	// (default: everything is allowed).
	Authorizer authorizer.Authorizer
	// Audit, when set, records requests as its policy says.
	Audit *Audit
	// Fairness, when set, queues requests by priority and fairness (after
	// impersonation, before authorisation, as in kube-apiserver).
	Fairness func(http.Handler) http.Handler
	// Logger gets the panics the chain recovers from (default: slog's
	// default logger).
	Logger *slog.Logger
	// Done, when closed, ends the goroutines the chain keeps to serve
	// requests on; requests after it are served where they arrived.
	Done <-chan struct{}
}

// Audit is where audit events go and which requests make them.
type Audit struct {
	Sink   audit.Sink
	Policy audit.PolicyRuleEvaluator
}

// Chain wraps handler in the filters, outermost first, in kube-apiserver's
// order: Cache-Control, the audit ID, recovery, the time received, warnings, request info,
// latency trackers, authentication, audit, impersonation, priority and fairness, metrics,
// authorisation, deadline.
func Chain(handler http.Handler, cfg Config) http.Handler {
	if cfg.Authorizer == nil {
		cfg.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Audit == nil {
		cfg.Audit = &Audit{}
	}
	h := withMetrics(authorize(withRequestDeadline(handler), cfg.Authorizer))
	if cfg.Fairness != nil {
		h = cfg.Fairness(h)
	}
	h = withImpersonation(h, cfg.Authorizer)
	h = endpointsfilters.WithAudit(h, cfg.Audit.Sink, cfg.Audit.Policy, LongRunning)
	// kube's 401, which also closes an HTTP/2 connection after it.
	failed := endpointsfilters.WithFailedAuthenticationAudit(endpointsfilters.Unauthorized(codecs.Factory), cfg.Audit.Sink, cfg.Audit.Policy)
	h = cfg.Authenticator.Middleware(h, failed.ServeHTTP)
	// The latency trackers (kube's filter) note the time spent queued and
	// in webhooks, which the request's SLI duration leaves out.
	h = recoverPanics(withRequestInfo(endpointsfilters.WithLatencyTrackers(withWarmStacks(h, cfg.Done))), cfg.Logger)
	// Every answer says no cache may keep it, unless its handler said
	// otherwise (kube-apiserver's filter).
	return endpointsfilters.WithCacheControl(endpointsfilters.WithAuditInit(h))
}

// LongRunning tells the requests that stream (watches, proxied
// connections, exec and the like), as kube-apiserver's check does: audit
// records them when they start and again when they end, and priority and
// fairness frees their seat once they have started.
var LongRunning = genericfilters.BasicLongRunningRequestCheck(
	sets.NewString("watch", "proxy"), sets.NewString("attach", "exec", "proxy", "log", "portforward"))

// withImpersonation lets a user act as another (Impersonate-User,
// -Group, -Uid, -Extra-*) when the authorizer allows the impersonate verb,
// with kube-apiserver's own filter: the constrained form while its feature
// is on, as in kube-apiserver.
func withImpersonation(next http.Handler, authz authorizer.Authorizer) http.Handler {
	impersonating := impersonation.WithImpersonation(next, authz, codecs.Factory)
	if utilfeature.DefaultFeatureGate.Enabled(features.ConstrainedImpersonation) {
		impersonating = impersonation.WithConstrainedImpersonation(next, authz, codecs.Factory)
	}
	return impersonating
}

// recoverPanics turns a panic in next into a 500 Status instead of a
// dropped connection, and logs it.
func recoverPanics(next http.Handler, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				stack := debug.Stack()
				if onWorker, ok := p.(*workerPanic); ok {
					p, stack = onWorker.value, onWorker.stack
				}
				logger.Error("panic serving a request", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(stack))
				respond.Error(w, r, apierrors.NewInternalError(fmt.Errorf("%v", p)))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// withRequestInfo notes when the request arrived (audit and the metrics
// read it), lets the filters after it and the handlers answer with
// warnings (kube-apiserver's recorder, which drops repeats and truncates
// them past its limits; as in kube-apiserver, authentication's reach the
// client too, such as a bearer token after two spaces), and parses the
// request's URL and method once, into kapi's form and into
// kube-apiserver's (which the authorizers, impersonation and the metrics
// read): one copy of the request for all.
func withRequestInfo(next http.Handler) http.Handler {
	return endpointsfilters.WithWarningRecorder(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := genericapirequest.WithReceivedTimestamp(r.Context(), time.Now())
		info := request.Parse(r)
		ctx = request.WithInfo(ctx, info)
		ctx = genericapirequest.WithRequestInfo(ctx, kubeRequestInfo(r, info))
		next.ServeHTTP(w, r.WithContext(ctx))
	}))
}

// kubeRequestInfo is kapi's request info as k8s.io/apiserver's metrics
// read it.
func kubeRequestInfo(r *http.Request, info *request.Info) *genericapirequest.RequestInfo {
	parts := []string{}
	if info.Resource != "" {
		parts = append(parts, info.Resource)
		if info.Name != "" {
			parts = append(parts, info.Name)
		}
		if info.Subresource != "" {
			parts = append(parts, info.Subresource)
		}
	}
	labelSelector, fieldSelector := selectors(r, info)
	// Kube names no group for a request of a path that is not a
	// resource's (/apis/apps/v1): its refusal names none either.
	group := info.Group
	if !info.IsResourceRequest {
		group = ""
	}
	return &genericapirequest.RequestInfo{
		IsResourceRequest: info.IsResourceRequest,
		Path:              r.URL.Path,
		Verb:              info.Verb,
		APIPrefix:         info.Prefix,
		APIGroup:          group,
		APIVersion:        info.Version,
		Namespace:         info.Namespace,
		Resource:          info.Resource,
		Subresource:       info.Subresource,
		Name:              requestedName(r, info, fieldSelector),
		Parts:             parts,
		LabelSelector:     labelSelector,
		FieldSelector:     fieldSelector,
	}
}

// requestedName is the name a request is about: the one in its path, or,
// for a list or watch that selects one object by metadata.name, that
// name, as kube-apiserver's request info has it. Authorisation (a role
// limited to resourceNames allows watching its object this way) and
// audit's objectRef see it; the handlers serve the path. As kube's, the
// name is taken only when all of the list's options parse.
func requestedName(r *http.Request, info *request.Info, fieldSelector string) string {
	if info.Name != "" || fieldSelector == "" || (info.Verb != "list" && info.Verb != "watch") {
		return info.Name
	}
	var opts metainternalversion.ListOptions
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, &opts); err != nil || opts.FieldSelector == nil {
		return ""
	}
	name, ok := opts.FieldSelector.RequiresExactMatch("metadata.name")
	if !ok || len(path.IsValidPathSegmentName(name)) > 0 {
		return ""
	}
	return name
}

// selectors are a list's selector parameters, which kube-apiserver gives
// its authorizers (a rule may allow a list only with a field selector); a
// watch through the deprecated /watch/ prefix reads none, as in kube.
func selectors(r *http.Request, info *request.Info) (label, field string) {
	if info.WatchPath {
		return "", ""
	}
	switch info.Verb {
	case "list", "watch", "deletecollection":
		q := r.URL.Query()
		return q.Get("labelSelector"), q.Get("fieldSelector")
	}
	return "", ""
}

// authorize refuses what the user may not do with kube-apiserver's 403,
// with kube's own filter (its audit annotations and authorization
// metrics).
func authorize(next http.Handler, authz authorizer.Authorizer) http.Handler {
	return endpointsfilters.WithAuthorization(next, authz, codecs.Factory)
}
