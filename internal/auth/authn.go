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

// WithUser returns ctx carrying the authenticated user.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// maxVerified bounds the certificates an Authenticator remembers; past it
// the memory starts afresh, which costs one verification per connection.
const maxVerified = 4096

// Authenticator authenticates requests by client certificates signed by
// one server's CA. Each server has its own, so servers in one process never
// accept each other's clients.
type Authenticator struct {
	roots *x509.CertPool

	mu sync.Mutex
	// verified remembers certificates that passed verification (by
	// signature, which a forger cannot reproduce), so a connection's
	// requests verify once.
	verified map[string]struct{}
}

// NewAuthenticator returns an Authenticator trusting roots.
func NewAuthenticator(roots *x509.CertPool) *Authenticator {
	return &Authenticator{roots: roots, verified: map[string]struct{}{}}
}

// AuthenticateRequest returns the user of a request that presents a client
// certificate signed by the CA: the certificate's CN is the user name, its
// O the groups, plus system:authenticated.
func (a *Authenticator) AuthenticateRequest(r *http.Request) (*User, bool) {
	leaf := a.verifiedClient(r)
	if leaf == nil {
		return nil, false
	}
	groups := append(append([]string(nil), leaf.Subject.Organization...), "system:authenticated")
	return &User{Name: leaf.Subject.CommonName, Groups: groups}, true
}

// verifiedClient returns the request's client certificate if it chains to
// the roots, is meant for client authentication and has not expired.
func (a *Authenticator) verifiedClient(r *http.Request) *x509.Certificate {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil
	}
	leaf := r.TLS.PeerCertificates[0]
	if time.Now().After(leaf.NotAfter) {
		return nil
	}
	a.mu.Lock()
	_, known := a.verified[string(leaf.Signature)]
	a.mu.Unlock()
	if known {
		return leaf
	}
	intermediates := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		intermediates.AddCert(c)
	}
	_, err := leaf.Verify(x509.VerifyOptions{
		Roots: a.roots, Intermediates: intermediates,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil
	}
	a.mu.Lock()
	if len(a.verified) >= maxVerified {
		a.verified = map[string]struct{}{}
	}
	a.verified[string(leaf.Signature)] = struct{}{}
	a.mu.Unlock()
	return leaf
}
