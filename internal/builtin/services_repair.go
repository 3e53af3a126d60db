package builtin

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/internal/pipeline"
)

// releaseGrace is how old an IPAddress without its Service must be to be
// released.
const releaseGrace = time.Minute

// RepairServiceIPs makes the IPAddress objects match the Services'
// ClusterIPs, as kube-apiserver's ClusterIP repair controller does: a
// ClusterIP without its IPAddress gets one (a write that stored the
// Service but stopped before its IPAddress, say), and an IPAddress that
// names a Service which no longer has that ClusterIP is released. It
// leaves alone IPAddresses of other owners, and ones younger than
// releaseGrace: a Service's IPAddress is written just before the Service.
func RepairServiceIPs(ctx context.Context, p *pipeline.Pipeline, cidr netip.Prefix) error {
	snap := p.Registry().Snapshot()
	serviceList, err := snap.Lookup(servicesGVR).List(ctx, "", nil)
	if err != nil {
		return err
	}
	addresses, err := snap.Lookup(ipAddressesGVR).List(ctx, "", nil)
	if err != nil {
		return err
	}
	s := newServices(p, cidr)
	ranges := s.serviceRanges(ctx)
	held := map[string]types.NamespacedName{} // ClusterIP → Service
	for _, svc := range serviceList.(*corev1.ServiceList).Items {
		for _, ip := range svc.Spec.ClusterIPs {
			if addr, err := netip.ParseAddr(ip); err == nil && slices.ContainsFunc(ranges, func(r netip.Prefix) bool { return r.Contains(addr) }) {
				held[ip] = types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
			}
		}
	}
	recorded := map[string]bool{}
	for _, address := range addresses.(*networkingv1.IPAddressList).Items {
		ref := address.Spec.ParentRef
		if ref == nil || ref.Resource != "services" || address.Labels["ipaddress.kubernetes.io/managed-by"] != "ipallocator.k8s.io" {
			continue
		}
		if owner, ok := held[address.Name]; ok && owner.Namespace == ref.Namespace && owner.Name == ref.Name {
			recorded[address.Name] = true
			continue
		}
		if time.Since(address.CreationTimestamp.Time) >= releaseGrace {
			s.deleteAddress(ctx, &address)
		}
	}
	for ip, owner := range held {
		if recorded[ip] {
			continue
		}
		svc := &corev1.Service{}
		svc.Namespace, svc.Name = owner.Namespace, owner.Name
		if err := s.claimIP(ctx, svc, netip.MustParseAddr(ip), false); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("recording ClusterIP %s of %s: %w", ip, owner, err)
		}
	}
	return nil
}
