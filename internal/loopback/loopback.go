// Package loopback connects clients in the server's own process to its
// handlers without a network: the built-in controllers (and tests) use
// client-go as any client would, through the whole filter chain, but over
// in-memory connections that carry the identity they were opened with.
//
// A connection's identity is set when it is dialled, in process, so it
// cannot be claimed from outside: nothing that arrives over TCP is served
// by a Listener.
package loopback

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"syscall"

	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/internal/auth"
)

// Host is the address loopback clients are configured with; the dialler
// ignores it, so it only shows in their logs and errors.
const Host = "http://loopback.kapi"

// Listener is a net.Listener whose connections are dialled in process
// with Dial; serve it with an http.Server whose ConnContext is ConnContext.
type Listener struct {
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

var _ net.Listener = (*Listener)(nil)

// NewListener returns an open Listener.
func NewListener() *Listener {
	return &Listener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept waits for the next connection dialled to l.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close makes Accept and Dial fail from now on; connections already made
// stay open until their ends close them.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

// Addr implements net.Listener.
func (l *Listener) Addr() net.Addr { return addr{} }

// Dial opens a connection to l's server on behalf of user.
func (l *Listener) Dial(ctx context.Context, user *auth.User) (net.Conn, error) {
	if user == nil {
		return nil, errors.New("loopback: dial without a user")
	}
	client, server := net.Pipe()
	select {
	case l.conns <- &conn{Conn: server, user: user}:
		return client, nil
	case <-l.closed:
	case <-ctx.Done():
	}
	client.Close()
	server.Close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Refused, as dialling a port nobody listens on is: client-go retries
	// a GET that fails with a closed connection for ten seconds, as if the
	// server might come back, and none of kapi's clients should outlive it.
	return nil, &net.OpError{Op: "dial", Net: "pipe", Err: syscall.ECONNREFUSED}
}

// Config returns a client-go configuration whose requests reach l's
// server as user, introduced by userAgent (the default field manager of
// its writes, as for any client).
func (l *Listener) Config(user *auth.User, userAgent string) *rest.Config {
	return &rest.Config{
		Host:      Host,
		UserAgent: userAgent,
		// The server's own clients are not throttled on their side.
		QPS:   -1,
		Burst: -1,
		// They speak protobuf, as kube-apiserver's loopback client,
		// kube-controller-manager and kube-scheduler do: cheaper to decode
		// than JSON, and the bytes the watch cache keeps for every object
		// anyway. Resources without protobuf (custom resources) answer
		// in JSON.
		ContentConfig: rest.ContentConfig{
			ContentType:        "application/vnd.kubernetes.protobuf",
			AcceptContentTypes: "application/vnd.kubernetes.protobuf,application/json",
		},
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return l.Dial(ctx, user)
		},
	}
}

// ConnContext is the http.Server ConnContext that makes each request on a
// connection from l carry the connection's user (auth.UserFrom) and the
// mark of the server's own requests (FromServer).
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*conn); ok {
		return auth.WithUser(context.WithValue(ctx, fromServerKey{}, true), lc.user)
	}
	return ctx
}

type fromServerKey struct{}

// FromServer tells whether a request came from the server itself (its
// controllers, informers and admission plugins), over a loopback
// connection: limits meant for clients leave those out, as their number
// is the server's design, not its clients' doing.
func FromServer(ctx context.Context) bool {
	from, _ := ctx.Value(fromServerKey{}).(bool)
	return from
}

// conn is the server's end of a loopback connection.
type conn struct {
	net.Conn
	user *auth.User
}

type addr struct{}

func (addr) Network() string { return "loopback" }
func (addr) String() string  { return "loopback" }

// NewServer returns the http.Server that serves handler to l's
// connections: run its Serve(l).
func NewServer(handler http.Handler) *http.Server {
	return &http.Server{Handler: handler, ConnContext: ConnContext}
}
