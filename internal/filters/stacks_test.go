package filters

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/internal/request"
)

// requestFor is a request whose parsed info says verb.
func requestFor(verb string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps", nil)
	return r.WithContext(request.WithInfo(r.Context(), &request.Info{IsResourceRequest: true, Verb: verb, Resource: "configmaps"}))
}

func newWarmStacks(next http.Handler) *warmStacks {
	return &warmStacks{next: next, idle: make(chan *warmWorker, maxWarmWorkers)}
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
	if n := p.workers.Load(); n != 1 {
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
		if ran != caller || p.workers.Load() != 0 {
			t.Errorf("%s: ran on goroutine %d (caller %d) with %d workers, want the caller's and none", r.URL, ran, caller, p.workers.Load())
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
	if got := p.workers.Load(); got != maxWarmWorkers {
		t.Errorf("%d workers, want %d", got, maxWarmWorkers)
	}
}

func TestPanicOnAWorkerReachesTheFilterAbove(t *testing.T) {
	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	h := recoverPanics(withWarmStacks(http.HandlerFunc(panickingHandler)), logger)
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
	withWarmStacks(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served") })).ServeHTTP(rec, requestFor("get"))
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
		if p.workers.Load() != 1 || len(p.idle) != 1 {
			t.Errorf("%d workers, %d idle; want the worker kept", p.workers.Load(), len(p.idle))
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
	if p.workers.Load() != 0 || len(p.idle) != 0 {
		t.Errorf("%d workers, %d idle after the worker's goroutine ended; want none", p.workers.Load(), len(p.idle))
	}
	exit = false
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, requestFor("get"))
	if rec.Body.String() != "served" {
		t.Errorf("next request: %q", rec.Body.String())
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
	}{{"new-goroutine", deep}, {"warm-worker", withWarmStacks(deep)}} {
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
