package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCertificateApproval: kubectl certificate approve and deny write a
// CertificateSigningRequest's approval sub-resource, which changes only
// its conditions, and only a user allowed to approve for its signer may.
func TestCertificateApproval(t *testing.T) {
	k := startKapiWithTokens(t, onlyLifecycleControllers)
	csrs := k.clientset().CertificatesV1().CertificateSigningRequests()
	for _, name := range []string{"to-approve", "to-deny", "not-yours"} {
		if _, err := csrs.Create(ctx, newCSR(t, name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	k.mustKubectl("certificate", "approve", "to-approve")
	k.mustKubectl("certificate", "deny", "to-deny")
	for name, want := range map[string]certificatesv1.RequestConditionType{"to-approve": certificatesv1.CertificateApproved, "to-deny": certificatesv1.CertificateDenied} {
		csr, err := csrs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(csr.Status.Conditions) != 1 || csr.Status.Conditions[0].Type != want || csr.Status.Conditions[0].LastUpdateTime.IsZero() {
			t.Errorf("%s: conditions %+v, want one %s with its time set", name, csr.Status.Conditions, want)
		}
		// kube's CSR strategy resets spec and status, so its writers own no
		// fields: kube-apiserver 1.37 records no managed fields for a
		// create or an approval by kubectl, and neither does kapi.
		if len(csr.ManagedFields) != 0 {
			t.Errorf("%s: managed fields %+v, want none", name, csr.ManagedFields)
		}
	}

	// The approval changes the conditions and nothing else.
	csr, err := csrs.Get(ctx, "to-approve", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	csr.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth}
	csr.Status.Certificate = []byte("not one")
	updated, err := csrs.UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(updated.Spec.Usages) != 1 || updated.Spec.Usages[0] != certificatesv1.UsageClientAuth || len(updated.Status.Certificate) != 0 {
		t.Errorf("the approval changed the spec or the certificate: %+v, %q", updated.Spec.Usages, updated.Status.Certificate)
	}
	// An approval needs the approve verb on the signer.
	k.mustKubectl("create", "clusterrole", "csr-writer", "--verb=get,update", "--resource=certificatesigningrequests/approval")
	k.mustKubectl("create", "clusterrolebinding", "csr-writer", "--clusterrole=csr-writer", "--user=nobody")
	notYours, err := csrs.Get(ctx, "not-yours", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	notYours.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: "True", Reason: "ByNobody"}}
	nobody := k.clientWithToken("nobody-token").CertificatesV1().CertificateSigningRequests()
	waitFor(t, 10*time.Second, "nobody's role to take effect", func() bool {
		_, err := nobody.UpdateApproval(ctx, notYours.Name, notYours, metav1.UpdateOptions{})
		return err == nil || strings.Contains(err.Error(), "not permitted to approve")
	})
	_, err = nobody.UpdateApproval(ctx, notYours.Name, notYours, metav1.UpdateOptions{})
	if want := `user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"`; !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("an approval by nobody: %v, want Forbidden: %s", err, want)
	}
}

// newCSR is a request for a client certificate from the kube-apiserver
// client signer.
func newCSR(t *testing.T, name string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
		},
	}
}
