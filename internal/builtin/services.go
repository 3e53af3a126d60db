package builtin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/validation"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
)

// Services get their ClusterIP and node ports from the server, as in
// kube-apiserver: each ClusterIP is recorded as a networking.k8s.io/v1
// IPAddress named after it, so two Services never share one, and node ports
// are chosen among those no Service uses and claimed in storage until the
// Service holding them is stored (nodePortClaims).

// DefaultServiceCIDR is the range ClusterIPs come from unless the server
// is given another (kube-apiserver's --service-cluster-ip-range; this is
// kubeadm's and kind's); its first address is kept for the kubernetes
// Service.
var DefaultServiceCIDR = netip.MustParsePrefix("10.96.0.0/12")

// IPNet is cidr as the default ServiceCIDR's controller takes it.
func IPNet(cidr netip.Prefix) net.IPNet {
	return net.IPNet{IP: cidr.Addr().AsSlice(), Mask: net.CIDRMask(cidr.Bits(), cidr.Addr().BitLen())}
}

const (
	nodePortMin      = 30000
	nodePortMax      = 32767
	allocateAttempts = 64
)

var (
	servicesGVR     = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	ipAddressesGVR  = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ipaddresses"}
	serviceCIDRsGVR = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "servicecidrs"}
)

// services allocates what Services hold, through the write pipeline.
type services struct {
	p         *pipeline.Pipeline
	cidr      netip.Prefix // the default range
	nodePorts *nodePortClaims
	choosing  sync.Mutex // one write's choice of node ports at a time
}

func serviceHooks(p *pipeline.Pipeline, cidr netip.Prefix, k *kubelets) registry.Hooks {
	s := newServices(p, cidr)
	return registry.Hooks{BeforeCreate: s.allocateService, AfterCreate: s.storedService, BeforeUpdate: s.keepServiceAllocations,
		AfterUpdate: s.afterServiceUpdate, AfterDelete: s.releaseService, OnRead: showService,
		Connects: map[string]rest.Connecter{"proxy": serviceProxy(p, k)}}
}

func newServices(p *pipeline.Pipeline, cidr netip.Prefix) *services {
	return &services{p: p, cidr: cmp.Or(cidr, DefaultServiceCIDR), nodePorts: newNodePortClaims(p.Registry().Storage())}
}

// showService is how kube-apiserver's Service storage shows a stored
// Service: an ExternalName Service has no internal traffic policy (older
// releases defaulted one, which stays in storage).
func showService(obj runtime.Object) {
	if svc, ok := obj.(*corev1.Service); ok && svc.Spec.Type == corev1.ServiceTypeExternalName {
		svc.Spec.InternalTrafficPolicy = nil
	}
}

// allocateService fills a new Service's ClusterIP and node ports. It
// returns a release function that undoes the allocation if the Service is
// not stored after all.
func (s *services) allocateService(ctx context.Context, obj runtime.Object, dry bool) (func(), error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return func() {}, nil
	}
	syncClusterIPs(&svc.Spec)
	if err := checkAddressFields(svc, nil); err != nil {
		return nil, err
	}
	// The cluster IP first, as kube's allocators: a Service asking for a
	// taken IP and a taken node port is refused for the IP.
	releaseIP, err := s.allocateClusterIP(ctx, svc, dry)
	if err != nil {
		return nil, err
	}
	releasePorts, err := s.allocateNodePorts(ctx, svc, nil, dry)
	if err != nil {
		releaseIP()
		return nil, err
	}
	return func() { releaseIP(); releasePorts() }, nil
}

func (s *services) allocateClusterIP(ctx context.Context, svc *corev1.Service, dry bool) (func(), error) {
	noop := func() {}
	spec := &svc.Spec
	syncClusterIPs(spec)
	if spec.Type == corev1.ServiceTypeExternalName {
		return noop, nil
	}
	if spec.ClusterIP == "" && len(spec.ClusterIPs) > 0 {
		spec.ClusterIP = spec.ClusterIPs[0]
	}
	if headlessWithoutSelector(spec) {
		spec.ClusterIPs = []string{corev1.ClusterIPNone}
		return noop, setHeadlessFamilies(svc, nil)
	}
	if err := checkFamilies(svc); err != nil {
		return nil, err
	}
	if spec.ClusterIP == corev1.ClusterIPNone {
		spec.ClusterIPs = []string{corev1.ClusterIPNone}
		setSingleStack(spec)
		return noop, nil
	}
	ranges := s.serviceRanges(ctx)
	var ip netip.Addr
	if spec.ClusterIP != "" {
		requested, err := netip.ParseAddr(spec.ClusterIP)
		if err == nil {
			err = checkRequestedIP(requested, ranges, dry)
		}
		if err != nil {
			return nil, clusterIPInvalid(svc, fmt.Sprintf("failed to allocate IP %s: %s", spec.ClusterIP, allocationDetail(err)))
		}
		if err := s.claimIP(ctx, svc, requested, dry); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return nil, clusterIPInvalid(svc, fmt.Sprintf("failed to allocate IP %s: provided IP is already allocated", requested))
			}
			return nil, err
		}
		ip = requested
	} else {
		var err error
		if ip, err = s.claimFreeIP(ctx, svc, ranges, dry); err != nil {
			return nil, err
		}
	}
	spec.ClusterIP = ip.String()
	spec.ClusterIPs = []string{ip.String()}
	setSingleStack(spec)
	if dry {
		return noop, nil
	}
	return func() { s.releaseIP(context.WithoutCancel(ctx), svc, ip.String()) }, nil
}

// syncClusterIPs gives clusterIPs the clusterIP a client older than them
// set alone, as kube's normalisation before allocating does, whatever the
// type: validation then refuses the addresses of an ExternalName Service.
func syncClusterIPs(spec *corev1.ServiceSpec) {
	if spec.ClusterIP != "" && len(spec.ClusterIPs) == 0 {
		spec.ClusterIPs = []string{spec.ClusterIP}
	}
}

// checkAddressFields is kube's allocator's loose check of a Service's
// address fields (clusterIP, clusterIPs, ipFamilies, ipFamilyPolicy)
// before it allocates, with the family policy the allocator would take:
// when it fails, its errors alone are the answer, before the strategy's
// validation could add others.
func checkAddressFields(svc, old *corev1.Service) error {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	after := &api.Service{}
	if err := legacyscheme.Scheme.Convert(svc, after, nil); err != nil {
		return apierrors.NewInternalError(err)
	}
	var before *api.Service
	if old != nil {
		before = &api.Service{}
		if err := legacyscheme.Scheme.Convert(old, before, nil); err != nil {
			return apierrors.NewInternalError(err)
		}
	}
	if after.Spec.IPFamilyPolicy == nil {
		policy := api.IPFamilyPolicySingleStack
		switch {
		case before != nil && before.Spec.IPFamilyPolicy != nil:
			policy = *before.Spec.IPFamilyPolicy
		case after.Spec.ClusterIP == api.ClusterIPNone && len(after.Spec.Selector) == 0:
			policy = api.IPFamilyPolicyRequireDualStack
		}
		after.Spec.IPFamilyPolicy = &policy
	}
	if errs := validation.ValidateServiceClusterIPsRelatedFields(after, before); len(errs) > 0 {
		return apierrors.NewInvalid(api.Kind("Service"), svc.Name, errs)
	}
	if errs := familyFieldErrors(after, before); len(errs) > 0 {
		return apierrors.NewInvalid(api.Kind("Service"), svc.Name, errs)
	}
	return nil
}

// familyFieldErrors are kube's allocator's next checks, on a single-stack
// (IPv4) cluster: a SingleStack policy with two cluster IPs or two
// families (not the two a Service already had: an update to SingleStack
// drops the second), and a cluster IP of a family the cluster lacks, named
// at its index, rather than its family being refused later.
func familyFieldErrors(svc, old *api.Service) field.ErrorList {
	var errs field.ErrorList
	spec := &svc.Spec
	if *spec.IPFamilyPolicy == api.IPFamilyPolicySingleStack {
		policyPath := field.NewPath("spec", "ipFamilyPolicy")
		if len(spec.ClusterIPs) == 2 && (old == nil || !slices.Equal(old.Spec.ClusterIPs, spec.ClusterIPs)) {
			errs = append(errs, field.Invalid(policyPath, spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
		}
		if len(spec.IPFamilies) == 2 && (old == nil || !slices.Equal(old.Spec.IPFamilies, spec.IPFamilies)) {
			errs = append(errs, field.Invalid(policyPath, spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
		}
	}
	for i, ip := range spec.ClusterIPs {
		if ip == api.ClusterIPNone {
			break
		}
		if addr, err := netip.ParseAddr(ip); err == nil && i >= len(spec.IPFamilies) && !addr.Unmap().Is4() {
			errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIPs").Index(i), spec.ClusterIPs, "IPv6 is not configured on this cluster"))
		}
	}
	return errs
}

// checkFamilies refuses, as kube's allocator does on a single-stack
// (IPv4) cluster, a Service that requires dual-stack or asks for another
// family (a headless one without a selector is never asked).
func checkFamilies(svc *corev1.Service) error {
	var errs field.ErrorList
	if p := svc.Spec.IPFamilyPolicy; p != nil && *p == corev1.IPFamilyPolicyRequireDualStack {
		errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), p, "this cluster is not configured for dual-stack services"))
	}
	for i, family := range svc.Spec.IPFamilies {
		if family != corev1.IPv4Protocol {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), family, "not configured on this cluster"))
		}
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, svc.Name, errs)
	}
	return nil
}

// headlessWithoutSelector tells a headless Service whose endpoints its
// users manage (no selector): kube's allocator gives it any families, both
// unless told otherwise, even on a single-stack cluster.
func headlessWithoutSelector(spec *corev1.ServiceSpec) bool {
	return spec.ClusterIP == corev1.ClusterIPNone && len(spec.Selector) == 0
}

// setHeadlessFamilies sets the families of a headless Service without a
// selector (old: its stored state, nil on create) as kube's allocator
// does: the policy is the stored one or RequireDualStack; SingleStack
// keeps one family (an update that changed none drops the second), and
// only SingleStack may drop one; the other family is added to one alone
// unless the policy is SingleStack.
func setHeadlessFamilies(svc, old *corev1.Service) error {
	spec := &svc.Spec
	if spec.IPFamilyPolicy == nil {
		policy := corev1.IPFamilyPolicyRequireDualStack
		if old != nil && old.Spec.IPFamilyPolicy != nil {
			policy = *old.Spec.IPFamilyPolicy
		}
		spec.IPFamilyPolicy = &policy
	}
	policyPath := field.NewPath("spec", "ipFamilyPolicy")
	singleStack := *spec.IPFamilyPolicy == corev1.IPFamilyPolicySingleStack
	var errs field.ErrorList
	switch {
	case old != nil && singleStack && slices.Equal(old.Spec.IPFamilies, spec.IPFamilies) && len(spec.IPFamilies) > 1:
		spec.IPFamilies = spec.IPFamilies[:1]
	case old != nil && !singleStack && len(spec.IPFamilies) > 0 && len(spec.IPFamilies) < len(old.Spec.IPFamilies):
		errs = append(errs, field.Invalid(policyPath, spec.IPFamilyPolicy, "must be 'SingleStack' to release the secondary IP family"))
	}
	if singleStack && len(spec.IPFamilies) == 2 {
		errs = append(errs, field.Invalid(policyPath, spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, svc.Name, errs)
	}
	if len(spec.IPFamilies) == 0 {
		spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if len(spec.IPFamilies) == 1 && !singleStack {
		other := corev1.IPv6Protocol
		if spec.IPFamilies[0] == corev1.IPv6Protocol {
			other = corev1.IPv4Protocol
		}
		spec.IPFamilies = append(spec.IPFamilies, other)
	}
	return nil
}

// unchangedPreferDualStack reports whether an update leaves a
// PreferDualStack Service of a type with cluster IPs as it was in type,
// policy, cluster IPs and families.
func unchangedPreferDualStack(svc, old *corev1.Service) bool {
	preferDual := func(s *corev1.Service) bool {
		return s.Spec.IPFamilyPolicy != nil && *s.Spec.IPFamilyPolicy == corev1.IPFamilyPolicyPreferDualStack
	}
	return svc.Spec.Type == old.Spec.Type && svc.Spec.Type != corev1.ServiceTypeExternalName &&
		preferDual(svc) && (old.Spec.IPFamilyPolicy == nil || preferDual(old)) &&
		slices.Equal(svc.Spec.ClusterIPs, old.Spec.ClusterIPs) && slices.Equal(svc.Spec.IPFamilies, old.Spec.IPFamilies)
}

func setSingleStack(spec *corev1.ServiceSpec) {
	if len(spec.IPFamilies) == 0 {
		spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if spec.IPFamilyPolicy == nil {
		policy := corev1.IPFamilyPolicySingleStack
		spec.IPFamilyPolicy = &policy
	}
}

func clusterIPInvalid(svc *corev1.Service, detail string) error {
	return apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, svc.Name, field.ErrorList{
		field.Invalid(field.NewPath("spec", "clusterIPs"), svc.Spec.ClusterIPs, detail),
	})
}

// claimFreeIP claims a random free address of the first range that has
// one, trying the ranges in a random order, as kube's allocator tries its
// ranges in a map's order (a dry run claims nothing).
func (s *services) claimFreeIP(ctx context.Context, svc *corev1.Service, ranges []netip.Prefix, dry bool) (netip.Addr, error) {
	ranges = slices.Clone(ranges)
	rand.Shuffle(len(ranges), func(i, j int) { ranges[i], ranges[j] = ranges[j], ranges[i] })
	if dry {
		// As kube's allocator, a dry run looks for no free address: it
		// answers the first range's first, its network address.
		return ranges[0].Masked().Addr(), nil
	}
	for _, r := range ranges {
		first, last := hostRange(r)
		span := ipNumber(last) - ipNumber(first) + 1
		for attempt := 0; attempt < allocateAttempts; attempt++ {
			n := ipNumber(first) + rand.Uint32N(span)
			ip := numberIP(n)
			if r == s.cidr && ip == first {
				continue // the kubernetes Service's
			}
			err := s.claimIP(ctx, svc, ip, dry)
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			return ip, err
		}
	}
	return netip.Addr{}, apierrors.NewInternalError(fmt.Errorf("failed to allocate a ClusterIP in %v", ranges))
}

// serviceRanges are the IPv4 ranges ClusterIPs come from, as kube's
// allocator takes them: the default one and those of the ServiceCIDRs
// that are not being deleted and not known to be unready.
func (s *services) serviceRanges(ctx context.Context) []netip.Prefix {
	ranges := []netip.Prefix{s.cidr}
	store := s.p.Registry().Snapshot().Lookup(serviceCIDRsGVR)
	if store == nil {
		return ranges
	}
	list, err := store.List(ctx, "", nil)
	if err != nil {
		return ranges
	}
	items, _ := meta.ExtractList(list)
	for _, item := range items {
		cidr := item.(*networkingv1.ServiceCIDR)
		if cidr.DeletionTimestamp != nil || !serviceCIDRReady(cidr) {
			continue
		}
		for _, c := range cidr.Spec.CIDRs {
			if p, err := netip.ParsePrefix(c); err == nil && p.Addr().Is4() && !slices.Contains(ranges, p.Masked()) {
				ranges = append(ranges, p.Masked())
			}
		}
	}
	return ranges
}

// serviceCIDRReady: a ServiceCIDR without a Ready condition is taken as
// ready, as kube's allocator takes it (the controller may not run).
func serviceCIDRReady(cidr *networkingv1.ServiceCIDR) bool {
	for _, c := range cidr.Status.Conditions {
		if c.Type == networkingv1.ServiceCIDRConditionReady {
			return c.Status == metav1.ConditionTrue
		}
	}
	return true
}

// checkRequestedIP checks a requested ClusterIP as kube's allocators do.
// A write takes it from a range that has it among its host addresses. A
// dry run asks the range whose prefix has it, then the default range,
// which refuses the addresses of other ranges.
func checkRequestedIP(ip netip.Addr, ranges []netip.Prefix, dry bool) error {
	if !dry {
		for _, r := range ranges {
			if first, last := hostRange(r); ip.Is4() && !ip.Less(first) && !last.Less(ip) {
				return nil
			}
		}
		return errMismatchedNetwork
	}
	def := ranges[0]
	for _, r := range append(ranges[1:], def) {
		if first, last := hostRange(r); (r == def || r.Contains(ip)) && (!ip.Is4() || ip.Less(first) || last.Less(ip)) {
			return notInRange{ip: ip, prefix: r}
		}
	}
	return nil
}

var errMismatchedNetwork = errors.New("the provided network does not match the current range")

// notInRange is kube's allocator's refusal of an address outside a
// range's host addresses.
type notInRange struct {
	ip     netip.Addr
	prefix netip.Prefix
}

func (e notInRange) Error() string {
	return fmt.Sprintf("the provided IP (%s) is not in the valid range. The range of valid IPs is %s", e.ip, e.prefix)
}

func allocationDetail(err error) string {
	if _, ok := err.(notInRange); ok {
		return err.Error()
	}
	return errMismatchedNetwork.Error()
}

// hostRange is the first and last host address of an IPv4 range: neither
// its network nor its broadcast address.
func hostRange(p netip.Prefix) (first, last netip.Addr) {
	network := ipNumber(p.Masked().Addr())
	broadcast := network | (1<<(32-p.Bits()) - 1)
	return numberIP(network + 1), numberIP(broadcast - 1)
}

func ipNumber(ip netip.Addr) uint32 {
	b := ip.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func numberIP(n uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// claimIP records ip as the Service's with an IPAddress object. A dry
// run claims nothing and, as kube's allocator, does not look whether
// another Service holds it (only its range was checked).
func (s *services) claimIP(ctx context.Context, svc *corev1.Service, ip netip.Addr, dry bool) error {
	if dry {
		return nil
	}
	store := s.p.Registry().Snapshot().Lookup(ipAddressesGVR)
	address := &networkingv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Name: ip.String(), Labels: map[string]string{
			"ipaddress.kubernetes.io/ip-family":  "IPv4",
			"ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io",
		}},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{
			Resource: "services", Namespace: svc.Namespace, Name: svc.Name,
		}},
	}
	_, err := s.p.Create(ctx, store, address, pipeline.Options{Manager: "kube-apiserver"})
	return err
}

// releaseIP frees ip while svc holds its IPAddress: an address another
// Service has claimed since (after an earlier release) stays its.
func (s *services) releaseIP(ctx context.Context, svc *corev1.Service, ip string) {
	store := s.p.Registry().Snapshot().Lookup(ipAddressesGVR)
	if store == nil {
		return
	}
	obj, err := store.Get(ctx, "", ip)
	if err != nil {
		return
	}
	address, ok := obj.(*networkingv1.IPAddress)
	if !ok {
		return
	}
	if ref := address.Spec.ParentRef; ref == nil || ref.Resource != "services" || ref.Namespace != svc.Namespace || ref.Name != svc.Name {
		return
	}
	s.deleteAddress(ctx, address)
}

// deleteAddress deletes an IPAddress, unless it was made again since it
// was read.
func (s *services) deleteAddress(ctx context.Context, address *networkingv1.IPAddress) {
	if store := s.p.Registry().Snapshot().Lookup(ipAddressesGVR); store != nil {
		s.p.Delete(ctx, store, "", address.Name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &address.UID}}, pipeline.Options{})
	}
}

// storedService releases the claims on the node ports of a Service now
// stored: the Services' list shows them.
func (s *services) storedService(ctx context.Context, obj runtime.Object) {
	if svc, ok := obj.(*corev1.Service); ok {
		s.nodePorts.stored(ctx, svc.UID, nodePortsOf(svc))
	}
}

// releaseService frees what a deleted Service held.
func (s *services) releaseService(ctx context.Context, obj runtime.Object) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return
	}
	if svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		s.releaseIP(ctx, svc, svc.Spec.ClusterIP)
	}
}

// afterServiceUpdate releases the claims on the node ports an updated
// Service is stored with, and frees the ClusterIPs the update took from it
// (a change to type ExternalName, whose strategy drops them).
func (s *services) afterServiceUpdate(ctx context.Context, old, updated runtime.Object) {
	before, ok := old.(*corev1.Service)
	after, ok2 := updated.(*corev1.Service)
	if !ok || !ok2 {
		return
	}
	s.nodePorts.stored(ctx, after.UID, nodePortsOf(after))
	for _, ip := range before.Spec.ClusterIPs {
		if ip != corev1.ClusterIPNone && !slices.Contains(after.Spec.ClusterIPs, ip) {
			s.releaseIP(ctx, before, ip)
		}
	}
}

// keepServiceAllocations carries a Service's ClusterIP, node ports and
// health check node port over an update that leaves them unset, keeps
// clusterIP and clusterIPs in step, as kube-apiserver does before it
// allocates, and allocates what the update newly needs: node ports, a
// health check node port, and a ClusterIP for a Service that was of type
// ExternalName.
func (s *services) keepServiceAllocations(ctx context.Context, next, current runtime.Object, dry bool) (func(), error) {
	noop := func() {}
	svc, ok := next.(*corev1.Service)
	old, ok2 := current.(*corev1.Service)
	if !ok || !ok2 {
		return noop, nil
	}
	patchAllocatedValues(svc, old)
	normalizeClusterIPs(svc, old)
	if err := checkAddressFields(svc, old); err != nil {
		return nil, err
	}
	undo := noop
	switch {
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
	case unchangedPreferDualStack(svc, old):
		// As kube's allocator: a PreferDualStack Service keeps its families
		// whatever the cluster's (a headless one gaining or losing its
		// selector too), until its policy changes.
	case old.Spec.Type == corev1.ServiceTypeExternalName:
		var err error
		if undo, err = s.allocateClusterIP(ctx, svc, dry); err != nil {
			return nil, err
		}
	case headlessWithoutSelector(&svc.Spec):
		if err := setHeadlessFamilies(svc, old); err != nil {
			return nil, err
		}
	default:
		if err := checkFamilies(svc); err != nil {
			return nil, err
		}
		if len(svc.Spec.IPFamilies) == 0 {
			svc.Spec.IPFamilies = old.Spec.IPFamilies
		}
		if svc.Spec.IPFamilyPolicy == nil {
			svc.Spec.IPFamilyPolicy = old.Spec.IPFamilyPolicy
		}
	}
	releasePorts, err := s.allocateNodePorts(ctx, svc, old, dry)
	if err != nil {
		undo()
		return nil, err
	}
	return func() { undo(); releasePorts() }, nil
}

// patchAllocatedValues fills in what an update left out of what the
// server allocated, as kube-apiserver does for idempotent writes: the
// ClusterIPs, the node ports (by port name, unless another port took
// them) and the health check node port, where the Service still needs
// them.
func patchAllocatedValues(svc, old *corev1.Service) {
	if needsClusterIP(old) && needsClusterIP(svc) {
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(svc.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
			svc.Spec.ClusterIPs = old.Spec.ClusterIPs
		}
	}
	if needsNodePorts(old) && needsNodePorts(svc) {
		taken := map[int32]bool{}
		for _, p := range svc.Spec.Ports {
			taken[p.NodePort] = true
		}
		byName := map[string]int32{}
		for _, p := range old.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if kept := byName[p.Name]; p.NodePort == 0 && !taken[kept] {
				p.NodePort = kept
			}
		}
	}
	if needsHealthCheck(old) && needsHealthCheck(svc) && svc.Spec.HealthCheckNodePort == 0 {
		svc.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}

// normalizeClusterIPs keeps clusterIPs in step with a clusterIP an update
// changed or cleared (an older client knows only the one field), as
// kube-apiserver does before its validation compares them.
func normalizeClusterIPs(svc, old *corev1.Service) {
	if len(old.Spec.ClusterIPs) > 0 && len(svc.Spec.ClusterIPs) == 0 && old.Spec.ClusterIP == svc.Spec.ClusterIP {
		svc.Spec.ClusterIPs = old.Spec.ClusterIPs
	}
	if old.Spec.ClusterIP == svc.Spec.ClusterIP || !slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs) {
		return
	}
	if svc.Spec.ClusterIP == "" {
		svc.Spec.ClusterIPs = nil
	} else {
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	}
}

func needsClusterIP(svc *corev1.Service) bool { return svc.Spec.Type != corev1.ServiceTypeExternalName }

// needsNodePorts: a NodePort Service, and a LoadBalancer one unless it
// asks not to be given node ports (allocateLoadBalancerNodePorts false).
func needsNodePorts(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

// needsHealthCheck: a LoadBalancer Service that keeps external traffic on
// the node it reaches gets a node port for the load balancer's health
// checks.
func needsHealthCheck(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// allocateNodePorts gives NodePort and LoadBalancer ports a free node port
// (a LoadBalancer's only those it asks for when it asks not to be given
// any) and refuses one another Service uses. The ports it newly takes are
// claimed in storage until the Service is stored (nodePortClaims).
func (s *services) allocateNodePorts(ctx context.Context, svc *corev1.Service, old *corev1.Service, dry bool) (release func(), err error) {
	release = func() {}
	if svc.Spec.Type != corev1.ServiceTypeNodePort && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return release, nil
	}
	// The ports belong to the stored Service an update changes (the
	// request's body may carry no UID, or another), to the new one a
	// create makes (its UID given already).
	owner := svc.UID
	if old != nil {
		owner = old.UID
	}
	// One write of this server at a time chooses, among the ports no
	// stored Service holds and no other write has claimed, here or on
	// another server; a claim made meanwhile has it choose again.
	s.choosing.Lock()
	defer s.choosing.Unlock()
	asked, askedHealthCheck := slices.Clone(svc.Spec.Ports), svc.Spec.HealthCheckNodePort
	for attempt := 0; ; attempt++ {
		used, err := s.usedNodePorts(ctx, owner)
		if err != nil {
			return nil, err
		}
		claimed, err := s.nodePorts.claimed(ctx)
		if err != nil {
			return nil, nodePortError(err)
		}
		if old != nil {
			// Its own, whatever claim is left on them (a write of it
			// stored a moment ago, or before its server stopped).
			for _, port := range nodePortsOf(old) {
				delete(claimed, port)
			}
		}
		maps.Copy(used, claimed)
		fresh, err := s.chooseNodePorts(svc, old, used, dry)
		if err != nil || dry || len(fresh) == 0 {
			return release, err
		}
		token := newClaimToken()
		ok, err := s.claimNodePorts(ctx, owner, token, fresh)
		if err != nil {
			return nil, nodePortError(err)
		}
		if ok {
			s.nodePorts.hold(owner, token, fresh)
			return func() { s.nodePorts.release(ctx, owner, token, fresh) }, nil
		}
		if attempt == claimAttempts {
			return nil, apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: other writes took the ports chosen %d times", attempt+1))
		}
		svc.Spec.Ports, svc.Spec.HealthCheckNodePort = slices.Clone(asked), askedHealthCheck
	}
}

// claimAttempts bounds how often a write chooses node ports again because
// other writes claimed them between its choice and its claim.
const claimAttempts = 8

// nodePortError is kube's allocator's answer to a failure of its storage.
func nodePortError(err error) error {
	return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", err))
}

// claimNodePorts claims ports for the write token, then checks that no
// Service stored meanwhile (through another server) holds one. On a port
// another write holds, it releases what it claimed and reports false.
func (s *services) claimNodePorts(ctx context.Context, owner types.UID, token string, ports []int32) (bool, error) {
	// Made whole or not at all, whatever becomes of the request.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for i, port := range ports {
		ok, err := s.nodePorts.claim(ctx, port, token)
		if err != nil || !ok {
			// A claim that failed may have been made all the same.
			s.nodePorts.release(ctx, owner, token, ports[:i+1])
			return false, err
		}
	}
	// A Service stored before a claim was made, since the ports were
	// chosen, shows in a consistent list now.
	used, err := s.usedNodePorts(ctx, owner)
	if err == nil && !slices.ContainsFunc(ports, func(port int32) bool { return used[port] }) {
		return true, nil
	}
	s.nodePorts.release(ctx, owner, token, ports)
	return false, err
}

// nodePortsOf lists the node ports and health check node port svc holds.
func nodePortsOf(svc *corev1.Service) []int32 {
	var ports []int32
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			ports = append(ports, p.NodePort)
		}
	}
	if svc.Spec.HealthCheckNodePort != 0 {
		ports = append(ports, svc.Spec.HealthCheckNodePort)
	}
	return ports
}

// chooseNodePorts gives svc's ports the node ports they ask for, if free,
// or free ones, and its health check node port if it newly needs one. It
// answers the ports it newly took, for the write to claim (others, such
// as a health check node port an update changes, are validation's).
func (s *services) chooseNodePorts(svc *corev1.Service, old *corev1.Service, used map[int32]bool, dry bool) ([]int32, error) {
	var errs field.ErrorList
	mine := map[int32]bool{}    // node ports this Service has taken: one may serve two protocols
	fresh := map[int32]bool{}   // those it did not hold before this write
	byPort := map[int32]int32{} // on create, the node port each service port took
	type protocolPort struct {
		protocol corev1.Protocol
		port     int32
	}
	taken := map[protocolPort]bool{} // on update, the node ports by protocol
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if p.NodePort == 0 && !needsNodePorts(svc) {
			continue
		}
		if old == nil {
			// As kube's allocator creates a Service: the entries of one
			// port (TCP and UDP) share a node port, the one any of them
			// asks for.
			if shared := byPort[p.Port]; shared != 0 && (p.NodePort == 0 || p.NodePort == shared) {
				p.NodePort = shared
				continue
			}
			if p.NodePort == 0 && byPort[p.Port] == 0 {
				p.NodePort = requestedNodePort(p.Port, svc.Spec.Ports)
			}
		}
		switch {
		case p.NodePort != 0 && old != nil && mine[p.NodePort]: // as kube's update, which allocates it once
		case p.NodePort != 0 && used[p.NodePort]:
			errs = append(errs, field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), p.NodePort, "provided port is already allocated"))
		case p.NodePort != 0 && !dry && (p.NodePort < nodePortMin || p.NodePort > nodePortMax): // kube's dry run checks only that it is free
			errs = append(errs, field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), p.NodePort,
				fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %d-%d", nodePortMin, nodePortMax)))
		case p.NodePort == 0:
			p.NodePort = nextNodePort(used, fresh, dry)
		}
		if pair := (protocolPort{p.Protocol, p.NodePort}); old != nil && len(errs) == 0 {
			if taken[pair] {
				// kube's allocator fails so, before validation, as a bare
				// error: a 500.
				return nil, fmt.Errorf("duplicate nodePort: {%s %d}", p.Protocol, p.NodePort)
			}
			taken[pair] = true
		}
		used[p.NodePort], mine[p.NodePort] = true, true
		if old == nil || !holdsNodePort(old, p.NodePort) {
			fresh[p.NodePort] = true
		}
		if byPort[p.Port] == 0 {
			byPort[p.Port] = p.NodePort
		}
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, svc.Name, errs)
	}
	if needsHealthCheck(svc) && (old == nil || !needsHealthCheck(old)) {
		if err := allocateHealthCheckNodePort(svc, used, fresh, dry); err != nil {
			return nil, err
		}
		fresh[svc.Spec.HealthCheckNodePort] = true
	}
	return slices.Sorted(maps.Keys(fresh)), nil
}

// nextNodePort picks a free node port: a random one, or for a dry run, as
// kube's allocator answers one without allocating, the port after the
// highest this write has taken (32769 when it has taken none). 0: the
// range is full.
func nextNodePort(used, taken map[int32]bool, dry bool) int32 {
	if dry {
		if len(taken) == 0 {
			return 32769
		}
		var next int32
		for p := range taken {
			next = max(next, p+1)
		}
		return next
	}
	for attempt := 0; attempt < allocateAttempts*4; attempt++ {
		if candidate := int32(nodePortMin + rand.IntN(nodePortMax-nodePortMin+1)); !used[candidate] {
			return candidate
		}
	}
	return 0
}

// holdsNodePort tells whether svc has node port on one of its ports.
func holdsNodePort(svc *corev1.Service, port int32) bool {
	return slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.NodePort == port })
}

// requestedNodePort is the node port an entry of the service port asks
// for (0: none does).
func requestedNodePort(port int32, ports []corev1.ServicePort) int32 {
	for _, p := range ports {
		if p.Port == port && p.NodePort != 0 {
			return p.NodePort
		}
	}
	return 0
}

// allocateHealthCheckNodePort gives a Service that newly needs one its
// health check node port (the one it asks for, if free), with
// kube-apiserver's internal error when there is none.
func allocateHealthCheckNodePort(svc *corev1.Service, used, taken map[int32]bool, dry bool) error {
	if port := svc.Spec.HealthCheckNodePort; port != 0 {
		switch {
		case !dry && (port < nodePortMin || port > nodePortMax): // as for node ports
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate requested HealthCheck NodePort %d: provided port is not in the valid range. The range of valid ports is %d-%d", port, nodePortMin, nodePortMax))
		case used[port]:
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate requested HealthCheck NodePort %d: provided port is already allocated", port))
		}
		return nil
	}
	if port := nextNodePort(used, taken, dry); port != 0 {
		svc.Spec.HealthCheckNodePort = port
		return nil
	}
	return apierrors.NewInternalError(fmt.Errorf("failed to allocate a HealthCheck NodePort 0: range is full"))
}

// usedNodePorts lists the node ports of every stored Service but owner
// (another object: a Service created again under its name does not own
// them).
func (s *services) usedNodePorts(ctx context.Context, owner types.UID) (map[int32]bool, error) {
	store := s.p.Registry().Snapshot().Lookup(servicesGVR)
	res, err := store.Backend().Cache.List(ctx, cache.ListRequest{
		Filter: cache.Filter{Prefix: store.CollectionPrefix("")}, Consistency: cache.Consistent,
	})
	if err != nil {
		return nil, cache.APIError(err)
	}
	used := map[int32]bool{}
	for _, item := range res.Items {
		if other, ok := item.(*corev1.Service); ok && other.UID != owner {
			for _, port := range nodePortsOf(other) {
				used[port] = true
			}
		}
	}
	return used, nil
}
