package filters

import (
	"errors"
	"net/http"
	"runtime/debug"
	"sync"

	"github.com/kapi-dev/kapi/internal/request"
)

// maxWarmWorkers bounds the goroutines kept to serve requests on grown
// stacks; requests beyond them run where they arrived.
const maxWarmWorkers = 64

// withWarmStacks serves each short request on a goroutine that has
// served requests before, so its stack has grown already.
//
// The HTTP/2 server starts a goroutine for every request, with the small
// stack the runtime gives new goroutines (sized by the average of all
// stacks, most of them idle watchers and informers). A write runs deep:
// the filters, admission, kube's strategies and field manager; growing
// the stack to that depth, a doubling and a copy of every frame at a
// time, was a tenth of the server's CPU in a writes benchmark. A worker
// keeps its grown stack between requests (the garbage collector halves an
// idle one at most once per cycle). Long-running requests (watches, exec
// and the like) stay where they arrived, so that workers are free for
// short ones. Once done is closed the workers end, idle ones at once and
// busy ones when their request is, and requests run where they arrived.
func withWarmStacks(next http.Handler, done <-chan struct{}) http.Handler {
	p := &warmStacks{next: next}
	if done != nil {
		go func() {
			<-done
			p.stop()
		}()
	}
	return http.HandlerFunc(p.serve)
}

type warmStacks struct {
	next http.Handler

	mu sync.Mutex
	// idle are the workers waiting for a request, the last to finish one
	// last: it is taken first, its stack and caches the warmest.
	idle    []*warmWorker
	workers int // idle and busy
	stopped bool
}

// warmWorker is a goroutine serving one request at a time; whoever took it
// from the idle workers owns it until the request is done.
type warmWorker struct {
	jobs chan warmJob
	done chan *workerPanic
}

type warmJob struct {
	w http.ResponseWriter
	r *http.Request
}

// workerPanic carries a handler's panic back to the request's goroutine,
// with the worker's stack, where the filters above recover it.
type workerPanic struct {
	value any
	stack []byte
}

func (p *warmStacks) serve(w http.ResponseWriter, r *http.Request) {
	if info, ok := request.From(r.Context()); !ok || streams(info) {
		p.next.ServeHTTP(w, r)
		return
	}
	worker := p.take()
	if worker == nil {
		p.next.ServeHTTP(w, r)
		return
	}
	worker.jobs <- warmJob{w, r}
	failed := <-worker.done
	if failed == nil || failed.value != errGoexit {
		p.put(worker)
	}
	if failed != nil {
		if failed.value == http.ErrAbortHandler {
			panic(failed.value) // the server aborts the response
		}
		panic(failed)
	}
}

// take returns an idle worker, or a new one while there are fewer than
// maxWarmWorkers, or nil.
func (p *warmStacks) take() *warmWorker {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil
	}
	if n := len(p.idle); n > 0 {
		worker := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return worker
	}
	if p.workers == maxWarmWorkers {
		return nil
	}
	p.workers++
	worker := &warmWorker{jobs: make(chan warmJob, 1), done: make(chan *workerPanic, 1)}
	go p.work(worker)
	return worker
}

// put returns a worker whose request is done to the idle ones, or ends it
// once the workers are stopped.
func (p *warmStacks) put(worker *warmWorker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		p.workers--
		close(worker.jobs)
		return
	}
	p.idle = append(p.idle, worker)
}

// stop ends the idle workers and has the busy ones end when they are done.
func (p *warmStacks) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	for _, worker := range p.idle {
		close(worker.jobs)
	}
	p.workers -= len(p.idle)
	p.idle = nil
}

// work serves the worker's requests until its jobs are closed. A handler
// that ends its goroutine (runtime.Goexit) ends the worker; its request's
// goroutine is told, not left waiting.
func (p *warmStacks) work(worker *warmWorker) {
	serving := false
	defer func() {
		if serving {
			p.mu.Lock()
			p.workers--
			p.mu.Unlock()
			worker.done <- &workerPanic{value: errGoexit}
		}
	}()
	for job := range worker.jobs {
		serving = true
		failed := p.serveJob(job)
		serving = false
		worker.done <- failed
	}
}

var errGoexit = errors.New("the request's handler ended its goroutine")

// serveJob serves one request and returns its panic, if any.
func (p *warmStacks) serveJob(job warmJob) (failed *workerPanic) {
	defer func() {
		if v := recover(); v != nil {
			failed = &workerPanic{value: v, stack: debug.Stack()}
		}
	}()
	p.next.ServeHTTP(job.w, job.r)
	return nil
}
