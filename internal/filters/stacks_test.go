package filters

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/request"
)

// requestFor is a request whose parsed info says verb.
func requestFor(verb string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps", nil)
	return r.WithContext(request.WithInfo(r.Context(), &request.Info{IsResourceRequest: true, Verb: verb, Resource: "configmaps"}))
}

func newWarmStacks(next http.Handler) *warmStacks {
	return &warmStacks{next: next}
}

// counts tells how many workers there are and how many of them are idle.
func (p *warmStacks) counts() (workers, idle int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.workers, len(p.idle)
}

func TestShortRequestsShareOneWorker(t *testing.T) {
	var callers sync.Map
	p := newWarmStacks(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		callers.Store(goroutineID(), true)
		io.WriteString(w, "served")
	}))
	for range 10 {
		rec := httptest.NewRecorder()
		p.serve(rec, requestFor("get"))
		if rec.Body.String() != "served" {
			t.Fatalf("body %q, want the handler's", rec.Body.String())
		}
	}
	if n, _ := p.counts(); n != 1 {
		t.Errorf("%d workers after ten requests one after another, want 1", n)
	}
	handlers := 0
	callers.Range(func(any, any) bool { handlers++; return true })
	if handlers != 1 {
		t.Errorf("the requests ran on %d goroutines, want the one worker's", handlers)
	}
	if _, ok := callers.Load(goroutineID()); ok {
		t.Error("a request ran on its caller's goroutine, not the worker's")
	}
}

func TestStreamingRequestsStayOnTheirGoroutine(t *testing.T) {
	for _, r := range []*http.Request{
		requestFor("watch"),
		func() *http.Request {
			r := requestFor("get")
			info, _ := request.From(r.Context())
			info.Subresource = "log"
			return r
		}(),
		httptest.NewRequest(http.MethodGet, "/healthz", nil), // no request info
	} {
		caller := goroutineID()
		var ran uint64
		p := newWarmStacks(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = goroutineID() }))
		p.serve(httptest.NewRecorder(), r)
		if workers, _ := p.counts(); ran != caller || workers != 0 {
			t.Errorf("%s: ran on goroutine %d (caller %d) with %d workers, want the caller's and none", r.URL, ran, caller, workers)
		}
	}
}

func TestConcurrentRequestsBeyondTheWorkers(t *testing.T) {
	const n = maxWarmWorkers + 6
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(n)
	p := newWarmStacks(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Done()
		<-release
		io.WriteString(w, "served")
	}))
	var done sync.WaitGroup
	failures := make(chan string, n)
	for range n {
		done.Go(func() {
			rec := httptest.NewRecorder()
			p.serve(rec, requestFor("list"))
			if rec.Body.String() != "served" {
				failures <- rec.Body.String()
			}
		})
	}
	started.Wait() // every request is in its handler at once: none waits for a worker
	close(release)
	done.Wait()
	close(failures)
	for body := range failures {
		t.Errorf("a request answered %q", body)
	}
	if got, _ := p.counts(); got != maxWarmWorkers {
		t.Errorf("%d workers, want %d", got, maxWarmWorkers)
	}
}

func TestPanicOnAWorkerReachesTheFilterAbove(t *testing.T) {
	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	h := recoverPanics(withWarmStacks(http.HandlerFunc(panickingHandler), nil), logger)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, requestFor("create"))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "handler failed") {
		t.Errorf("answered %d %s, want a 500 Status with the panic", rec.Code, rec.Body.String())
	}
	// The stack logged is the worker's, where the panic happened.
	if !strings.Contains(logged.String(), "panickingHandler") {
		t.Errorf("logged stack does not show the handler that panicked:\n%s", logged.String())
	}
	// The worker survives its request's panic.
	rec = httptest.NewRecorder()
	withWarmStacks(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served") }), nil).ServeHTTP(rec, requestFor("get"))
	if rec.Body.String() != "served" {
		t.Errorf("after a panic: %q", rec.Body.String())
	}
}

func panickingHandler(http.ResponseWriter, *http.Request) { panic("handler failed") }

func TestAbortedResponseStillAborts(t *testing.T) {
	p := newWarmStacks(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler for the server to abort the response", v)
		}
		if workers, idle := p.counts(); workers != 1 || idle != 1 {
			t.Errorf("%d workers, %d idle; want the worker kept", workers, idle)
		}
	}()
	p.serve(httptest.NewRecorder(), requestFor("get"))
}

func TestHandlerEndingItsGoroutine(t *testing.T) {
	exit := true
	p := newWarmStacks(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if exit {
			runtime.Goexit()
		}
		io.WriteString(w, "served")
	}))
	h := recoverPanics(http.HandlerFunc(p.serve), slog.New(slog.NewTextHandler(io.Discard, nil)))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, requestFor("get"))
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("answered %d, want 500", rec.Code)
	}
	if workers, idle := p.counts(); workers != 0 || idle != 0 {
		t.Errorf("%d workers, %d idle after the worker's goroutine ended; want none", workers, idle)
	}
	exit = false
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, requestFor("get"))
	if rec.Body.String() != "served" {
		t.Errorf("next request: %q", rec.Body.String())
	}
}

// TestStoppedWorkersEnd: once the chain's done channel is closed, idle
// workers end at once and busy ones when their request is done; later
// requests run where they arrived.
func TestStoppedWorkersEnd(t *testing.T) {
	release := make(chan struct{})
	inHandler := make(chan struct{}, 2)
	var workerGoroutines sync.Map
	p := newWarmStacks(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		workerGoroutines.Store(goroutineID(), true)
		if r.Header.Get("Hold") != "" {
			inHandler <- struct{}{}
			<-release
		}
		io.WriteString(w, "served")
	}))
	held := requestFor("get")
	held.Header.Set("Hold", "1")
	var busy sync.WaitGroup
	busy.Go(func() { p.serve(httptest.NewRecorder(), held) }) // the busy worker
	<-inHandler
	p.serve(httptest.NewRecorder(), requestFor("get")) // a second worker, idle after
	if workers, idle := p.counts(); workers != 2 || idle != 1 {
		t.Fatalf("%d workers, %d idle before the stop; want 2 and 1", workers, idle)
	}

	p.stop()
	if workers, idle := p.counts(); workers != 1 || idle != 0 {
		t.Errorf("%d workers, %d idle after the stop; want the busy one only", workers, idle)
	}
	close(release)
	busy.Wait()
	if workers, idle := p.counts(); workers != 0 || idle != 0 {
		t.Errorf("%d workers, %d idle after the busy one's request; want none", workers, idle)
	}
	caller := goroutineID()
	rec := httptest.NewRecorder()
	p.serve(rec, requestFor("get"))
	if _, onCaller := workerGoroutines.Load(caller); !onCaller || rec.Body.String() != "served" {
		t.Errorf("a request after the stop: %q, on its caller's goroutine %v; want served there", rec.Body.String(), onCaller)
	}
	workerGoroutines.Range(func(id, _ any) bool {
		if id.(uint64) != caller {
			waitForGoroutineEnd(t, id.(uint64))
		}
		return true
	})
}

// waitForGoroutineEnd fails t unless goroutine id ends within 10 s.
func waitForGoroutineEnd(t *testing.T, id uint64) {
	t.Helper()
	header := []byte(fmt.Sprintf("goroutine %d [", id))
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if !bytes.Contains(buf[:runtime.Stack(buf, true)], header) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("worker goroutine %d still runs after the stop", id)
			return
		}
	}
}

// goroutineID is the running goroutine's number, read from its stack
// trace's first line ("goroutine 7 [running]:").
func goroutineID() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	var id uint64
	for _, c := range bytes.TrimPrefix(buf, []byte("goroutine ")) {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// BenchmarkDeepRequest serves requests that run 48 KiB deep, each from a
// goroutine of its own as the HTTP/2 server starts one per request.
func BenchmarkDeepRequest(b *testing.B) {
	deep := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { recurse(48 << 10 / 256) })
	for _, bc := range []struct {
		name    string
		handler http.Handler
	}{{"new-goroutine", deep}, {"warm-worker", withWarmStacks(deep, nil)}} {
		b.Run(bc.name, func(b *testing.B) {
			r := requestFor("get")
			w := httptest.NewRecorder()
			done := make(chan struct{})
			for b.Loop() {
				go func() {
					bc.handler.ServeHTTP(w, r)
					done <- struct{}{}
				}()
				<-done
			}
		})
	}
}

// recurse uses about 256 bytes of stack per level.
//
//go:noinline
func recurse(levels int) byte {
	var frame [200]byte
	if levels == 0 {
		return frame[0]
	}
	frame[levels%200] = byte(levels)
	return recurse(levels-1) + frame[(levels+1)%200]
}
