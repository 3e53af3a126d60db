package filters

import (
	"errors"
	"net/http"
	"runtime/debug"
	"sync/atomic"

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
// short ones.
func withWarmStacks(next http.Handler) http.Handler {
	p := &warmStacks{next: next, idle: make(chan *warmWorker, maxWarmWorkers)}
	return http.HandlerFunc(p.serve)
}

type warmStacks struct {
	next    http.Handler
	idle    chan *warmWorker
	workers atomic.Int32
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
		p.idle <- worker
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
	select {
	case worker := <-p.idle:
		return worker
	default:
	}
	if p.workers.Add(1) > maxWarmWorkers {
		p.workers.Add(-1)
		return nil
	}
	worker := &warmWorker{jobs: make(chan warmJob, 1), done: make(chan *workerPanic, 1)}
	go p.work(worker)
	return worker
}

// work serves the worker's requests for as long as the process runs. A
// handler that ends its goroutine (runtime.Goexit) ends the worker; its
// request's goroutine is told, not left waiting.
func (p *warmStacks) work(worker *warmWorker) {
	serving := false
	defer func() {
		if serving {
			p.workers.Add(-1)
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
