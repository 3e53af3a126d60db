package auth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// servingPair writes a certificate for 127.0.0.1 signed by ca (followed by
// ca when chained) and its key, and returns the certificate.
func servingPair(t *testing.T, dir string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, chained bool) *x509.Certificate {
	t.Helper()
	cert, key, err := newCert(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "operator's"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost"},
	}, ca, caKey)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pemCert(cert)
	if chained {
		certPEM = append(certPEM, pemCert(ca)...)
	}
	keyPEM, err := pemKey(key)
	if err != nil {
		t.Fatal(err)
	}
	// Written key first, as a careful operator does; the watch tolerates
	// either order.
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return cert
}

func newTestCA(t *testing.T, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	ca, key, err := newCert(&x509.Certificate{
		Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

func newTestPKI(t *testing.T) *PKI {
	t.Helper()
	p, err := LoadOrCreate(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func served(t *testing.T, p *PKI) *x509.Certificate {
	t.Helper()
	pair, err := p.TLSConfig(nil).GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// TestServingFilesReplaceKapisCertificate: the operator's certificate is
// served, its chain's CA is what the kubeconfig trusts, and a certificate
// written over it is served once the reloader sees it.
func TestServingFilesReplaceKapisCertificate(t *testing.T) {
	p := newTestPKI(t)
	if !served(t, p).Equal(p.Server.Leaf) {
		t.Fatal("without serving files kapi does not serve its own certificate")
	}
	dir := t.TempDir()
	ca, caKey := newTestCA(t, "operator's CA")
	first := servingPair(t, dir, ca, caKey, true)
	if err := p.UseServingFiles(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")); err != nil {
		t.Fatal(err)
	}
	if !served(t, p).Equal(first) {
		t.Fatal("the operator's certificate is not served")
	}
	if !bytes.Equal(p.ServingCAPEM, pemCert(ca)) {
		t.Errorf("ServingCAPEM is not the operator's CA:\n%s", p.ServingCAPEM)
	}
	if bytes.Equal(p.CAPEM, p.ServingCAPEM) {
		t.Error("kapi's client CA changed with the serving certificate")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.WatchServingFiles(ctx)
	second := servingPair(t, dir, ca, caKey, true)
	deadline := time.Now().Add(10 * time.Second)
	for !served(t, p).Equal(second) {
		if time.Now().After(deadline) {
			t.Fatal("the certificate written over the first is not served")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServingFileAloneIsItsOwnCA: a certificate given without its chain is
// what clients of the kubeconfig trust.
func TestServingFileAloneIsItsOwnCA(t *testing.T) {
	p := newTestPKI(t)
	dir := t.TempDir()
	ca, caKey := newTestCA(t, "operator's CA")
	leaf := servingPair(t, dir, ca, caKey, false)
	if err := p.UseServingFiles(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p.ServingCAPEM, pemCert(leaf)) {
		t.Errorf("ServingCAPEM is not the certificate itself:\n%s", p.ServingCAPEM)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(p.ServingCAPEM)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "localhost"}); err != nil {
		t.Errorf("a client trusting ServingCAPEM does not verify the certificate: %v", err)
	}
}

// TestServingFilesThatDoNotLoad: a key that is not the certificate's is
// refused at the start with the flags' names.
func TestServingFilesThatDoNotLoad(t *testing.T) {
	p := newTestPKI(t)
	dir := t.TempDir()
	ca, caKey := newTestCA(t, "operator's CA")
	servingPair(t, dir, ca, caKey, true)
	err := p.UseServingFiles(filepath.Join(dir, "tls.crt"), p.CAKeyFile)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("--tls-cert-file")) {
		t.Fatalf("mismatched key: %v", err)
	}
}
