package server

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/kapi-dev/kapi/internal/auth"
)

// fakeConn is a connection that only records whether it was closed and
// blocks its writes while told to.
type fakeConn struct {
	net.Conn
	closed  chan struct{}
	writing sync.Mutex
}

func newFakeConn() *fakeConn { return &fakeConn{closed: make(chan struct{})} }

func (c *fakeConn) Close() error {
	close(c.closed)
	return nil
}

func (c *fakeConn) Write(b []byte) (int, error) {
	c.writing.Lock()
	defer c.writing.Unlock()
	return len(b), nil
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

// respondingConn is a counting connection tracked by conns that has a
// request open and has just written its response.
func respondingConn(conns *connections) (*fakeConn, *countingConn) {
	fake := newFakeConn()
	conn := &countingConn{Conn: fake}
	conns.track(conn, http.StateNew)
	conns.track(conn, http.StateActive)
	conn.Write([]byte("response"))
	return fake, conn
}

// TestShutdownClosesIdleQuietConnections: on shutdown a connection is
// closed once it has no request open and nothing was written to it
// since the last look; one handed over or closed already is left alone.
func TestShutdownClosesIdleQuietConnections(t *testing.T) {
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

	conns.closeQuietOnce()
	if !idle.wasClosed(t) {
		t.Error("an idle connection was left open")
	}
	if busy.wasClosed(t) {
		t.Fatal("a connection was closed under its open request")
	}
	conns.track(busy, http.StateIdle)
	conns.closeQuietOnce()
	if !busy.wasClosed(t) {
		t.Error("a connection was left open after its last request ended")
	}
	if hijacked.wasClosed(t) || gone.wasClosed(t) {
		t.Error("a hijacked or closed connection was closed again")
	}
	if len(conns.conns) != 0 {
		t.Errorf("%d connections still tracked", len(conns.conns))
	}
}

// TestShutdownWaitsForAnIdleConnectionsWrites: an idle connection is
// closed only once a whole look went by without a write to it and no
// write is under way (HTTP/2 reports a connection idle before it writes
// the last frame of its last stream).
func TestShutdownWaitsForAnIdleConnectionsWrites(t *testing.T) {
	var conns connections
	fake, conn := respondingConn(&conns)
	conns.track(conn, http.StateIdle)

	conns.closeQuietOnce() // the first look sees the response's write
	if fake.wasClosed(t) {
		t.Fatal("a connection was closed right after a write")
	}
	conn.Write([]byte("last frame"))
	conns.closeQuietOnce()
	if fake.wasClosed(t) {
		t.Fatal("a connection was closed with a write since the last look")
	}
	fake.writing.Lock()
	go conn.Write([]byte("to a slow reader"))
	for conn.writing.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	conns.closeQuietOnce()
	conns.closeQuietOnce()
	if fake.wasClosed(t) {
		t.Fatal("a connection was closed under a write")
	}
	fake.writing.Unlock()
	for conn.writing.Load() != 0 {
		time.Sleep(time.Millisecond)
	}
	conns.closeQuietOnce() // sees the write that ended
	conns.closeQuietOnce()
	if !fake.wasClosed(t) {
		t.Error("a quiet idle connection was left open")
	}
}

// TestConnectionGoneIdleStaysForALook: the HTTP/2 server reports a
// connection idle as it queues its last frame, and writes the frame a
// moment later; a connection gone idle since the last look, with nothing
// written since, is closed only at the look after the next.
func TestConnectionGoneIdleStaysForALook(t *testing.T) {
	var conns connections
	fake, conn := respondingConn(&conns)
	conns.closeQuietOnce() // sees the response's write
	conns.track(conn, http.StateIdle)
	conns.closeQuietOnce()
	if fake.wasClosed(t) {
		t.Fatal("a connection was closed at the first look after it went idle: its last frame may not be out")
	}
	conns.closeQuietOnce()
	if !fake.wasClosed(t) {
		t.Error("an idle connection quiet for a whole look was left open")
	}
}

// TestShutdownEndsWithItsLastConnection: the looks of a shutdown go on
// while a connection has a request open, and report the end once they
// have closed the last one, for the shutdown to return then.
func TestShutdownEndsWithItsLastConnection(t *testing.T) {
	var conns connections
	idle, busy := newFakeConn(), newFakeConn()
	for _, c := range []*fakeConn{idle, busy} {
		conns.track(c, http.StateNew)
		conns.track(c, http.StateActive)
	}
	conns.track(idle, http.StateIdle)
	ended := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go conns.closeQuiet(ctx, func() { close(ended) })

	if !idle.wasClosed(t) {
		t.Fatal("an idle connection was left open")
	}
	select {
	case <-ended:
		t.Fatal("the shutdown was told every connection is closed while one had a request open")
	case <-time.After(3 * quietInterval):
	}
	conns.track(busy, http.StateIdle)
	if !busy.wasClosed(t) {
		t.Fatal("a connection was left open after its last request ended")
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the shutdown was not told its last connection is closed")
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

// TestResponsesEndingDuringShutdownArriveWhole: HTTP/2 responses still
// being written when the shutdown begins reach the client whole, and the
// shutdown ends without waiting for the client to hang up.
func TestResponsesEndingDuringShutdownArriveWhole(t *testing.T) {
	const body = 256 << 10
	started := make(chan struct{}, 8)
	release := make(chan struct{})
	var conns connections
	pki, err := auth.LoadOrCreate(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			started <- struct{}{}
			<-release
			io.WriteString(w, strings.Repeat("x", body))
		}),
		TLSConfig: pki.TLSConfig(pki.ClientCAs),
		ConnState: conns.track,
	}
	if err := configureHTTP2(srv); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.ServeTLS(conns.listen(l), "", "")
	client := &http.Client{Transport: &http2.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

	const requests = 8
	results := make(chan error, requests)
	for range requests {
		go func() {
			resp, err := client.Get("https://" + l.Addr().String())
			if err != nil {
				results <- err
				return
			}
			defer resp.Body.Close()
			n, err := io.Copy(io.Discard, resp.Body)
			if err == nil && n != body {
				err = io.ErrUnexpectedEOF
			}
			results <- err
		}()
	}
	for range requests {
		<-started
	}
	shutdown := make(chan error, 1)
	go func() { shutdown <- conns.shutdown(context.Background(), srv) }()
	time.Sleep(10 * time.Millisecond) // the GOAWAYs are on their way
	close(release)
	for range requests {
		if err := <-results; err != nil {
			t.Errorf("a response ending during the shutdown: %v", err)
		}
	}
	if err := <-shutdown; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}
