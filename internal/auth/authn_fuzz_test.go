package auth

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes/fake"
)

// noObjects is a token getter for which nothing exists.
type noObjects struct{}

func notFound(r, name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: r}, name)
}

func (noObjects) GetServiceAccount(_ context.Context, _, name string) (*corev1.ServiceAccount, error) {
	return nil, notFound("serviceaccounts", name)
}
func (noObjects) GetPod(_ context.Context, _, name string) (*corev1.Pod, error) {
	return nil, notFound("pods", name)
}
func (noObjects) GetSecret(_ context.Context, _, name string) (*corev1.Secret, error) {
	return nil, notFound("secrets", name)
}
func (noObjects) GetNode(_ context.Context, name string) (*corev1.Node, error) {
	return nil, notFound("nodes", name)
}
func (noObjects) GetValidatingWebhookConfiguration(_ context.Context, name string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return nil, notFound("validatingwebhookconfigurations", name)
}
func (noObjects) GetMutatingWebhookConfiguration(_ context.Context, name string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return nil, notFound("mutatingwebhookconfigurations", name)
}

// FuzzBearerToken: whatever a client puts in its Authorization header,
// the server answers 401 (or lets the one static token in) and never
// panics.
func FuzzBearerToken(f *testing.F) {
	p := newPKI(f)
	tokens, err := NewServiceAccountTokens(TokenOptions{}, p.ServiceAccountKey, "127.0.0.1:6443", noObjects{}, fake.NewClientset().CoreV1())
	if err != nil {
		f.Fatal(err)
	}
	static := tokenfile.New(map[string]*user.DefaultInfo{"the-token": {Name: "tina"}})
	a := NewAuthenticator(p.ClientCAs()).WithTokens(static, tokens.Legacy, tokens.Authenticator)
	h := a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := UserFrom(r.Context())
		fmt.Fprint(w, u.Name)
	}), func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) })
	for _, seed := range []string{
		"Bearer the-token", "Bearer ", "Bearer eyJhbGciOiJFUzI1NiJ9.e30.", "Basic dXNlcjpwYXNz",
		"Bearer eyJhbGciOiJub25lIn0.eyJpc3MiOiJodHRwczovL2t1YmVybmV0ZXMuZGVmYXVsdC5zdmMuY2x1c3Rlci5sb2NhbCJ9.",
		"bearer the-token", "Bearer the-token extra", "\x00",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest(http.MethodGet, "https://kapi/api", nil)
		r.Header.Set("Authorization", header)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch {
		case w.Code == http.StatusOK && w.Body.String() != "tina":
			t.Fatalf("%q authenticated as %q", header, w.Body.String())
		case w.Code != http.StatusOK && w.Code != http.StatusUnauthorized:
			t.Fatalf("%q: status %d", header, w.Code)
		}
	})
}

// FuzzClientCertificate: a certificate a client presents that kapi's CA
// did not sign never authenticates, however it is made.
func FuzzClientCertificate(f *testing.F) {
	p := newPKI(f)
	a := NewAuthenticator(p.ClientCAs())
	other := newPKI(f)
	f.Add(adminCert(f, other).Raw)
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, der []byte) {
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			return // the TLS layer refuses what does not parse
		}
		if u, ok := a.AuthenticateRequest(requestWith("/api", cert)); ok {
			t.Fatalf("a certificate kapi did not issue authenticated as %q", u.Name)
		}
	})
}
