package aggregator

import (
	"net/http"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/proxy"
	apiserverproxy "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/client-go/transport"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationv1helper "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"
	"k8s.io/kube-aggregator/pkg/controllers/status/remote"

	"github.com/kapi-dev/kapi/internal/auth"
	"github.com/kapi-dev/kapi/internal/request"
)

// Handler serves the aggregated APIs and hands everything else to local:
// requests under /apis/GROUP/VERSION of an APIService backed by a Service
// go to that Service, and the discovery documents under /apis name the
// aggregated group-versions besides kapi's own.
func (a *Aggregator) Handler(local http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/openapi/v2" {
			a.serveOpenAPIV2(w, r, local)
			return
		}
		if strings.HasPrefix(r.URL.Path, openAPIV3Prefix) {
			a.serveOpenAPIV3(w, r, local)
			return
		}
		req, ok := request.From(r.Context())
		if !ok || req.Prefix != "apis" {
			local.ServeHTTP(w, r)
			return
		}
		switch {
		case req.Group == "":
			a.serveGroupList(w, r, local)
		case req.Version == "":
			a.serveGroup(w, r, req.Group, local)
		default:
			if svc := a.remoteAPIService(req.Group, req.Version); svc != nil {
				a.proxy(w, r, svc)
				return
			}
			local.ServeHTTP(w, r)
		}
	})
}

// remoteAPIService is the APIService of group/version if a Service
// serves it, else nil. The aggregator's own group is always served here,
// whatever its APIService says, as kube-aggregator serves it before any
// proxy (an APIService sending it elsewhere would leave nothing able to
// change it back).
func (a *Aggregator) remoteAPIService(group, version string) *apiregistrationv1.APIService {
	if group == apiregistrationv1.GroupName {
		return nil
	}
	svc, err := a.apiServices.Get(version + "." + group)
	if err != nil || svc.Spec.Service == nil {
		return nil
	}
	return svc
}

// proxy passes r to an endpoint of svc's Service, as kube-aggregator's
// proxy does: over TLS verified with the APIService's caBundle, with the
// front proxy's client certificate and the requester's identity in the
// X-Remote-* headers. Its errors are plain text, as kube-aggregator's.
func (a *Aggregator) proxy(w http.ResponseWriter, r *http.Request, svc *apiregistrationv1.APIService) {
	if !apiregistrationv1helper.IsAPIServiceConditionTrue(svc, apiregistrationv1.Available) {
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	user, ok := auth.UserFrom(r.Context())
	if !ok {
		http.Error(w, "missing user", http.StatusInternalServerError)
		return
	}
	endpoint, err := a.resolver.ResolveEndpoint(svc.Spec.Service.Namespace, svc.Spec.Service.Name, port(svc))
	if err != nil {
		a.cfg.Logger.Warn("aggregator cannot resolve an APIService's service", "apiservice", svc.Name, "namespace", svc.Spec.Service.Namespace, "service", svc.Spec.Service.Name, "err", err)
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	roundTripper, err := a.transport(svc)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	location := &url.URL{Scheme: "https", Host: endpoint.Host, Path: r.URL.Path, RawQuery: r.URL.Query().Encode()}
	out, cancel := apiserverproxy.NewRequestForProxy(location, r)
	defer cancel()
	// The requester's credentials are kapi's to check, not the
	// aggregated server's: it trusts the front proxy's headers instead.
	out.Header.Del("Authorization")
	upgrade := httpstream.IsUpgradeRequest(r)
	if upgrade {
		// An upgrade dials directly, past the round tripper's headers.
		transport.SetAuthProxyHeaders(out, user.GetName(), user.GetUID(), user.GetGroups(), user.GetExtra())
	}
	roundTripper = transport.NewAuthProxyRoundTripper(user.GetName(), user.GetUID(), user.GetGroups(), user.GetExtra(), roundTripper)
	handler := proxy.NewUpgradeAwareHandler(location, roundTripper, true, upgrade, errorResponder{w})
	// kube-aggregator's --aggregator-reject-forwarding-redirect, on by
	// default: a backend's redirect is not passed on to the client.
	handler.RejectForwardingRedirects = true
	handler.ServeHTTP(w, out)
}

// transport is the round tripper to svc's Service; client-go caches
// transports by TLS settings, so this is cheap after the first request.
func (a *Aggregator) transport(svc *apiregistrationv1.APIService) (http.RoundTripper, error) {
	return transport.New(remote.BuildTransportConfig(nil, a.cfg.ProxyCertPEM, a.cfg.ProxyKeyPEM, svc))
}

// port is the Service port an APIService names (443 unless given).
func port(svc *apiregistrationv1.APIService) int32 {
	if svc.Spec.Service.Port != nil {
		return *svc.Spec.Service.Port
	}
	return 443
}

// errorResponder reports a failed proxy round trip as kube-aggregator
// does: a 503 with the error text.
type errorResponder struct{ w http.ResponseWriter }

func (e errorResponder) Error(_ http.ResponseWriter, _ *http.Request, err error) {
	http.Error(e.w, err.Error(), http.StatusServiceUnavailable)
}
