package auth

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	requestunion "k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/request/websocket"
	tokencache "k8s.io/apiserver/pkg/authentication/token/cache"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	"k8s.io/apiserver/pkg/authentication/user"
	endpointsfilters "k8s.io/apiserver/pkg/endpoints/filters"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/utils/clock"
)

// User is an authenticated identity: Kubernetes' own, so that the
// libraries kapi uses (admission, authorisation, reviews) read it from a
// request's context as they would in kube-apiserver.
type User = user.DefaultInfo

// UserFrom returns the user a request acts as (after impersonation).
func UserFrom(ctx context.Context) (*User, bool) {
	info, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return nil, false
	}
	return asUser(info), true
}

// WithUser returns ctx carrying the authenticated user.
func WithUser(ctx context.Context, u *User) context.Context {
	return genericapirequest.WithUser(ctx, u)
}

// maxVerified bounds the chains an Authenticator remembers. Only chains
// that verified are remembered, but every certificate the CA ever issued
// (and every rotation of a client's certificate) adds one, so without a
// bound a long-running server would keep them all. Past the bound, expired
// entries go first; if that frees nothing, the memory starts afresh, which
// costs one verification per connection and no more.
const maxVerified = 4096

// Authenticator authenticates requests by client certificates signed by
// one server's CA and, when given, by bearer tokens. Each server makes its
// own from its CA pool and nothing is shared between Authenticators, so
// servers in one process never accept each other's clients.
type Authenticator struct {
	// roots is the current pool client certificates must chain to.
	roots func() *x509.CertPool
	clock clock.PassiveClock
	// tokens authenticates bearer tokens; nil refuses them.
	tokens authenticator.Request
	// anonymous makes requests without credentials system:anonymous.
	anonymous bool

	mu sync.Mutex
	// verified remembers the certificate chains that passed verification,
	// so a connection's requests verify once: the key is a hash of the
	// whole DER of every certificate presented (not the signature alone,
	// which anyone who has seen a certificate could paste into a forged
	// one, since the TLS layer does not verify client certificates), the
	// value when the verified chain expires.
	verified map[[sha256.Size]byte]time.Time
	// verifiedWith is the pool the remembered chains were verified with:
	// when the roots change they are verified again.
	verifiedWith *x509.CertPool
}

// NewAuthenticator returns an Authenticator that accepts client
// certificates chaining to roots.
func NewAuthenticator(roots *x509.CertPool) *Authenticator {
	return NewAuthenticatorOf(func() *x509.CertPool { return roots })
}

// NewAuthenticatorOf is NewAuthenticator over CAs that may change: roots
// gives their current pool.
func NewAuthenticatorOf(roots func() *x509.CertPool) *Authenticator {
	return &Authenticator{roots: roots, clock: clock.RealClock{}, verified: map[[sha256.Size]byte]time.Time{}}
}

// ClientCAs is the pool client certificates are verified with now.
func (a *Authenticator) ClientCAs() *x509.CertPool { return a.roots() }

// WithTokens makes a accept the bearer tokens one of tokens
// authenticates, as kube-apiserver's token authenticators.
func (a *Authenticator) WithTokens(tokens ...authenticator.Token) *Authenticator {
	// kube-apiserver asks its structured JWT authenticators (none are
	// configured) before its other token authenticators, each through a
	// bearer token authenticator of its own: a token that none accepts is
	// refused by both, "[invalid bearer token, <why>]". Its other token
	// authenticators' answers are cached, accepted tokens for 10 s (so a
	// token stays good that long after its bound object goes). Browsers'
	// websockets present their token as a subprotocol. Every
	// authenticated user is in system:authenticated.
	cached := tokencache.New(tokenunion.New(tokens...), true, tokenSuccessTTL, 0)
	a.tokens = group.NewAuthenticatedGroupAdder(requestunion.New(
		bearertoken.New(tokenunion.NewFailOnError()),
		bearertoken.New(cached),
		websocket.NewProtocolAuthenticator(cached),
	))
	return a
}

// tokenSuccessTTL is how long kube-apiserver caches an accepted bearer
// token's user (its default, which no flag changes).
const tokenSuccessTTL = 10 * time.Second

// Tokens authenticates requests by their bearer token alone, as a
// TokenReview does; nil without tokens.
func (a *Authenticator) Tokens() authenticator.Request { return a.tokens }

// WithAnonymous makes requests without credentials those of
// system:anonymous (group system:unauthenticated), for the authorizer to
// decide, as --anonymous-auth does; without it they get 401.
func (a *Authenticator) WithAnonymous() *Authenticator {
	a.anonymous = true
	return a
}

// anonymousUser is who requests without credentials are with
// --anonymous-auth.
var anonymousUser = &User{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}

// AuthenticateRequest returns the user of a request that presents an
// unexpired client certificate chaining to the Authenticator's roots: the
// certificate's CN is the user name, its O the groups, plus
// system:authenticated.
func (a *Authenticator) AuthenticateRequest(r *http.Request) (*User, bool) {
	u, _ := a.certificateUser(r)
	return u, u != nil
}

// certificateUser is the user of the request's client certificate; nil
// with no error when it presents none.
func (a *Authenticator) certificateUser(r *http.Request) (*User, error) {
	leaf, err := a.verifiedClient(r)
	if leaf == nil {
		return nil, err
	}
	groups := append(append([]string(nil), leaf.Subject.Organization...), "system:authenticated")
	return &User{Name: leaf.Subject.CommonName, Groups: groups}, nil
}

// Middleware passes requests on to next with their user in their context
// (see UserFrom): a user the connection they came on already carries,
// one AuthenticateRequest accepts, one a bearer token names, or
// system:anonymous when anonymous requests are allowed; it answers the
// rest with unauthorized, or a plain 401 when unauthorized is nil. It is
// kube-apiserver's own authentication filter, so that the request loses
// its Authorization header and front proxy headers once authenticated,
// an anonymous request's HTTP/2 connection closes after it, and the
// attempts are in kube's authentication metrics.
func (a *Authenticator) Middleware(next http.Handler, unauthorized func(http.ResponseWriter, *http.Request)) http.Handler {
	if unauthorized == nil {
		unauthorized = func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
		}
	}
	return endpointsfilters.WithAuthentication(next, authenticator.RequestFunc(a.authenticate), http.HandlerFunc(unauthorized), nil, nil)
}

// authenticate answers who made a request, as kube-apiserver's
// authenticators do: a token that does not authenticate is refused,
// whatever else would let the request in; a header that holds no token
// ("Basic ...", "Bearer" alone) is as none, as kube-apiserver takes it. A
// client certificate that does not verify is refused too, unless a token
// authenticates the request: such a request is not an anonymous one.
func (a *Authenticator) authenticate(r *http.Request) (*authenticator.Response, bool, error) {
	if u, ok := UserFrom(r.Context()); ok {
		// The connection carries its user: it was opened in process
		// (see package loopback).
		return &authenticator.Response{User: u}, true, nil
	}
	u, certErr := a.certificateUser(r)
	if u != nil {
		return &authenticator.Response{User: u}, true, nil
	}
	if a.tokens != nil {
		resp, ok, err := a.tokens.AuthenticateRequest(r)
		if err != nil || ok {
			if ok {
				resp = &authenticator.Response{User: asUser(resp.User), Audiences: resp.Audiences}
			}
			return resp, ok, err
		}
	}
	if certErr != nil {
		return nil, false, certErr
	}
	if a.anonymous {
		return &authenticator.Response{User: anonymousUser}, true, nil
	}
	return nil, false, nil
}

// asUser is info as a User.
func asUser(info user.Info) *User {
	if u, ok := info.(*User); ok {
		return u
	}
	return &User{Name: info.GetName(), UID: info.GetUID(), Groups: info.GetGroups(), Extra: info.GetExtra()}
}

// verifiedClient returns the request's client certificate if it chains to
// the roots, is meant for client authentication and has not expired; else
// why it does not, or neither when the request presents none.
func (a *Authenticator) verifiedClient(r *http.Request) (*x509.Certificate, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, nil
	}
	now := a.clock.Now()
	leaf := r.TLS.PeerCertificates[0]
	if now.After(leaf.NotAfter) {
		return nil, fmt.Errorf("verifying certificate: %w", x509.CertificateInvalidError{Cert: leaf, Reason: x509.Expired,
			Detail: fmt.Sprintf("current time %s is after %s", now.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339))})
	}
	key := chainKey(r.TLS.PeerCertificates)
	roots := a.roots()
	a.mu.Lock()
	if roots != a.verifiedWith {
		clear(a.verified) // the CAs changed: a chain may no longer verify
		a.verifiedWith = roots
	}
	expiry, known := a.verified[key]
	if known && now.After(expiry) {
		delete(a.verified, key) // an intermediate expired: verify afresh
		known = false
	}
	a.mu.Unlock()
	if known {
		return leaf, nil
	}
	intermediates := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		intermediates.AddCert(c)
	}
	chains, err := leaf.Verify(x509.VerifyOptions{
		Roots: roots, Intermediates: intermediates, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, fmt.Errorf("verifying certificate: %w", err)
	}
	a.remember(key, chainsExpiry(chains), now, roots)
	return leaf, nil
}

// remember records a chain verified with roots, keeping the memory
// bounded; not if the roots have changed since.
func (a *Authenticator) remember(key [sha256.Size]byte, expiry, now time.Time, roots *x509.CertPool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if roots != a.verifiedWith {
		return
	}
	if len(a.verified) >= maxVerified {
		for k, exp := range a.verified {
			if now.After(exp) {
				delete(a.verified, k)
			}
		}
		if len(a.verified) >= maxVerified {
			clear(a.verified)
		}
	}
	a.verified[key] = expiry
}

// chainKey identifies the certificates a client presented, in order.
func chainKey(certs []*x509.Certificate) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	for _, c := range certs {
		binary.BigEndian.PutUint64(n[:], uint64(len(c.Raw)))
		h.Write(n[:])
		h.Write(c.Raw)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// chainsExpiry is when the last of chains stops being valid: a chain is
// valid until the first of its certificates expires.
func chainsExpiry(chains [][]*x509.Certificate) time.Time {
	var latest time.Time
	for _, chain := range chains {
		var first time.Time
		for i, c := range chain {
			if i == 0 || c.NotAfter.Before(first) {
				first = c.NotAfter
			}
		}
		if first.After(latest) {
			latest = first
		}
	}
	return latest
}
