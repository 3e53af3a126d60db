package handlers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/apimachinery/pkg/watch"
	endpointsmetrics "k8s.io/apiserver/pkg/endpoints/metrics"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	compbasemetrics "k8s.io/component-base/metrics"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/loopback"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
)

// watchStream writes watch events to one client in the negotiated
// representation: JSON documents one after another, or length-prefixed
// protobuf frames, each holding a WatchEvent whose object is encoded on its
// own, and flushes each. A protobuf event is framed around the object's
// bare message, the encoding protobuf lists are made of, so the watch
// cache keeps one protobuf encoding of an object, not two.
type watchStream struct {
	// out is where events are written: the response, or a burst's buffer
	// in front of it.
	out     io.Writer
	w       http.ResponseWriter
	flusher http.Flusher
	stream  streaming.Encoder
	object  runtime.Encoder
	// transform gives an event's object as the client asked for it; an
	// object that cannot be read in the watched version (a failing
	// conversion webhook) is an error.
	transform func(watch.EventType, runtime.Object) (runtime.Object, error)
	// JSON and protobuf events are written around the object's cached
	// bytes, assembled in line.
	json, protobuf bool
	line           []byte
	// messages is set when each event is written as one message of its
	// own, without the stream's framing (over a WebSocket).
	messages bool
	// events and sizes are kube-apiserver's apiserver_watch_events_total
	// and apiserver_watch_events_sizes of the watched resource.
	events compbasemetrics.CounterMetric
	sizes  compbasemetrics.ObserverMetric
}

func newWatchStream(w http.ResponseWriter, flusher http.Flusher, info runtime.SerializerInfo, transform func(watch.EventType, runtime.Object) (runtime.Object, error)) *watchStream {
	s := &watchStream{
		out:       w,
		w:         w,
		json:      info.MediaType == runtime.ContentTypeJSON,
		protobuf:  info.MediaType == runtime.ContentTypeProtobuf,
		flusher:   flusher,
		object:    info.Serializer,
		transform: transform,
	}
	if _, s.messages = w.(*webSocketResponse); s.messages {
		// A WebSocket message is an event's frame.
		s.stream = streaming.NewEncoder(s, info.StreamSerializer.Serializer)
		return s
	}
	s.stream = streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(s), info.StreamSerializer.Serializer)
	return s
}

// Write writes to where events go now.
func (s *watchStream) Write(p []byte) (int, error) { return s.out.Write(p) }

// burstSize is the buffer a burst of events (a watch's initial events)
// is gathered in: the HTTP/2 server hands each write of a response to
// its connection's goroutine and waits for it, and its own buffer is
// 4 KiB, so written one by one, every event of a streaming list was a
// handoff of its own.
const burstSize = 64 << 10

var burstWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, burstSize) }}

// startBurst gathers the events written until endBurst into large writes.
func (s *watchStream) startBurst() {
	if s.messages {
		return // each event is a message of its own
	}
	bw := burstWriters.Get().(*bufio.Writer)
	bw.Reset(s.w)
	s.out = bw
}

// endBurst writes out what the burst gathered and flushes the response;
// the events after it are written to the response as they come.
func (s *watchStream) endBurst() error {
	bw, ok := s.out.(*bufio.Writer)
	if !ok {
		return nil
	}
	s.out = s.w
	err := bw.Flush()
	bw.Reset(nil)
	burstWriters.Put(bw)
	if err == nil {
		s.flusher.Flush()
	}
	return err
}

// send writes one event, its object in the representation the client
// asked for (errors stay Status).
func (s *watchStream) send(typ watch.EventType, obj runtime.Object) error {
	return s.sendCached(typ, obj, nil)
}

// sendCached is send for an object whose encodings are cached: each is
// encoded once whatever the number of watchers.
func (s *watchStream) sendCached(typ watch.EventType, obj runtime.Object, enc *cache.Encodings) error {
	if typ != watch.Error {
		converted, err := s.transform(typ, obj)
		if err != nil {
			return s.sendUnreadable(err)
		}
		if converted != obj {
			obj, enc = converted, nil
		}
	}
	if s.protobuf {
		return s.sendProtobuf(typ, obj, enc)
	}
	data, err := enc.Encode(s.object, obj)
	if err != nil {
		return err
	}
	data = bytes.TrimRight(data, "\n")
	if s.json {
		// What the serializer writes for a WatchEvent, without re-validating
		// the object's JSON for every watcher.
		s.line = append(append(append(s.line[:0], `{"type":"`...), typ...), `","object":`...)
		s.line = append(append(s.line, data...), "}\n"...)
		if _, err := s.out.Write(s.line); err != nil {
			return err
		}
	} else if err := s.stream.Encode(&metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: data}}); err != nil {
		return err
	}
	return s.sent(len(data))
}

// errUnreadable ends a watch after an object it could not read.
var errUnreadable = errors.New("an event's object could not be read")

// sendUnreadable ends the stream with an ERROR event of err: its client
// gives up the watch and lists again (resuming could only fail on the
// same object), where an object's event would hand it the Status as an
// object.
func (s *watchStream) sendUnreadable(err error) error {
	status := apiStatus(err)
	status.SetGroupVersionKind(statusGVK)
	if err := s.sendCached(watch.Error, status, nil); err != nil {
		return err
	}
	return errUnreadable
}

// sendProtobuf writes a protobuf event around the object's bare message,
// the encoding a protobuf list of it is made of: the object is kept
// encoded in protobuf once, not once more in its envelope.
func (s *watchStream) sendProtobuf(typ watch.EventType, obj runtime.Object, enc *cache.Encodings) error {
	bare, err := enc.Encode(codecs.ProtobufRaw, obj)
	if err != nil {
		return err
	}
	s.line = appendProtobufWatchEvent(s.line[:0], typ, obj.GetObjectKind().GroupVersionKind(), bare)
	event := s.line
	if s.messages {
		event = event[4:] // without its length: the message has one
	}
	if _, err := s.out.Write(event); err != nil {
		return err
	}
	return s.sent(len(bare))
}

// sent records an event written; the caller flushes (see watch).
func (s *watchStream) sent(size int) error {
	if s.events != nil {
		s.events.Inc()
		s.sizes.Observe(float64(size))
	}
	return nil
}

// watchSerializers are the representations a watch can stream in.
func watchSerializers(store *registry.Store) []runtime.SerializerInfo {
	var out []runtime.SerializerInfo
	for _, info := range store.Serializers() {
		if info.StreamSerializer != nil {
			out = append(out, info)
		}
	}
	return out
}

// watchMediaTypes are the media types a watch of store is streamed in, as
// a collection's route names them.
func watchMediaTypes(store *registry.Store) []string {
	var out []string
	for _, info := range watchSerializers(store) {
		if info.MediaType == runtime.ContentTypeCBOR {
			out = append(out, "application/cbor-seq")
			continue
		}
		out = append(out, info.MediaType+";stream=watch")
	}
	return out
}

// watchContentType is the Content-Type of a watch response: JSON is sent
// as plain JSON, other media types say that they are a stream.
func watchContentType(mediaType string) string {
	switch mediaType {
	case runtime.ContentTypeJSON:
		return mediaType
	case runtime.ContentTypeCBOR:
		return "application/cbor-seq"
	}
	return mediaType + ";stream=watch"
}

// watch streams changes to a collection (SPEC W1-W7).
func (a *API) watch(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	opts, err := listOptions(r, req, store)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !loopback.FromServer(r.Context()) {
		if a.watches.Add(1) > int64(a.opts.MaxWatches) {
			a.watches.Add(-1)
			writeError(w, r, apierrors.NewTooManyRequests(fmt.Sprintf("Too many watches (at most %d at once), please try again later.", a.opts.MaxWatches), 1))
			return
		}
		defer a.watches.Add(-1)
	}
	// As kube-apiserver: the media type a read of the resource would be
	// answered in is agreed on, and refused if it does not stream (YAML).
	target, err := negotiateRead(r, store.Serializers(), req.Verb)
	if err != nil {
		writeError(w, r, err)
		return
	}
	info := target.info
	if info.StreamSerializer == nil {
		var types []string
		for _, s := range watchSerializers(store) {
			types = append(types, s.MediaType+";stream=watch")
		}
		writeError(w, r, codecs.NotAcceptable(types))
		return
	}
	// As kube-apiserver's storage, which reads the version as the watch
	// starts (after the media type is agreed on).
	rev, err := storageRevision(opts.ResourceVersion)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// The watch's context carries its deadline down to the cache, for the
	// bookmark that comes before it.
	ctx, cancel := context.WithTimeout(r.Context(), a.watchTimeout(opts.TimeoutSeconds))
	defer cancel()

	c := store.Backend().Cache
	filter := filterFor(req, store, opts)
	initialEvents := opts.SendInitialEvents != nil && *opts.SendInitialEvents

	err = waitForStart(r.Context(), c, opts.ResourceVersion, rev, initialEvents)
	if err != nil && r.Context().Err() != nil {
		return // the client has gone
	}
	var watcher *cache.Watcher
	var initial []runtime.Object
	var initialEnc []*cache.Encodings
	var backlog []cache.Delivery
	var startRev int64
	switch {
	case err != nil:
		// The cache did not get there: the watch answers its ERROR event.
	case initialEvents || opts.SendInitialEvents == nil && (opts.ResourceVersion == "" || opts.ResourceVersion == "0"):
		// A watch from no version or "0" without sendInitialEvents
		// (under the /watch/ prefix, whose options are a list's) starts
		// with the state too, as kube's storage watch does, with no
		// bookmark ending it.
		watcher, initial, initialEnc, startRev, err = c.WatchWithState(ctx, filter, opts.AllowWatchBookmarks)
	case opts.ResourceVersion == "" || opts.ResourceVersion == "0":
		// "0" is any version, as in kube's watch cache: from now on.
		watcher, backlog, err = c.WatchFrom(ctx, c.Revision(), filter, opts.AllowWatchBookmarks)
	default:
		watcher, backlog, err = c.WatchFrom(ctx, rev, filter, opts.AllowWatchBookmarks)
	}

	if unready := (*cache.ErrUnready)(nil); errors.As(err, &unready) {
		// As kube-apiserver's: a watch of a cache not built is refused
		// before it starts, with a 429 its client retries.
		writeError(w, r, cacheError(err))
		return
	}
	run := &watchRun{
		store: store, target: target, info: info, opts: opts, err: err,
		watcher: watcher, initial: initial, initialEnc: initialEnc, backlog: backlog,
		startRev: startRev, initialEvents: initialEvents,
	}
	if _, hijacks := w.(http.Hijacker); hijacks && wsstream.IsWebSocketRequest(r) {
		a.watchOverWebSocket(ctx, cancel, w, r, run)
		return
	}
	a.streamWatch(ctx, cancel, w, run)
}

// watchRun is a watch that has started, or failed to start (err): what
// streaming it to the client takes.
type watchRun struct {
	store         *registry.Store
	target        readTarget
	info          runtime.SerializerInfo
	opts          *metainternalversion.ListOptions
	err           error
	watcher       *cache.Watcher
	initial       []runtime.Object
	initialEnc    []*cache.Encodings
	backlog       []cache.Delivery
	startRev      int64
	initialEvents bool
}

// streamWatch sends a watch's events to w until ctx ends (its timeout,
// the client gone; cancel ends it at the server's stop) or the watcher
// does.
func (a *API) streamWatch(ctx context.Context, cancel context.CancelFunc, w http.ResponseWriter, run *watchRun) {
	w.Header().Set("Content-Type", watchContentType(run.info.MediaType))
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	flusher, ok := w.(http.Flusher)
	if !ok {
		return
	}
	stream := run.newStream(w, flusher)
	flusher.Flush()
	if run.err != nil {
		// Like kube-apiserver, a watch that cannot start from the asked
		// version (too old, or not reached in time) answers 200 with one
		// ERROR event.
		status := apiStatus(cacheError(run.err))
		status.SetGroupVersionKind(statusGVK)
		if stream.send(watch.Error, status) == nil {
			flusher.Flush()
		}
		return
	}
	defer run.watcher.Stop()
	if ctx.Err() != nil {
		return // over before it started (a negative timeoutSeconds): as kube's, no events
	}

	listEnds := run.initialEvents && run.opts.AllowWatchBookmarks
	if !stream.sendInitial(run.initial, run.initialEnc, run.backlog, func() runtime.Object {
		if listEnds {
			return a.initialEventsEnd(run.store, run.startRev)
		}
		return nil
	}) {
		return
	}
	if listEnds {
		recordWatchListLatency(ctx, run.store.Info.GroupVersionResource())
	}
	// The initial events are out: priority and fairness frees the
	// watch's seat.
	utilflowcontrol.WatchInitialized(ctx)
	if a.opts.Stopping != nil {
		// The server's stop ends the stream here, as its clients would
		// see at their timeout; it leaves the start above alone (a
		// request's context cancelled there would answer an error).
		defer context.AfterFunc(a.opts.Stopping, cancel)()
	}
	// The request's end (its timeout, the client gone, the server's stop)
	// stops the watcher, whose Ready then fires: the loop waits on one
	// channel, not on a select that locks two for each of thousands of
	// watches at every event.
	defer context.AfterFunc(ctx, run.watcher.Stop)()
	deliver(ctx, stream, flusher, run.watcher, run.store)
}

// newStream is the stream of the watch's events in the representation it
// asked for, counted in kube's watch metrics.
func (run *watchRun) newStream(w http.ResponseWriter, flusher http.Flusher) *watchStream {
	store, target := run.store, run.target
	headersSent := false
	stream := newWatchStream(w, flusher, run.info, func(typ watch.EventType, obj runtime.Object) (runtime.Object, error) {
		converted, err := store.FromStorage(obj)
		if err != nil {
			return nil, err
		}
		out := target.watchObject(store, typ, converted)
		// As kube-apiserver, only the first Table of a watch has the
		// column definitions.
		if table, ok := out.(*metav1.Table); ok {
			if headersSent {
				table.ColumnDefinitions = nil
			}
			headersSent = true
		}
		return out, nil
	})
	gvr := store.Info.GroupVersionResource()
	// Without the request's context: kube-apiserver's would attach the
	// trace of a sampled span to each observation, which kapi does not
	// trace, and looking for one walked the context's chain per event.
	stream.events = endpointsmetrics.WatchEvents.WithLabelValues(gvr.Group, gvr.Version, gvr.Resource)
	stream.sizes = endpointsmetrics.WatchEventsSizes.WithLabelValues(gvr.Group, gvr.Version, gvr.Resource)
	return stream
}

// deliver sends the watcher's events until the request ends, the client
// goes or the watcher is ended.
func deliver(ctx context.Context, stream *watchStream, flusher http.Flusher, watcher *cache.Watcher, store *registry.Store) {
	var batch []cache.Delivery
	for {
		<-watcher.Ready()
		if watcher.Ended() && ctx.Err() != nil {
			return // the request ended: nothing more goes out
		}
		// As kube-apiserver, a burst of events goes out in one flush:
		// the stream is flushed once no further event is waiting.
		batch = watcher.Take(batch)
		for _, d := range batch {
			var err error
			if d.Bookmark > 0 {
				err = stream.send(watch.Bookmark, store.Bookmark(d.Bookmark))
			} else {
				obj, enc := d.Object()
				err = stream.sendCached(d.Type, obj, enc)
			}
			if err != nil {
				return
			}
		}
		if len(batch) > 0 {
			flusher.Flush()
		}
		if watcher.Ended() {
			// Too slow, or the cache was rebuilt: the client resumes from
			// the last version it saw, or relists.
			return
		}
	}
}

// sendInitial writes a watch's first events in one burst: a streaming
// list's objects, then the bookmark that ends them (when end gives one),
// then the backlog of a watch resuming from a version. It reports whether
// they all went out.
func (s *watchStream) sendInitial(initial []runtime.Object, initialEnc []*cache.Encodings, backlog []cache.Delivery, end func() runtime.Object) bool {
	s.startBurst()
	defer s.endBurst() // on an error: the client has gone
	for i, obj := range initial {
		if s.sendCached(watch.Added, obj, initialEnc[i]) != nil {
			return false
		}
	}
	if bookmark := end(); bookmark != nil {
		if s.send(watch.Bookmark, bookmark) != nil {
			return false
		}
	}
	for _, d := range backlog {
		obj, enc := d.Object()
		if s.sendCached(d.Type, obj, enc) != nil {
			return false
		}
	}
	return s.endBurst() == nil
}

// waitForStart waits until the cache holds the state a watch starts
// from, as kube-apiserver's watch cache waits for a streaming list's: up to
// its three seconds, whatever the watch's own timeout (ctx is the
// request's, which only the client's going ends). A watch of changes from
// a version still to come does not wait: it sends them once they come.
func waitForStart(ctx context.Context, c *cache.Cache, rv string, rev int64, initialEvents bool) error {
	switch {
	case rv == "":
		return c.WaitFresh(ctx)
	case initialEvents && rev > 0:
		return c.WaitNotOlderThan(ctx, rev)
	case rv == "0":
		// Any version, from the cache's once it is built (a new CRD's).
		return c.WaitServing(ctx)
	}
	return nil
}

// watchTimeout is the client's timeoutSeconds, or else a random time
// between the minimum request timeout and twice it, as kube-apiserver
// spreads the ends of long watches. As there, a negative timeoutSeconds
// ends the watch at once.
func (a *API) watchTimeout(timeoutSeconds *int64) time.Duration {
	if timeoutSeconds != nil && *timeoutSeconds != 0 {
		return time.Duration(*timeoutSeconds) * time.Second
	}
	min := a.opts.MinRequestTimeout
	return min + time.Duration(rand.Int64N(int64(min)+1))
}

// recordWatchListLatency records how long a streaming list took to send
// its initial events, from the request's arrival, as kube-apiserver does
// once the bookmark that ends them is out.
func recordWatchListLatency(ctx context.Context, gvr schema.GroupVersionResource) {
	received, ok := genericapirequest.ReceivedTimestampFrom(ctx)
	kubeInfo, hasInfo := genericapirequest.RequestInfoFrom(ctx)
	if !ok || !hasInfo {
		return
	}
	endpointsmetrics.RecordWatchListLatency(ctx, gvr, endpointsmetrics.CleanScope(kubeInfo), time.Since(received))
}

// initialEventsEnd is the bookmark that ends a streaming list's initial
// events: kube-apiserver 1.37's is a bookmark with the annotation that
// says so.
func (a *API) initialEventsEnd(store *registry.Store, rev int64) runtime.Object {
	obj := store.Bookmark(rev)
	m, _ := meta.Accessor(obj)
	annotations := m.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[metav1.InitialEventsAnnotationKey] = "true"
	m.SetAnnotations(annotations)
	return obj
}
