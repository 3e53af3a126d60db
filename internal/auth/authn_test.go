package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// newPKI creates a CA and its credentials in a temporary directory.
func newPKI(t testing.TB) *PKI {
	t.Helper()
	p, err := LoadOrCreate(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// adminCert is the admin client certificate p created.
func adminCert(t testing.TB, p *PKI) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(p.AdminCertPEM)
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// issueClient makes a client certificate signed by p's CA.
func issueClient(t *testing.T, p *PKI, cn string, groups ...string) *x509.Certificate {
	t.Helper()
	c, _, err := newCert(&x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: groups},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, p.CA, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func requestWith(path string, chain ...*x509.Certificate) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "https://kapi"+path, nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: chain}
	return r
}

// TestAuthenticatorsDoNotShareVerifiedCertificates: two Authenticators
// with different CAs, as two servers in one process have, each accept
// their own clients and refuse the other's, also once they have accepted
// (and remembered) their own.
func TestAuthenticatorsDoNotShareVerifiedCertificates(t *testing.T) {
	pa, pb := newPKI(t), newPKI(t)
	authA, authB := NewAuthenticator(pa.ClientCAs()), NewAuthenticator(pb.ClientCAs())
	certA, certB := adminCert(t, pa), adminCert(t, pb)
	for round := 0; round < 3; round++ {
		for _, c := range []struct {
			name string
			auth *Authenticator
			cert *x509.Certificate
			want bool
		}{
			{"A with A's client", authA, certA, true},
			{"B with B's client", authB, certB, true},
			{"A with B's client", authA, certB, false},
			{"B with A's client", authB, certA, false},
		} {
			u, ok := c.auth.AuthenticateRequest(requestWith("/api", c.cert))
			if ok != c.want {
				t.Fatalf("round %d, %s: authenticated %v, want %v", round, c.name, ok, c.want)
			}
			if ok && (u.Name != AdminUser || fmt.Sprint(u.Groups) != fmt.Sprint([]string{AdminGroup, "system:authenticated"})) {
				t.Fatalf("round %d, %s: user %+v", round, c.name, u)
			}
		}
	}
}

func TestUserFromCertificate(t *testing.T) {
	p := newPKI(t)
	a := NewAuthenticator(p.ClientCAs())
	u, ok := a.AuthenticateRequest(requestWith("/api", issueClient(t, p, "jane", "dev", "ops")))
	if !ok || u.Name != "jane" || fmt.Sprint(u.Groups) != "[dev ops system:authenticated]" {
		t.Fatalf("got %+v, %v", u, ok)
	}
	if _, ok := a.AuthenticateRequest(requestWith("/api")); ok {
		t.Fatal("a request without certificate was authenticated")
	}
	if _, ok := a.AuthenticateRequest(httptest.NewRequest(http.MethodGet, "http://kapi/api", nil)); ok {
		t.Fatal("a request without TLS was authenticated")
	}
}

// TestExpiredCertificateRefusedEvenIfCached: a certificate that was
// verified and remembered stops working when it expires.
func TestExpiredCertificateRefusedEvenIfCached(t *testing.T) {
	p := newPKI(t)
	a := NewAuthenticator(p.ClientCAs())
	fc := clocktesting.NewFakeClock(time.Now())
	a.clock = fc
	cert := issueClient(t, p, "jane")
	if _, ok := a.AuthenticateRequest(requestWith("/api", cert)); !ok {
		t.Fatal("valid certificate refused")
	}
	if len(a.verified) != 1 {
		t.Fatalf("%d chains remembered, want 1", len(a.verified))
	}
	// The chain's last valid instant: the CA, made a moment before the
	// certificate with the same validity, may expire a second earlier
	// (certificates count whole seconds).
	last := cert.NotAfter
	if p.CA.NotAfter.Before(last) {
		last = p.CA.NotAfter
	}
	fc.SetTime(last)
	if _, ok := a.AuthenticateRequest(requestWith("/api", cert)); !ok {
		t.Fatal("certificate refused at its last valid instant")
	}
	fc.SetTime(cert.NotAfter.Add(time.Second))
	if _, ok := a.AuthenticateRequest(requestWith("/api", cert)); ok {
		t.Fatal("expired certificate accepted from the memory of verified certificates")
	}
}

// TestForgedCertificateWithCopiedSignatureRefused: a certificate of the
// attacker's making that carries the signature of one the Authenticator
// has already verified must not ride on that verification.
func TestForgedCertificateWithCopiedSignatureRefused(t *testing.T) {
	p := newPKI(t)
	a := NewAuthenticator(p.ClientCAs())
	genuine := issueClient(t, p, "jane")
	if _, ok := a.AuthenticateRequest(requestWith("/api", genuine)); !ok {
		t.Fatal("valid certificate refused")
	}

	// A self-signed certificate for the admin, its signature replaced by
	// the genuine one's.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: genuine.SerialNumber,
		Subject:      pkix.Name{CommonName: AdminUser, Organization: []string{AdminGroup}},
		Issuer:       genuine.Issuer,
		NotBefore:    genuine.NotBefore, NotAfter: genuine.NotAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	type certificate struct {
		TBS       asn1.RawValue
		Algorithm asn1.RawValue
		Signature asn1.BitString
	}
	var forged, real certificate
	if _, err := asn1.Unmarshal(der, &forged); err != nil {
		t.Fatal(err)
	}
	if _, err := asn1.Unmarshal(genuine.Raw, &real); err != nil {
		t.Fatal(err)
	}
	forged.Algorithm, forged.Signature = real.Algorithm, real.Signature
	der, err = asn1.Marshal(forged)
	if err != nil {
		t.Fatal(err)
	}
	fake, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	if string(fake.Signature) != string(genuine.Signature) {
		t.Fatal("the forged certificate does not carry the genuine signature")
	}
	if u, ok := a.AuthenticateRequest(requestWith("/api", fake)); ok {
		t.Fatalf("forged certificate authenticated as %+v", u)
	}
}

func TestMiddleware(t *testing.T) {
	p := newPKI(t)
	a := NewAuthenticator(p.ClientCAs())
	var got *User
	var reached bool
	h := a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = true
		got, _ = UserFrom(r.Context())
	}), nil)
	for _, c := range []struct {
		path   string
		cert   *x509.Certificate
		status int
		user   string
	}{
		{"/api", adminCert(t, p), http.StatusOK, AdminUser},
		{"/api", nil, http.StatusUnauthorized, ""},
		{"/api", adminCert(t, newPKI(t)), http.StatusUnauthorized, ""},
		// Without anonymous requests, as kube-apiserver's, health and
		// version too need credentials.
		{"/healthz", nil, http.StatusUnauthorized, ""},
		{"/healthz", adminCert(t, newPKI(t)), http.StatusUnauthorized, ""},
		{"/livez", nil, http.StatusUnauthorized, ""},
		{"/readyz", nil, http.StatusUnauthorized, ""},
		{"/version", nil, http.StatusUnauthorized, ""},
		{"/version", adminCert(t, p), http.StatusOK, AdminUser},
	} {
		got, reached = nil, false
		r := requestWith(c.path)
		if c.cert != nil {
			r = requestWith(c.path, c.cert)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != c.status || reached != (c.status == http.StatusOK) {
			t.Fatalf("%s: status %d (handler reached %v), want %d", c.path, rec.Code, reached, c.status)
		}
		name := ""
		if got != nil {
			name = got.Name
		}
		if name != c.user {
			t.Fatalf("%s: user %q in context, want %q", c.path, name, c.user)
		}
	}
}

// TestAnonymousMiddleware: with anonymous requests allowed, a request
// without credentials is system:anonymous's, but one whose client
// certificate does not verify is refused, as kube-apiserver's
// authenticators refuse it.
func TestAnonymousMiddleware(t *testing.T) {
	p := newPKI(t)
	a := NewAuthenticator(p.ClientCAs()).WithAnonymous()
	var got *User
	h := a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = UserFrom(r.Context())
	}), nil)
	for _, c := range []struct {
		cert   *x509.Certificate
		status int
		user   string
	}{
		{nil, http.StatusOK, "system:anonymous"},
		{adminCert(t, p), http.StatusOK, AdminUser},
		{adminCert(t, newPKI(t)), http.StatusUnauthorized, ""},
	} {
		got = nil
		r := requestWith("/api")
		if c.cert != nil {
			r = requestWith("/api", c.cert)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		name := ""
		if got != nil {
			name = got.Name
		}
		if rec.Code != c.status || name != c.user {
			t.Errorf("certificate %v: %d as %q, want %d as %q", c.cert != nil, rec.Code, name, c.status, c.user)
		}
	}
}

// TestVerifiedMemoryIsBounded: the memory of verified chains never holds
// more than maxVerified, dropping expired entries first.
func TestVerifiedMemoryIsBounded(t *testing.T) {
	a := NewAuthenticator(x509.NewCertPool())
	roots := a.roots()
	a.verifiedWith = roots
	now := time.Now()
	keep := sha256.Sum256([]byte("keep"))
	a.remember(keep, now.Add(time.Hour), now, roots)
	for i := 1; i < maxVerified; i++ {
		a.remember(sha256.Sum256([]byte(fmt.Sprint(i))), now.Add(-time.Second), now, roots)
	}
	a.remember(sha256.Sum256([]byte("new")), now.Add(time.Hour), now, roots)
	if _, ok := a.verified[keep]; !ok || len(a.verified) != 2 {
		t.Fatalf("after evicting expired entries: %d entries, unexpired kept %v", len(a.verified), ok)
	}
	for i := 0; i < 3*maxVerified; i++ {
		a.remember(sha256.Sum256([]byte(fmt.Sprint("live", i))), now.Add(time.Hour), now, roots)
		if len(a.verified) > maxVerified {
			t.Fatalf("%d entries remembered, bound %d", len(a.verified), maxVerified)
		}
	}
}
