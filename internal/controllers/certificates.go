package controllers

import (
	"context"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/controller/certificates/approver"
	"k8s.io/kubernetes/pkg/controller/certificates/cleaner"
	"k8s.io/kubernetes/pkg/controller/certificates/signer"
)

// The workers kube-controller-manager starts the certificate controllers
// with, and its --cluster-signing-duration default: the longest a signed
// certificate lives (a request's spec.expirationSeconds may ask less).
const (
	signingWorkers  = 5
	approvalWorkers = 5
	cleanerWorkers  = 1
	signingDuration = 365 * 24 * time.Hour
)

// Signing names the CA the signing controller issues certificates with,
// as kube-controller-manager's --cluster-signing-cert-file and
// --cluster-signing-key-file: PEM files, read again when they change.
type Signing struct {
	CertFile, KeyFile string
}

// newSigners are kube-controller-manager's signers of the four built-in
// signer names, each given the one cluster CA as kubeadm configures it.
var newSigners = []func(context.Context, kubernetes.Interface, informers.SharedInformerFactory, Signing) (*signer.CSRSigningController, error){
	func(ctx context.Context, c kubernetes.Interface, f informers.SharedInformerFactory, s Signing) (*signer.CSRSigningController, error) {
		return signer.NewKubeletServingCSRSigningController(ctx, c, f.Certificates().V1().CertificateSigningRequests(), s.CertFile, s.KeyFile, signingDuration)
	},
	func(ctx context.Context, c kubernetes.Interface, f informers.SharedInformerFactory, s Signing) (*signer.CSRSigningController, error) {
		return signer.NewKubeletClientCSRSigningController(ctx, c, f.Certificates().V1().CertificateSigningRequests(), s.CertFile, s.KeyFile, signingDuration)
	},
	func(ctx context.Context, c kubernetes.Interface, f informers.SharedInformerFactory, s Signing) (*signer.CSRSigningController, error) {
		return signer.NewKubeAPIServerClientCSRSigningController(ctx, c, f.Certificates().V1().CertificateSigningRequests(), s.CertFile, s.KeyFile, signingDuration)
	},
	func(ctx context.Context, c kubernetes.Interface, f informers.SharedInformerFactory, s Signing) (*signer.CSRSigningController, error) {
		return signer.NewLegacyUnknownCSRSigningController(ctx, c, f.Certificates().V1().CertificateSigningRequests(), s.CertFile, s.KeyFile, signingDuration)
	},
}

// runSigning starts kube-controller-manager's CSR signing controller: an
// approved CertificateSigningRequest of a built-in signer gets its
// certificate from the cluster CA. Client certificates it signs for
// kubernetes.io/kube-apiserver-client authenticate to this server, as
// they do to a kubeadm cluster's.
func runSigning(ctx context.Context, start func(func()), client kubernetes.Interface, factory informers.SharedInformerFactory, signing Signing) error {
	for _, newSigner := range newSigners {
		c, err := newSigner(ctx, client, factory, signing)
		if err != nil {
			return err
		}
		start(func() { c.Run(ctx, signingWorkers) })
	}
	return nil
}

// runApproving starts kube-controller-manager's CSR approving
// controller, which approves a kubelet's request for its client
// certificate when a SubjectAccessReview allows the requester to ask for
// it (certificatesigningrequests/nodeclient or selfnodeclient).
func runApproving(ctx context.Context, start func(func()), client kubernetes.Interface, factory informers.SharedInformerFactory) {
	c := approver.NewCSRApprovingController(ctx, client, factory.Certificates().V1().CertificateSigningRequests())
	start(func() { c.Run(ctx, approvalWorkers) })
}

// runCSRCleaner starts kube-controller-manager's CSR cleaner, which
// deletes requests once they are done with: issued or denied after an
// hour, pending after a day, and those whose certificate has expired.
func runCSRCleaner(ctx context.Context, start func(func()), client kubernetes.Interface, factory informers.SharedInformerFactory) {
	c := cleaner.NewCSRCleanerController(client.CertificatesV1().CertificateSigningRequests(), factory.Certificates().V1().CertificateSigningRequests())
	start(func() { c.Run(ctx, cleanerWorkers) })
}
