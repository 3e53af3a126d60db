package filters

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/warning"

	"github.com/kapi-dev/kapi/internal/auth"
)

// admitAll authenticates every request as one administrator.
type admitAll struct{}

func (admitAll) Middleware(next http.Handler, _ func(http.ResponseWriter, *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user := &auth.User{Name: "admin", Groups: []string{"system:masters"}}
		next.ServeHTTP(w, r.WithContext(auth.WithUser(r.Context(), user)))
	})
}

// What the handlers rely on the chain for: when the request arrived, a
// deadline for short requests only, and warnings that reach the response
// for every request.
func TestChainGivesTimestampDeadlineAndWarnings(t *testing.T) {
	for _, tc := range []struct {
		target       string
		wantDeadline bool
	}{
		{"/api/v1/namespaces/default/configmaps", true},
		{"/api/v1/namespaces/default/configmaps?timeout=5s", true},
		{"/api/v1/namespaces/default/configmaps?watch=1", false},
	} {
		t.Run(tc.target, func(t *testing.T) {
			var received time.Time
			var deadline time.Time
			var hasDeadline bool
			done := make(chan struct{})
			h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx := r.Context()
				received, _ = genericapirequest.ReceivedTimestampFrom(ctx)
				deadline, hasDeadline = ctx.Deadline()
				warning.AddWarning(ctx, "", "a field is deprecated")
				w.WriteHeader(http.StatusOK)
			}), Config{Authenticator: admitAll{}, Done: done})
			defer close(done)

			before := time.Now()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.target, nil).WithContext(context.Background()))

			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if received.Before(before) || received.After(time.Now()) {
				t.Errorf("received timestamp %v, want the time the request arrived (after %v)", received, before)
			}
			if hasDeadline != tc.wantDeadline {
				t.Errorf("deadline %v (%v), want one: %v", deadline, hasDeadline, tc.wantDeadline)
			}
			if got := rec.Header().Values("Warning"); len(got) != 1 || got[0] != `299 - "a field is deprecated"` {
				t.Errorf("Warning headers %q, want the handler's warning", got)
			}
		})
	}
}

// A token authenticator's warnings reach the client too, as in
// kube-apiserver, whose warnings recorder is outside authentication: a
// bearer token after two spaces is ignored, with a warning on the 401.
func TestAuthenticationWarningsReachTheClient(t *testing.T) {
	tokens := authenticator.TokenFunc(func(_ context.Context, token string) (*authenticator.Response, bool, error) {
		return &authenticator.Response{User: &user.DefaultInfo{Name: "alice"}}, token == "good", nil
	})
	done := make(chan struct{})
	defer close(done)
	h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	}), Config{Authenticator: auth.NewAuthenticator(x509.NewCertPool()).WithTokens(tokens), Done: done})

	for _, tc := range []struct {
		header      string
		wantCode    int
		wantWarning bool
	}{
		{"Bearer good", http.StatusOK, false},
		{"Bearer  good", http.StatusUnauthorized, true},
	} {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps", nil)
		r.Header.Set("Authorization", tc.header)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != tc.wantCode {
			t.Errorf("%q: status %d, want %d", tc.header, rec.Code, tc.wantCode)
		}
		warnings := rec.Header().Values("Warning")
		if got := len(warnings) == 1 && strings.Contains(warnings[0], "extra space before the bearer token"); got != tc.wantWarning {
			t.Errorf("%q: Warning headers %q, want the extra space warning: %v", tc.header, warnings, tc.wantWarning)
		}
	}
}
