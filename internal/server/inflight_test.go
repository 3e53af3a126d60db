package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestInFlightStopWaitsForRequests: stop returns only once the requests
// under way are done, and requests after it are refused without reaching
// the server.
func TestInFlightStopWaitsForRequests(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	served := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served++
		close(arrived)
		<-release
	}))
	defer srv.Close()

	var requests inFlight
	client, err := rest.HTTPClientFor(requests.client(&rest.Config{Host: srv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	go client.Get(srv.URL)
	<-arrived
	stopped := make(chan struct{})
	go func() {
		requests.stop()
		close(stopped)
	}()
	select {
	case <-stopped:
		t.Fatal("stop returned while a request was under way")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-stopped

	if _, err := client.Get(srv.URL); !errors.Is(err, errClientStopped) {
		t.Errorf("a request after stop: %v, want %v", err, errClientStopped)
	}
	if served != 1 {
		t.Errorf("the server saw %d requests, want 1", served)
	}
}

// TestInFlightStopWithNoneUnderWay returns at once.
func TestInFlightStopWithNoneUnderWay(t *testing.T) {
	var requests inFlight
	requests.stop()
}
