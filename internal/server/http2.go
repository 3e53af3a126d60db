package server

import (
	"net/http"
	"time"

	"golang.org/x/net/http2"
)

// http2Body is the largest request body kube-apiserver takes in one
// HTTP/2 frame and buffers per stream (256 KiB: nearly every object).
const http2Body = 256 << 10

// http2Streams is the concurrent streams a client may open on one
// connection, net/http's default (kube-apiserver allows 100: client-go
// then opens more connections for many watches, each with its TLS
// handshake).
const http2Streams = 250

// idleTimeout is how long a connection without requests stays open, as in
// kube-apiserver (HTTP/1.1 and HTTP/2 alike).
const idleTimeout = 90 * time.Second

// configureHTTP2 serves HTTP/2 with golang.org/x/net's server, set up as
// kube-apiserver sets it up, and with its random write scheduler.
//
// The scheduler is why: net/http's own HTTP/2 server (and x/net's default)
// keeps every open stream of a connection in one ring and walks it to
// find a frame to write, twice per frame (the second walk finds nothing
// and lets the connection flush). A connection carrying 250 watches walked
// 500 streams for each event it wrote: a fifth of the server's CPU when
// 1,000 watchers received events. The random scheduler holds only the
// streams with frames waiting, so finding one costs the same whatever the
// number of idle streams. Each stream's frames still go in order; which
// waiting stream goes next is arbitrary, as HTTP/2 leaves it to the
// server without client priorities (kapi honours none, as net/http's
// round robin did not).
func configureHTTP2(srv *http.Server) error {
	return http2.ConfigureServer(srv, &http2.Server{
		IdleTimeout:                  idleTimeout,
		MaxConcurrentStreams:         http2Streams,
		MaxUploadBufferPerStream:     http2Body,
		MaxUploadBufferPerConnection: http2Body * http2Streams,
		MaxReadFrameSize:             http2Body,
		// Deprecated in x/net: from Go 1.27 its server is net/http's and
		// a scheduler given here is ignored; until then it is the one way
		// to choose one.
		NewWriteScheduler: http2.NewRandomWriteScheduler,
	})
}
