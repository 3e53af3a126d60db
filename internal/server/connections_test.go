package server

import (
	"net"
	"net/http"
	"testing"
	"time"
)

// fakeConn is a connection that only records whether it was closed.
type fakeConn struct {
	net.Conn
	closed chan struct{}
}

func newFakeConn() *fakeConn { return &fakeConn{closed: make(chan struct{})} }

func (c *fakeConn) Close() error {
	close(c.closed)
	return nil
}

func (c *fakeConn) wasClosed(t *testing.T) bool {
	t.Helper()
	select {
	case <-c.closed:
		return true
	case <-time.After(100 * time.Millisecond): // Close runs on its own goroutine
		return false
	}
}

// TestShutdownClosesIdleConnections: on shutdown a connection with no
// request open is closed at once, one with a request open once that
// request ends, and one handed over or closed already is left alone.
func TestShutdownClosesIdleConnections(t *testing.T) {
	var conns connections
	idle, busy, hijacked, gone := newFakeConn(), newFakeConn(), newFakeConn(), newFakeConn()
	for _, c := range []*fakeConn{idle, busy, hijacked, gone} {
		conns.track(c, http.StateNew)
		conns.track(c, http.StateActive)
	}
	conns.track(idle, http.StateIdle)
	conns.track(hijacked, http.StateHijacked)
	conns.track(gone, http.StateIdle)
	conns.track(gone, http.StateClosed)

	conns.closeIdle()
	if !idle.wasClosed(t) {
		t.Error("an idle connection was left open")
	}
	if busy.wasClosed(t) {
		t.Fatal("a connection was closed under its open request")
	}
	conns.track(busy, http.StateIdle)
	if !busy.wasClosed(t) {
		t.Error("a connection was left open after its last request ended")
	}
	if hijacked.wasClosed(t) || gone.wasClosed(t) {
		t.Error("a hijacked or closed connection was closed again")
	}
	if len(conns.idle) != 0 {
		t.Errorf("%d connections still tracked", len(conns.idle))
	}
}

// TestIdleConnectionsStayOpenUntilShutdown: a connection going idle is
// kept for the client's next request while the server runs.
func TestIdleConnectionsStayOpenUntilShutdown(t *testing.T) {
	var conns connections
	c := newFakeConn()
	conns.track(c, http.StateNew)
	conns.track(c, http.StateActive)
	conns.track(c, http.StateIdle)
	if c.wasClosed(t) {
		t.Fatal("an idle connection was closed while the server runs")
	}
}
