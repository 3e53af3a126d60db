package auth

import (
	"context"
	"net/http"
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
// the CA (verified by TLS) and calls unauthorized for the rest, except the
// public health and version paths.
func Authenticate(next http.Handler, unauthorized func(http.ResponseWriter, *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
			leaf := r.TLS.VerifiedChains[0][0]
			u := &User{Name: leaf.Subject.CommonName, Groups: append(leaf.Subject.Organization, "system:authenticated")}
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
