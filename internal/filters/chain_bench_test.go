package filters

import (
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kapi-dev/kapi/internal/auth"
)

// BenchmarkChainGet is what the chain costs a GET of one object: an
// anonymous user authenticated, authorised by the default authorizer,
// measured and audited (no policy), answered by a handler that writes a
// small body.
func BenchmarkChainGet(b *testing.B) {
	done := make(chan struct{})
	defer close(done)
	body := []byte(`{"kind":"ConfigMap"}`)
	h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	}), Config{Authenticator: auth.NewAuthenticator(x509.NewCertPool()).WithAnonymous(), Done: done})
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps/a", nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
