package server

import (
	"errors"
	"net/http"
	"sync"

	"k8s.io/client-go/rest"
)

// inFlight counts the requests of a client under way, so that a stopping
// server can wait for them before it closes storage. It is for the clients
// of kube's code that starts goroutines of its own (an informer, a sync
// loop, an event broadcaster) which the server cannot wait for: it waits
// instead for what they asked of it, and refuses what they ask later.
type inFlight struct {
	mu      sync.Mutex
	n       int
	stopped bool
	idle    chan struct{} // closed once stopped with none under way
}

var errClientStopped = errors.New("the server is stopping")

// client is cfg with its requests counted.
func (f *inFlight) client(cfg *rest.Config) *rest.Config {
	counted := rest.CopyConfig(cfg)
	counted.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if !f.start() {
				return nil, errClientStopped
			}
			defer f.end()
			return next.RoundTrip(req)
		})
	})
	return counted
}

func (f *inFlight) start() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return false
	}
	f.n++
	return true
}

func (f *inFlight) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.stopped && f.n == 0 {
		close(f.idle)
	}
}

// stop refuses the requests to come and returns once those under way are
// done. (A watch is under way until its response has started; the stream
// itself ends when the server closes its connections.)
func (f *inFlight) stop() {
	f.mu.Lock()
	f.stopped = true
	f.idle = make(chan struct{})
	if f.n == 0 {
		close(f.idle)
	}
	idle := f.idle
	f.mu.Unlock()
	<-idle
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (fn roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return fn(req) }
