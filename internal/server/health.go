package server

import (
	"errors"
	"net/http"
	"sync/atomic"

	"k8s.io/apiserver/pkg/server/healthz"
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
}

// install adds the three endpoints and their per-check paths to mux.
func (h *health) install(mux *http.ServeMux) {
	common := []healthz.HealthChecker{
		healthz.PingHealthz,
		healthz.LogHealthz,
		healthz.NamedCheck("etcd", h.storage),
		healthz.NamedCheck("poststarthook/bootstrap-controller", h.bootstrap),
	}
	healthz.InstallHandler(mux, common...)
	healthz.InstallLivezHandler(mux, common...)
	readyz := append(common,
		healthz.NamedCheck("etcd-readiness", h.storage),
		healthz.NamedCheck("informer-sync", h.caches),
		healthz.NamedCheck("shutdown", h.shutdown),
	)
	healthz.InstallReadyzHandler(mux, readyz...)
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
