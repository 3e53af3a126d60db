package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"os/exec"
	"strings"
	"testing"
	"time"

	"encoding/json"
	"os"
	"path/filepath"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
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
	_, request := certificateRequest(t, pkix.Name{CommonName: name})
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    request,
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
		},
	}
}

// certificateRequest is a new key, in PEM, and a PEM request for a
// certificate of it for subject.
func certificateRequest(t *testing.T, subject pkix.Name) (keyPEM, requestPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// TestSigningIssuesCertificatesThatAuthenticate: as with
// kube-controller-manager given the cluster CA, an approved request of
// the kube-apiserver client signer gets a certificate, valid no longer
// than it asked, with which kubectl authenticates as the user and groups
// it names; and a kubelet's request for its client certificate is
// approved when its requester may ask for one, then signed.
func TestSigningIssuesCertificatesThatAuthenticate(t *testing.T) {
	k := startKapi(t, "--controllers=certificatesigningrequest-signing-controller,certificatesigningrequest-approving-controller")
	csrs := k.clientset().CertificatesV1().CertificateSigningRequests()
	key, request := certificateRequest(t, pkix.Name{CommonName: "jane", Organization: []string{"developers"}})
	_, err := csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "jane"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: request, SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}, ExpirationSeconds: ptr.To[int32](3600),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k.mustKubectl("certificate", "approve", "jane")
	issued := waitForCertificate(t, csrs, "jane")
	if life := time.Until(issued.NotAfter); life > time.Hour || life < 50*time.Minute {
		t.Errorf("the certificate is valid for %v more, want the hour asked for", life)
	}

	whoami := kubectlAs(t, k, issued.Raw, key, "auth", "whoami", "-o", "json")
	var review struct {
		Status struct {
			UserInfo struct {
				Username string   `json:"username"`
				Groups   []string `json:"groups"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(whoami), &review); err != nil {
		t.Fatalf("kubectl auth whoami: %v\n%s", err, whoami)
	}
	if u := review.Status.UserInfo; u.Username != "jane" || !slices.Equal(u.Groups, []string{"developers", "system:authenticated"}) {
		t.Errorf("with the issued certificate kubectl is %q in %q, want jane in developers and system:authenticated", u.Username, u.Groups)
	}

	// A kubelet's client certificate, asked for by a user allowed to
	// (the admin), is approved without a kubectl certificate approve.
	_, request = certificateRequest(t, pkix.Name{CommonName: "system:node:node-1", Organization: []string{"system:nodes"}})
	_, err = csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: request, SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if kubelet := waitForCertificate(t, csrs, "node-1"); kubelet.Subject.CommonName != "system:node:node-1" {
		t.Errorf("the kubelet's certificate is for %q", kubelet.Subject.CommonName)
	}
	csr, err := csrs.Get(ctx, "node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := csr.Status.Conditions; len(c) != 1 || c[0].Type != certificatesv1.CertificateApproved || c[0].Reason != "AutoApproved" {
		t.Errorf("the kubelet's request has conditions %+v, want kube-controller-manager's AutoApproved", c)
	}
}

// waitForCertificate waits for the request named to be issued its
// certificate, and returns it.
func waitForCertificate(t *testing.T, csrs interface {
	Get(context.Context, string, metav1.GetOptions) (*certificatesv1.CertificateSigningRequest, error)
}, name string) *x509.Certificate {
	t.Helper()
	var issued []byte
	waitFor(t, 30*time.Second, name+"'s certificate", func() bool {
		csr, err := csrs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		issued = csr.Status.Certificate
		return len(issued) > 0
	})
	block, _ := pem.Decode(issued)
	if block == nil {
		t.Fatalf("%s's certificate is not PEM: %q", name, issued)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// kubectlAs runs kubectl against k with a client certificate and key in
// place of the admin's.
func kubectlAs(t *testing.T, k *kapi, certDER, keyPEM []byte, args ...string) string {
	t.Helper()
	config, err := clientcmd.LoadFromFile(k.kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range config.AuthInfos {
		user.ClientCertificateData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER})
		user.ClientKeyData = keyPEM
		user.ClientCertificate, user.ClientKey = "", ""
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", path}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+filepath.Join(t.TempDir(), "kubectl-cache"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
