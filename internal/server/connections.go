package server

import (
	"net"
	"net/http"
	"sync"
)

// connections follows the state of every client connection, so that a
// shutdown can close at once those with no request open.
//
// net/http's Shutdown does that for HTTP/1 connections, but it counts an
// HTTP/2 connection as active for as long as it is open. x/net's HTTP/2
// server answers a shutdown with a GOAWAY and, once the connection's
// last stream has ended, waits a second for the client to hang up before
// it closes the connection itself; Go's client keeps an idle connection
// open. So once any client had connected, stopping the server took a
// second longer than its requests: every test of a controller that
// stopped its kapitest server paid it. The HTTP/2 server reports its
// connections' states (active while a stream is open, idle when none
// is) through the same ConnState hook as net/http's HTTP/1 connections.
type connections struct {
	mu      sync.Mutex
	idle    map[net.Conn]bool // open connections: true with no request open
	closing bool              // set by closeIdle: each connection is closed once idle
}

// track is the server's ConnState hook.
func (c *connections) track(conn net.Conn, state http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch state {
	case http.StateClosed, http.StateHijacked:
		delete(c.idle, conn)
		return
	case http.StateIdle:
		if c.closing {
			delete(c.idle, conn)
			// Not on this goroutine: it may be the connection's own,
			// and a TLS connection's Close writes its close alert.
			go conn.Close()
			return
		}
	}
	if c.idle == nil {
		c.idle = map[net.Conn]bool{}
	}
	c.idle[conn] = state == http.StateIdle
}

// closeIdle closes the connections with no request open, and from now
// on each other one as soon as its last request ends. A request that
// crosses the close on the wire fails as it would against the closed
// listener; the server is going away either way.
func (c *connections) closeIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closing = true
	for conn, idle := range c.idle {
		if idle {
			delete(c.idle, conn)
			go conn.Close()
		}
	}
}
