package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/controlplane/reconcilers"
	"k8s.io/utils/clock"

	"github.com/kapi-dev/kapi/internal/builtin"
	"github.com/kapi-dev/kapi/internal/pipeline"
)

// kubernetesServiceInterval is how often the kubernetes Service and its
// endpoints are put back if they were deleted, and the server's address
// if it was taken out of the endpoints, as kube-apiserver's bootstrap
// controller does.
const kubernetesServiceInterval = 10 * time.Second

// serviceIPRepairTicks is how many kubernetesServiceIntervals pass between
// two repairs of the ClusterIP allocations (every 3 minutes, as
// kube-apiserver's repair controller).
const serviceIPRepairTicks = 18

// keepKubernetesService publishes the kubernetes Service's endpoints with
// the server's port, then repairs the Service and its endpoints, and now
// and then the ClusterIP allocations, until ctx ends.
func keepKubernetesService(ctx context.Context, writes *pipeline.Pipeline, endpoints *kubernetesEndpoints, cidr netip.Prefix, port int32, clk clock.WithTicker, logger *slog.Logger) {
	if err := endpoints.reconcile(true); err != nil && ctx.Err() == nil {
		logger.Error("publishing the kubernetes service's endpoints failed", "err", err)
	}
	tick := clk.NewTicker(kubernetesServiceInterval)
	defer tick.Stop()
	for ticks := 1; ; ticks++ {
		select {
		case <-ctx.Done():
			if err := endpoints.remove(); err != nil {
				logger.Warn("removing the server from the kubernetes service's endpoints failed", "err", err)
			}
			return
		case <-tick.C():
			if err := builtin.EnsureKubernetesService(ctx, writes, cidr, port); err != nil && ctx.Err() == nil {
				logger.Error("repairing the kubernetes service failed", "err", err)
			}
			if err := endpoints.reconcile(false); err != nil && ctx.Err() == nil {
				logger.Error("repairing the kubernetes service's endpoints failed", "err", err)
			}
			if ticks%serviceIPRepairTicks != 0 {
				continue
			}
			if err := builtin.RepairServiceIPs(ctx, writes, cidr); err != nil && ctx.Err() == nil {
				logger.Error("repairing ClusterIP allocations failed", "err", err)
			}
		}
	}
}

// kubernetesEndpoints keeps the Endpoints and EndpointSlice of the
// kubernetes Service naming the advertised addresses of the servers
// sharing storage, with kube-apiserver's own lease endpoint reconciler.
// A nil *kubernetesEndpoints keeps nothing: there is no address an
// endpoint may name.
type kubernetesEndpoints struct {
	reconciler reconcilers.EndpointReconciler
	ip         net.IP
	ports      []corev1.EndpointPort
}

// newKubernetesEndpoints resolves the advertised address as kube-apiserver
// does. An advertised address given explicitly must be one an endpoint may
// name; one chosen for the user that may not (a host with loopback only)
// leaves the Service without endpoints.
// peerAddress is the advertised address and port, or "" when the server
// advertises none.
func (e *kubernetesEndpoints) peerAddress() string {
	if e == nil || e.ip == nil {
		return ""
	}
	return net.JoinHostPort(e.ip.String(), strconv.Itoa(int(e.ports[0].Port)))
}

func newKubernetesEndpoints(config *rest.Config, leases reconcilers.Leases, advertise, listenHost string, port int32, logger *slog.Logger) (*kubernetesEndpoints, error) {
	config = rest.CopyConfig(config)
	config.WarningHandler = rest.NoWarnings{} // v1 Endpoints is deprecated; kapi keeps it as kube-apiserver does
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	adapter := reconcilers.NewEndpointsAdapter(client.CoreV1(), client.DiscoveryV1())
	e := &kubernetesEndpoints{
		reconciler: reconcilers.NewLeaseEndpointReconciler(adapter, leases),
		ports:      []corev1.EndpointPort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: port}},
	}
	if advertise != "" {
		if e.ip = net.ParseIP(advertise); e.ip == nil {
			return nil, fmt.Errorf("advertise address %q is not an IP address", advertise)
		}
		if err := e.reconciler.ValidateIP(e.ip); err != nil {
			return nil, fmt.Errorf("advertise address %s: %w", advertise, err)
		}
		return e, nil
	}
	if e.ip, err = utilnet.ResolveBindAddress(net.ParseIP(listenHost)); err != nil {
		logger.Warn("the kubernetes service has no endpoints", "reason", "no address to advertise", "err", err)
		return nil, nil
	}
	if err := e.reconciler.ValidateIP(e.ip); err != nil {
		logger.Warn("the kubernetes service has no endpoints", "reason", "the address cannot be advertised", "address", e.ip.String(), "err", err)
		return nil, nil
	}
	return e, nil
}

// reconcile puts the server's address in the endpoints. The ports are set
// to the server's when they are asked for, as kube-apiserver does as it
// starts, and left as they are later: servers sharing storage that listen
// on different ports would take turns rewriting them.
func (e *kubernetesEndpoints) reconcile(ports bool) error {
	if e == nil {
		return nil
	}
	return e.reconciler.ReconcileEndpoints("kubernetes", e.ip, e.ports, ports)
}

// remove takes the server's address out of the endpoints, as a stopping
// kube-apiserver does, so that clients stop being sent to it.
func (e *kubernetesEndpoints) remove() error {
	if e == nil {
		return nil
	}
	e.reconciler.StopReconciling()
	return e.reconciler.RemoveEndpoints("kubernetes", e.ip, e.ports)
}
