package server

import (
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"k8s.io/apiserver/pkg/server/healthz"

	"github.com/kapi-dev/kapi/internal/flowcontrol"
)

// health is what /healthz, /livez and /readyz report, with kube-apiserver's
// check names and its output (k8s.io/apiserver's healthz handlers:
// `?verbose` lists the checks, `?exclude=NAME` skips one, /readyz/NAME
// runs one).
type health struct {
	server *Server
	// bootstrapped is set once the bootstrap namespaces exist.
	bootstrapped atomic.Bool
	// shuttingDown is set when Shutdown begins: /readyz fails from then on
	// so that load balancers stop sending requests.
	shuttingDown atomic.Bool
	// hooks are the post-start hooks kube-apiserver reports whose
	// equivalent kapi has finished, by name.
	hooks sync.Map
}

// The post-start hooks of kube-apiserver that kapi has an equivalent of,
// reported as kube-apiserver reports them (poststarthook/NAME): each is
// done once that part of kapi's start has finished.
const (
	hookStartInformers     = "generic-apiserver-start-informers"
	hookStorageReadiness   = "storage-readiness"
	hookSystemNamespaces   = "start-system-namespaces-controller"
	hookPriorityClasses    = "scheduling/bootstrap-system-priority-classes"
	hookAuthenticationInfo = "start-cluster-authentication-info-controller"
	hookAdmission          = "start-apiserver-admission-initializer"
	hookServiceIPRepair    = "start-service-ip-repair-controllers"
	hookBootstrapRoles     = "rbac/bootstrap-roles"
	hookLegacyTokens       = "start-legacy-token-tracking-controller"
	hookObjectCounts       = "storage-object-count-tracker-hook"
	hookIdentityLease      = "start-kube-apiserver-identity-lease-controller"
	hookIdentityLeaseGC    = "start-kube-apiserver-identity-lease-garbage-collector"
)

// aggregatorHooks are done once the aggregation layer runs.
var aggregatorHooks = []string{
	"start-kube-aggregator-informers", "apiservice-registration-controller", "apiservice-discovery-controller",
	"apiservice-status-local-available-controller", "apiservice-status-remote-available-controller",
	"kube-apiserver-autoregistration", "apiservice-openapi-controller", "apiservice-openapiv3-controller",
}

// apiextensionsHooks are done once custom resources are served.
var apiextensionsHooks = []string{"start-apiextensions-informers", "start-apiextensions-controllers", "crd-informer-synced"}

// checkOrder is the order kube-apiserver 1.37 reports its post-start hooks
// (and, among them, its bootstrap controller and the completion of its
// APIServices' registration) in.
var checkOrder = []string{
	hookAdmission, hookStartInformers, flowcontrol.HookConfigConsumer, flowcontrol.HookFilter, hookObjectCounts,
	"start-apiextensions-informers", "start-apiextensions-controllers", "crd-informer-synced",
	hookSystemNamespaces, hookAuthenticationInfo, hookIdentityLease, hookIdentityLeaseGC, hookStorageReadiness,
	hookLegacyTokens, hookServiceIPRepair, hookBootstrapRoles, hookPriorityClasses, flowcontrol.HookConfigProducer,
	checkBootstrap,
	"start-kube-aggregator-informers", "apiservice-status-local-available-controller",
	"apiservice-status-remote-available-controller", "apiservice-registration-controller", "apiservice-discovery-controller",
	"kube-apiserver-autoregistration", checkAutoregister, "apiservice-openapi-controller", "apiservice-openapiv3-controller",
}

// The checks among the hooks that are not hooks of kapi's start.
const (
	checkBootstrap    = "poststarthook/bootstrap-controller"
	checkAutoregister = "autoregister-completion"
)

// done marks hooks finished.
func (h *health) done(names ...string) {
	for _, name := range names {
		h.hooks.Store(name, true)
	}
}

// hookChecks are the named checks of the post-start hooks, in
// kube-apiserver's order.
func (h *health) hookChecks() []healthz.HealthChecker {
	var checks []healthz.HealthChecker
	for _, name := range checkOrder {
		switch name {
		case checkBootstrap:
			checks = append(checks, healthz.NamedCheck(name, h.bootstrap))
		case checkAutoregister:
			checks = append(checks, healthz.NamedCheck(name, h.apiServices))
		default:
			checks = append(checks, healthz.NamedCheck("poststarthook/"+name, func(*http.Request) error {
				if _, ok := h.hooks.Load(name); !ok {
					return errors.New("not finished")
				}
				return nil
			}))
		}
	}
	return checks
}

// install adds the three endpoints and their per-check paths to mux, with
// kube-apiserver's checks in its order.
func (h *health) install(mux *http.ServeMux) {
	live, ready := h.checks()
	healthz.InstallHandler(mux, live...)
	healthz.InstallLivezHandler(mux, live...)
	healthz.InstallReadyzHandler(mux, ready...)
}

// checks are the checks of /healthz and /livez, and those of /readyz.
func (h *health) checks() (live, ready []healthz.HealthChecker) {
	first := []healthz.HealthChecker{healthz.PingHealthz, healthz.LogHealthz, healthz.NamedCheck("etcd", h.storage)}
	live = append(slices.Clone(first), h.hookChecks()...)
	ready = append(first,
		healthz.NamedCheck("etcd-readiness", h.storage),
		healthz.NamedCheck("informer-sync", h.caches),
	)
	ready = append(ready, h.hookChecks()...)
	ready = append(ready, healthz.NamedCheck("shutdown", h.shutdown))
	return live, ready
}

// paths are the paths of the three endpoints and of each of their checks.
func (h *health) paths() []string {
	live, ready := h.checks()
	var paths []string
	for _, endpoint := range []struct {
		path   string
		checks []healthz.HealthChecker
	}{{"/healthz", live}, {"/livez", live}, {"/readyz", ready}} {
		paths = append(paths, endpoint.path)
		for _, c := range endpoint.checks {
			paths = append(paths, endpoint.path+"/"+c.Name())
		}
	}
	return paths
}

// storage fails when the store can no longer make writes durable.
func (h *health) storage(*http.Request) error {
	if s, ok := h.server.store.(interface{ Healthy() error }); ok {
		return s.Healthy()
	}
	return nil
}

func (h *health) bootstrap(*http.Request) error {
	if !h.bootstrapped.Load() {
		return errors.New("not finished")
	}
	return nil
}

// apiServices fails until every local APIService is available.
func (h *health) apiServices(*http.Request) error {
	agg := h.server.aggregator.Load()
	if agg == nil {
		return errors.New("not started")
	}
	return agg.LocalAvailable()
}

// caches fails until every watch cache has been built.
func (h *health) caches(*http.Request) error {
	if h.server.reg == nil || !h.server.reg.Ready() {
		return errors.New("watch caches not ready")
	}
	return nil
}

func (h *health) shutdown(*http.Request) error {
	if h.shuttingDown.Load() {
		return errors.New("process is shutting down")
	}
	return nil
}
