package builtin

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
)

// ProxyThrough makes the proxy sub-resources reach addr whatever address
// they ask for, until the test ends: kube refuses to proxy to loopback
// addresses, where a test's server listens. dialed tells the address last
// asked for.
func ProxyThrough(t testing.TB, addr string) (dialed func() string) {
	var mu sync.Mutex
	var last string
	saved := proxyTransport
	proxyTransport = &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, network, asked string) (net.Conn, error) {
		mu.Lock()
		last = asked
		mu.Unlock()
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	t.Cleanup(func() { proxyTransport = saved })
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}
