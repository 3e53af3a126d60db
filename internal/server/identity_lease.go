package server

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-helpers/apimachinery/lease"
	"k8s.io/utils/clock"
)

// The identity lease kube-apiserver keeps in kube-system, renewed every
// ten seconds for an hour, with its identity label.
const (
	identityLeaseDuration = 3600
	identityLeaseRenew    = 10 * time.Second
	// identityLeaseGCPeriod is how often expired identity Leases of other
	// servers are looked for.
	identityLeaseGCPeriod = 3600 * time.Second
	identityLabel         = "apiserver.kubernetes.io/identity"
	peerAddressAnnotation = "kubernetes.io/peer-advertise-address"
)

// identityLease makes the controller that keeps the server's identity
// Lease, as kube-apiserver's start-kube-apiserver-identity-lease-controller
// does (with Kubernetes' own lease controller); it runs until ctx ends. Besides telling
// clients which API servers run, its renewals move the storage revision
// on, so that a resource version of an idle server is compacted away in
// time, as on a real cluster.
// peer, when known, is the address other API servers reach this one at
// (the advertised address and port), which the lease names as kube's
// does.
func identityLease(config *rest.Config, hostname, listen, peer string) (lease.Controller, error) {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	name := identityLeaseName(hostname, listen)
	return lease.NewController(clock.RealClock{}, client, name+"_"+string(uuid.NewUUID()), identityLeaseDuration, nil,
		identityLeaseRenew, name, metav1.NamespaceSystem, func(l *coordinationv1.Lease) error {
			if l.Labels == nil {
				l.Labels = map[string]string{}
			}
			l.Labels[identityLabel] = "kube-apiserver"
			l.Labels[corev1.LabelHostname] = hostname
			if peer != "" {
				if l.Annotations == nil {
					l.Annotations = map[string]string{}
				}
				l.Annotations[peerAddressAnnotation] = peer
			}
			return nil
		}), nil
}

// identityLeaseName is a stable name per host and listen address, in
// kube-apiserver's form (apiserver-<hash>): the address tells apart the
// servers of one cluster that run on one host.
func identityLeaseName(hostname, listen string) string {
	hash := sha256.Sum256([]byte(hostname + "\x00" + listen + "\x00kube-apiserver"))
	return "apiserver-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(hash[:16]))
}
