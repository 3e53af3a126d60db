package loopback

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/internal/auth"
)

// whoAmI answers with the user of the request's connection.
var whoAmI = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	u, ok := auth.UserFrom(r.Context())
	if !ok {
		http.Error(w, "nobody", http.StatusUnauthorized)
		return
	}
	io.WriteString(w, u.Name+" "+strings.Join(u.Groups, ","))
})

func serve(t *testing.T) *Listener {
	t.Helper()
	l := NewListener()
	srv := NewServer(whoAmI)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve ended with %v", err)
		}
	})
	return l
}

// TestRequestsCarryTheDialledUser: each client's requests reach the
// handler as the user its configuration was made for, also when two
// clients of different users run side by side.
func TestRequestsCarryTheDialledUser(t *testing.T) {
	l := serve(t)
	for _, u := range []*auth.User{
		{Name: "system:kube-controller-manager", Groups: []string{"system:authenticated"}},
		{Name: "alice", Groups: []string{"devs", "system:authenticated"}},
	} {
		client, err := rest.HTTPClientFor(l.Config(u, "test"))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second request reuses the connection
			resp, err := client.Get(Host + "/whoami")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := u.Name + " " + strings.Join(u.Groups, ","); string(body) != want {
				t.Fatalf("answered %q, want %q", body, want)
			}
		}
	}
}

// TestOtherConnectionsCarryNoUser: a connection that did not come from a
// Listener (a TCP one) gets no user from ConnContext.
func TestOtherConnectionsCarryNoUser(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(whoAmI)
	go srv.Serve(tcp)
	defer srv.Close()
	resp, err := http.Get("http://" + tcp.Addr().String() + "/whoami")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("TCP request answered %d, want 401", resp.StatusCode)
	}
}

// TestDialAfterClose: a closed Listener refuses new connections, and a
// dial without a user is refused.
func TestDialAfterClose(t *testing.T) {
	l := NewListener()
	if _, err := l.Dial(context.Background(), nil); err == nil {
		t.Fatal("dial without a user succeeded")
	}
	l.Close()
	if _, err := l.Dial(context.Background(), &auth.User{Name: "a"}); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial after close: %v, want connection refused", err)
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("accept after close: %v, want net.ErrClosed", err)
	}
}
