package handlers

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// writeCounter is a response writer that counts the writes the handler
// makes and tells when the body holds a string.
type writeCounter struct {
	*httptest.ResponseRecorder
	mu     sync.Mutex
	writes int
	body   bytes.Buffer
	want   []byte
	seen   chan struct{}
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	w.body.Write(p)
	if w.seen != nil && bytes.Contains(w.body.Bytes(), w.want) {
		close(w.seen)
		w.seen = nil
	}
	return len(p), nil
}

func (w *writeCounter) Flush() {}

// TestStreamingListIsWrittenInLargeWrites: the initial events of a
// streaming list go to the response in writes of many events each (the
// HTTP/2 server hands every write to its connection's goroutine), and all
// of them, then the bookmark that ends them, reach the client.
func TestStreamingListIsWrittenInLargeWrites(t *testing.T) {
	const pods = 300
	api, _ := benchAPI(t, pods)
	w := &writeCounter{ResponseRecorder: httptest.NewRecorder(), want: []byte(`"k8s.io/initial-events-end":"true"`), seen: make(chan struct{})}
	seen := w.seen
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet,
		"/api/v1/namespaces/default/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		api.ServeHTTP(w, req)
	}()
	select {
	case <-seen:
	case <-time.After(30 * time.Second):
		t.Fatal("no initial-events-end bookmark")
	}
	cancel()
	<-done
	w.mu.Lock()
	defer w.mu.Unlock()
	if added := bytes.Count(w.body.Bytes(), []byte(`{"type":"ADDED"`)); added != pods {
		t.Fatalf("%d ADDED events before the bookmark, want %d", added, pods)
	}
	if most := w.body.Len()/burstSize + 2; w.writes > most {
		t.Errorf("%d initial events (%d bytes) took %d writes, want at most %d", pods, w.body.Len(), w.writes, most)
	}
}
