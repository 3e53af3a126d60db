package etcd

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"

	"github.com/kapi-dev/kapi/internal/storage"
)

// watchStreamKey is the gRPC metadata that gives each watch a gRPC stream
// of its own. etcd's client shares one stream among the watches whose
// contexts carry the same metadata, and etcd answers a progress request
// for a whole stream, only once every watch on it has caught up, and to
// every watch on it. A stream per watch makes RequestProgress concern that
// watch alone. The streams share the client's one connection.
const watchStreamKey = "kapi-watch"

// watcher is one etcd watch seen as a storage.Watcher.
type watcher struct {
	s      *Store
	ctx    context.Context // carries the stream's metadata, for RequestProgress
	from   int64           // events up to this revision are not sent
	events chan storage.Event
	done   chan struct{} // closed when run returns

	// progressWanted holds a RequestProgress not yet taken up by
	// progressLoop; progressSeen is signalled by each progress
	// notification, whose revision progressRev keeps.
	progressWanted chan struct{}
	progressSeen   chan struct{}
	progressRev    atomic.Int64

	mu  sync.Mutex
	err error
}

// Watch implements storage.Store with an etcd watch that returns previous
// values, so that a delete event carries the deleted version.
//
// The etcd watch starts at fromRev, not fromRev+1, and the events of fromRev
// itself are dropped: etcd answers a progress request only for watches
// whose start revision it has reached, so a watch from fromRev+1, the next
// revision to be written, would get no progress until some write happens
// anywhere in etcd.
func (s *Store) Watch(ctx context.Context, prefix []byte, fromRev int64) (storage.Watcher, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	if fromRev+1 < s.compacted.Load() {
		return nil, storage.ErrCompacted
	}
	start := max(fromRev, 1)
	key := s.key(prefix)
	end := clientv3.GetPrefixRangeEnd(key)
	if key == "" {
		key, end = "\x00", "\x00"
	}
	// A read at the watch's start revision fails if etcd compacted it, as
	// the watch would, but here rather than on the watch's channel; a
	// revision not yet written is fine.
	_, err := s.client.Get(ctx, key, clientv3.WithRange(end), clientv3.WithRev(start), clientv3.WithCountOnly())
	if err = s.mapErr(err); err != nil && !errors.Is(err, storage.ErrFutureRevision) {
		return nil, err
	}
	wctx := metadata.AppendToOutgoingContext(ctx, watchStreamKey, strconv.FormatUint(s.watchID.Add(1), 10))
	// Like kube-apiserver, end the watch when its member loses the leader
	// (a partitioned member would otherwise send nothing, silently).
	wctx = clientv3.WithRequireLeader(wctx)
	ch := s.client.Watch(wctx, key,
		clientv3.WithRange(end), clientv3.WithRev(start), clientv3.WithPrevKV())
	w := &watcher{
		s: s, ctx: wctx, from: fromRev,
		events:         make(chan storage.Event, 128),
		done:           make(chan struct{}),
		progressWanted: make(chan struct{}, 1),
		progressSeen:   make(chan struct{}, 1),
	}
	go w.run(ch)
	go w.progressLoop()
	return w, nil
}

// run turns etcd's responses into events until the watch ends.
func (w *watcher) run(ch clientv3.WatchChan) {
	defer close(w.done)
	defer close(w.events)
	for resp := range ch {
		if w.ended() {
			return
		}
		if resp.CompactRevision != 0 {
			// etcd compacted to CompactRevision: kapi's compactions
			// leave etcd one revision short (see Store.Compact).
			w.s.learnCompacted(resp.CompactRevision + 1)
			w.fail(storage.ErrCompacted)
			return
		}
		if err := resp.Err(); err != nil {
			w.fail(w.s.mapErr(err))
			return
		}
		if resp.Canceled {
			w.fail(errors.New("etcd: watch canceled"))
			return
		}
		if resp.IsProgressNotify() {
			if !w.send(storage.Event{Type: storage.EventProgress, KV: storage.KeyValue{ModRevision: resp.Header.Revision}}) {
				return
			}
			w.progressRev.Store(resp.Header.Revision)
			select {
			case w.progressSeen <- struct{}{}:
			default:
			}
			continue
		}
		for _, ev := range resp.Events {
			if ev.Kv.ModRevision <= w.from {
				continue
			}
			if !w.send(w.convert(ev)) {
				return
			}
		}
	}
	if !w.ended() {
		// The client closes the channel without a response only when the
		// watch's context ends or the client closes.
		w.fail(errors.New("etcd: watch closed"))
	}
}

func (w *watcher) convert(ev *clientv3.Event) storage.Event {
	if ev.Type == clientv3.EventTypePut {
		return storage.Event{Type: storage.EventPut, KV: w.s.fromEtcd(ev.Kv)}
	}
	out := storage.Event{Type: storage.EventDelete, KV: storage.KeyValue{
		Key:         w.s.unprefix(ev.Kv.Key),
		ModRevision: ev.Kv.ModRevision,
	}}
	if ev.PrevKv != nil {
		out.KV.Value = ev.PrevKv.Value
		out.KV.CreateRevision = ev.PrevKv.CreateRevision
	}
	return out
}

// ended reports whether the watch ended by its context or the store's
// closing, which Err reports as nil.
func (w *watcher) ended() bool {
	return w.ctx.Err() != nil || w.s.closed.Load()
}

func (w *watcher) send(ev storage.Event) bool {
	select {
	case w.events <- ev:
		return true
	case <-w.ctx.Done():
		return false
	}
}

func (w *watcher) fail(err error) {
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
}

// Events implements storage.Watcher.
func (w *watcher) Events() <-chan storage.Event { return w.events }

// Err implements storage.Watcher.
func (w *watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// RequestProgress implements storage.Watcher. progressLoop does the work,
// so that a caller reading Events is never held up.
func (w *watcher) RequestProgress() {
	select {
	case w.progressWanted <- struct{}{}:
	default: // one is pending already, and will answer this call too
	}
}

// progressInterval is how often progressLoop asks etcd again.
const progressInterval = 100 * time.Millisecond

// progressLoop answers RequestProgress. etcd answers a progress request on
// the watch's stream with a notification at its current revision, but only
// if the watch has caught up at that moment, and drops it otherwise. So the
// loop reads the current revision first, then asks again every
// progressInterval until a notification at least that new has been sent.
func (w *watcher) progressLoop() {
	for {
		select {
		case <-w.progressWanted:
		case <-w.done:
			return
		}
		target, err := w.s.CurrentRevision(w.ctx)
		for err != nil {
			select {
			case <-time.After(progressInterval):
			case <-w.done:
				return
			}
			target, err = w.s.CurrentRevision(w.ctx)
		}
		for w.progressRev.Load() < target {
			w.s.client.RequestProgress(w.ctx)
			select {
			case <-w.progressSeen:
			case <-time.After(progressInterval):
			case <-w.done:
				return
			}
		}
	}
}
