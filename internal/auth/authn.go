package auth

import (
	"context"
	"crypto/x509"
	"net/http"
	"sync"
	"time"
)

// User is an authenticated identity.
type User struct {
	Name   string
	Groups []string
}

type userKey struct{}

// UserFrom returns the user a request was authenticated as.
func UserFrom(ctx context.Context) (*User, bool) {
	u, ok := ctx.Value(userKey{}).(*User)
	return u, ok
}

// publicPaths answer without credentials, as kube-apiserver's
// system:public-info-viewer role allows.
var publicPaths = map[string]bool{"/healthz": true, "/livez": true, "/readyz": true, "/version": true}

// Authenticate admits requests that present a client certificate signed by
// one of roots and calls unauthorized for the rest, except the public health
// and version paths.
func Authenticate(next http.Handler, roots *x509.CertPool, unauthorized func(http.ResponseWriter, *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if leaf := verifiedClient(r, roots); leaf != nil {
			groups := append(append([]string(nil), leaf.Subject.Organization...), "system:authenticated")
			u := &User{Name: leaf.Subject.CommonName, Groups: groups}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
			return
		}
		if publicPaths[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		unauthorized(w, r)
	})
}

// verifiedClient returns the request's client certificate if it chains to
// roots and is meant for client authentication.
func verifiedClient(r *http.Request, roots *x509.CertPool) *x509.Certificate {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil
	}
	leaf := r.TLS.PeerCertificates[0]
	if _, ok := verified.Load(string(leaf.Signature)); ok && time.Now().Before(leaf.NotAfter) {
		return leaf
	}
	intermediates := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		intermediates.AddCert(c)
	}
	_, err := leaf.Verify(x509.VerifyOptions{
		Roots: roots, Intermediates: intermediates,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil
	}
	verified.Store(string(leaf.Signature), struct{}{})
	return leaf
}

// verified remembers certificates that passed verification (by signature,
// which a forger cannot reproduce), so a connection's requests verify once.
var verified sync.Map
