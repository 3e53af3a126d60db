package simnodes

import (
	"errors"
	"net/netip"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// The simulated network: node k (from 1) gets the pod CIDR
// 10.128.k.0/24 counted from 10.128.0.0/9, and the node address
// 172.16.0.0 + k + 1 in 172.16.0.0/12.
var (
	podNetwork  = netip.MustParsePrefix("10.128.0.0/9")
	nodeNetwork = netip.MustParsePrefix("172.16.0.0/12")
)

const maxNodes = 1<<(24-9) - 1

// addresses hands out pod CIDRs to nodes and pod IPs within them.
type addresses struct {
	mu    sync.Mutex
	cidrs map[string]bool                     // pod CIDRs given to nodes not yet seen with them
	pods  map[string]map[netip.Addr]types.UID // by node, the IPs in use
}

func newAddresses() *addresses {
	return &addresses{cidrs: map[string]bool{}, pods: map[string]map[netip.Addr]types.UID{}}
}

// nodeCIDR returns a pod CIDR no simulated node has.
func (a *addresses) nodeCIDR(nodes corelisters.NodeLister) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	all, err := nodes.List(labels.Everything())
	if err != nil {
		return "", err
	}
	taken := map[string]bool{}
	for _, node := range all {
		taken[node.Spec.PodCIDR] = true
	}
	for k := 1; k <= maxNodes; k++ {
		cidr := nodeCIDR(k).String()
		if !taken[cidr] && !a.cidrs[cidr] {
			a.cidrs[cidr] = true
			return cidr, nil
		}
	}
	return "", errors.New("no pod CIDR left for another simulated node")
}

func nodeCIDR(k int) netip.Prefix {
	base := podNetwork.Addr().As4()
	n := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3]) + uint32(k)<<8
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), 0}), 24)
}

// nodeIP is the address of the node with the pod CIDR cidr, or "" for a
// CIDR not of the simulated network.
func nodeIP(cidr string) string {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil || !podNetwork.Contains(prefix.Addr()) {
		return ""
	}
	pod, base := prefix.Addr().As4(), podNetwork.Addr().As4()
	k := (uint32(pod[1]-base[1])<<16 | uint32(pod[2])<<8) >> 8
	node := nodeNetwork.Addr().As4()
	n := uint32(node[0])<<24 | uint32(node[1])<<16 | uint32(node[2])<<8 | uint32(node[3]) + k + 1
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).String()
}

// podIP gives pod an address in its node's pod CIDR: the one it has when
// it has one, or the lowest free one. inUse lists the node's pods, to
// learn the addresses taken before this process started.
func (a *addresses) podIP(pod *corev1.Pod, cidr string, inUse []*corev1.Pod) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	used, seen := a.pods[pod.Spec.NodeName]
	if !seen {
		used = map[netip.Addr]types.UID{}
		for _, p := range inUse {
			if ip, err := netip.ParseAddr(p.Status.PodIP); err == nil && !p.Spec.HostNetwork {
				used[ip] = p.UID
			}
		}
		a.pods[pod.Spec.NodeName] = used
	}
	for ip, uid := range used {
		if uid == pod.UID {
			return ip.String(), nil
		}
	}
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return "", errors.New("the node has no pod CIDR")
	}
	// .0 is the network, .1 the node's bridge and the last the broadcast.
	for ip := prefix.Addr().Next().Next(); prefix.Contains(ip.Next()); ip = ip.Next() {
		if _, taken := used[ip]; !taken {
			used[ip] = pod.UID
			return ip.String(), nil
		}
	}
	return "", errors.New("the node's pod CIDR is full")
}

// release gives pod's address back.
func (a *addresses) release(pod *corev1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for ip, uid := range a.pods[pod.Spec.NodeName] {
		if uid == pod.UID {
			delete(a.pods[pod.Spec.NodeName], ip)
		}
	}
}
