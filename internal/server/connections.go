package server

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// connections follows every client connection's state, so that a
// shutdown can close each one once it has no request open and has
// written everything it had to write.
//
// net/http's Shutdown does that for HTTP/1 connections, but it counts an
// HTTP/2 connection as active for as long as it is open. x/net's HTTP/2
// server answers a shutdown with a GOAWAY and, once the connection's
// last stream has ended, waits a second for the client to hang up before
// it closes the connection itself; Go's client keeps an idle connection
// open. So once any client had connected, stopping the server took a
// second longer than its requests: every test of a controller that
// stopped its kapitest server paid it.
//
// The HTTP/2 server reports a connection idle (no stream open) through
// the same ConnState hook as net/http's HTTP/1 connections, but it does
// so as it queues a stream's last frame, before it writes it out, and it
// writes the GOAWAY asynchronously too. So a connection is closed only
// once it is idle and nothing was written to it for a whole quiet
// interval, with no write under way: its last response and the GOAWAY
// have gone out, and the client knows which of its requests were served.
type connections struct {
	mu    sync.Mutex
	conns map[net.Conn]*connState // by the connection the hook names
}

// connState is what a shutdown needs to know of one connection.
type connState struct {
	idle       bool
	raw        *countingConn // nil when the connection is not one of listen's
	seenWrites uint64        // raw's writes at the last look of closeQuiet, or unseen
}

// unseen is a connection's seenWrites when it has just gone idle: the
// HTTP/2 server reports a connection idle as it queues the last frame of
// its last stream, and flushes that frame a moment later, so the next
// look must not find it quiet; the one after may.
const unseen = ^uint64(0)

// quietInterval is how long a shutdown waits, at least, for an idle
// connection's last writes. x/net writes a stream's last frame and the
// GOAWAY within microseconds of queueing them; a client slow to read
// keeps a write under way, which holds the close back however long it
// takes.
const quietInterval = 20 * time.Millisecond

// listen makes the listener's connections count their writes.
func (c *connections) listen(l net.Listener) net.Listener { return countingListener{l} }

// track is the server's ConnState hook.
func (c *connections) track(conn net.Conn, state http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch state {
	case http.StateClosed, http.StateHijacked:
		delete(c.conns, conn)
		return
	}
	if c.conns == nil {
		c.conns = map[net.Conn]*connState{}
	}
	st := c.conns[conn]
	if st == nil {
		st = &connState{raw: rawConn(conn)}
		c.conns[conn] = st
	}
	idle := state == http.StateIdle
	if idle && !st.idle {
		st.seenWrites = unseen
	}
	st.idle = idle
}

// shutdown shuts srv down as http.Server.Shutdown does (no new
// connections, running requests finish within ctx), closing each of its
// connections once it is idle and quiet rather than when the client
// hangs up, and returning once the last one is closed. Shutdown itself
// would notice that only at its next look, and it looks at growing
// intervals (1, 2, 4, ... ms): a stop that closed its connections at
// 40 ms returned at 63.
func (c *connections) shutdown(ctx context.Context, srv *http.Server) error {
	waiting, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go c.closeQuiet(waiting, func() { stop(errAllClosed) })
	err := srv.Shutdown(waiting)
	if context.Cause(waiting) == errAllClosed {
		if c.open() == 0 {
			return nil
		}
		// A connection accepted as the listeners closed reported itself
		// after the looks had found none left (Shutdown has waited for
		// the listeners since): close it as the others.
		return c.shutdown(ctx, srv)
	}
	return err
}

// open counts the connections not closed yet.
func (c *connections) open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.conns)
}

// errAllClosed ends Shutdown's wait once closeQuiet has closed every
// connection.
var errAllClosed = errors.New("every client connection is closed")

// firstLook is when a shutdown first looks at the connections, to note
// their writes: Shutdown has by then sent each idle HTTP/2 connection its
// GOAWAY (x/net writes it within microseconds; nothing waits for it, and
// a connection closed before it went out had no request open anyway), and
// a connection is closed at a later look only if nothing was written to
// it since.
const firstLook = quietInterval / 4

// closeQuiet closes the connections that are idle and were written
// nothing since the last look, looking first after firstLook and then
// every quiet interval, until none is left (then it calls allClosed) or
// ctx ends. It starts as the server's Shutdown begins (which sends the
// GOAWAYs).
func (c *connections) closeQuiet(ctx context.Context, allClosed func()) {
	look := time.NewTimer(firstLook)
	defer look.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-look.C:
			if c.closeQuietOnce() == 0 {
				allClosed()
				return
			}
			look.Reset(quietInterval)
		}
	}
}

// closeQuietOnce closes the idle and quiet connections and returns how
// many connections are left open.
func (c *connections) closeQuietOnce() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for conn, st := range c.conns {
		if st.quiet() && st.idle {
			delete(c.conns, conn)
			// Not under the lock: a TLS connection's Close writes its
			// close alert.
			go conn.Close()
		}
	}
	return len(c.conns)
}

// quiet reports whether nothing was written to the connection since the
// last call and no write is under way.
func (st *connState) quiet() bool {
	if st.raw == nil {
		return true
	}
	writes := st.raw.writes.Load()
	quiet := writes == st.seenWrites && st.raw.writing.Load() == 0
	st.seenWrites = writes
	return quiet
}

// rawConn is the counting connection under conn, if it is one.
func rawConn(conn net.Conn) *countingConn {
	if t, ok := conn.(*tls.Conn); ok {
		conn = t.NetConn()
	}
	raw, _ := conn.(*countingConn)
	return raw
}

// countingListener accepts countingConns.
type countingListener struct{ net.Listener }

func (l countingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn}, nil
}

// countingConn counts the writes to a connection, and those under way.
type countingConn struct {
	net.Conn
	writing atomic.Int32
	writes  atomic.Uint64
}

// Write counts the write before it ends it, so that a look that finds
// no write under way also finds the count moved.
func (c *countingConn) Write(b []byte) (int, error) {
	c.writing.Add(1)
	n, err := c.Conn.Write(b)
	c.writes.Add(1)
	c.writing.Add(-1)
	return n, err
}
