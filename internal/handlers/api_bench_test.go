package handlers

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/builtin"
	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/storage"
	"github.com/kapi-dev/kapi/internal/storage/pebble"
)

var podsResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// newTestAPI returns the built-in API over s; the caller runs its registry.
func newTestAPI(tb testing.TB, s storage.Store) *API {
	tb.Helper()
	reg := registry.New(s, nil, cache.Options{})
	writes := pipeline.New(reg, pipeline.NamespaceLifecycle(reg))
	if err := builtin.Install(writes, builtin.Options{}); err != nil {
		tb.Fatal(err)
	}
	return New(writes, "v1.0.0", Options{})
}

// benchAPI serves the built-in API over a fresh store holding n pods.
func benchAPI(b testing.TB, n int) (*API, storage.Store) {
	b.Helper()
	s, err := pebble.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(func() { cancel(); s.Close() })
	api := newTestAPI(b, s)
	store := api.reg.Snapshot().Lookup(podsResource)
	var wg sync.WaitGroup
	work := make(chan int)
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				data, _ := json.Marshal(benchPod(i))
				if _, err := s.Create(ctx, []byte(store.Key("default", fmt.Sprintf("pod-%05d", i))), data); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	api.reg.Run(ctx)
	if err := api.reg.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	return api, s
}

func benchPod(i int) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%05d", i), Namespace: "default", UID: "6a1c0f7e-0000-4000-8000-000000000000",
			Labels: map[string]string{"app": "bench", "tier": "web"}, CreationTimestamp: metav1.Now()},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{
			Name: "app", Image: "registry.example/app:1.2.3", Ports: []corev1.ContainerPort{{ContainerPort: 8080, Protocol: "TCP"}},
			Env: []corev1.EnvVar{{Name: "MODE", Value: "production"}},
		}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"},
	}
}

// BenchmarkListPods10k lists 10,000 pods through the handler, in JSON and
// protobuf, in one page and in pages of 500, compressed or not (a whole
// list is compressed for clients that accept gzip; pages are too small).
// A compressed list sends the items section kept from the list before
// ("kept"), or compresses it anew when the items changed ("changed",
// which drops the kept sections before each list).
func BenchmarkListPods10k(b *testing.B) {
	api, _ := benchAPI(b, 10000)
	for _, mediaType := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		for _, limit := range []int{0, 500} {
			for _, gzip := range []string{"none", "kept", "changed"} {
				if gzip != "none" && limit > 0 {
					continue
				}
				b.Run(fmt.Sprintf("%s/limit=%d/gzip=%s", mediaType, limit, gzip), func(b *testing.B) {
					b.ReportAllocs()
					for i := 0; i < b.N; i++ {
						if gzip == "changed" {
							api.segments.mu.Lock()
							api.segments.dropSentBefore(time.Now().Add(time.Hour))
							api.segments.mu.Unlock()
						}
						listPages(b, api, mediaType, limit, gzip != "none")
					}
				})
			}
		}
	}
}

// listBudget is what listing may allocate per listed object, requests'
// own costs included: a list is written from the items' cached encodings,
// so per item it allocates slots in the page's item slices and a few
// slice headers pointing into those encodings (some 180-320 bytes),
// never a copy of the item's bytes (about 600 for these pods; a list held
// whole in a buffer came to 1,600).
var listBudget = struct{ allocs, bytes float64 }{allocs: 0.3, bytes: 384}

// BenchmarkListAllocationBudget lists 10,000 pods in each media type, in
// one page and in pages of 500, reports what each listed object cost in
// allocations and bytes, and fails above listBudget.
func BenchmarkListAllocationBudget(b *testing.B) {
	api, _ := benchAPI(b, 10000)
	for _, mediaType := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		for _, limit := range []int{0, 500} {
			b.Run(fmt.Sprintf("%s/limit=%d", mediaType, limit), func(b *testing.B) {
				head := func() (http.ResponseWriter, *httptest.ResponseRecorder) {
					rec := httptest.NewRecorder()
					return headRecorder{rec}, rec
				}
				listPagesInto(b, api, mediaType, limit, false, head) // encodings cached
				var before, after goruntime.MemStats
				goruntime.ReadMemStats(&before)
				for i := 0; i < b.N; i++ {
					listPagesInto(b, api, mediaType, limit, false, head)
				}
				goruntime.ReadMemStats(&after)
				objects := float64(b.N) * 10000
				allocs := float64(after.Mallocs-before.Mallocs) / objects
				bytes := float64(after.TotalAlloc-before.TotalAlloc) / objects
				b.ReportMetric(allocs, "allocs/object")
				b.ReportMetric(bytes, "B/object")
				if allocs > listBudget.allocs || bytes > listBudget.bytes {
					b.Errorf("a listed object costs %.3f allocations and %.0f bytes; the budget is %.2f and %.0f", allocs, bytes, listBudget.allocs, listBudget.bytes)
				}
			})
		}
	}
}

// listPages lists every pod in pages of limit (0: one page).
func listPages(b *testing.B, api *API, mediaType string, limit int, gzip bool) {
	listPagesInto(b, api, mediaType, limit, gzip, func() (http.ResponseWriter, *httptest.ResponseRecorder) {
		rec := httptest.NewRecorder()
		return rec, rec
	})
}

// headRecorder records a response's status, headers and first 64 KiB
// (enough for a list's metadata), so that a benchmark counts what the
// server allocates, not the copy of the response a recorder would keep.
type headRecorder struct{ *httptest.ResponseRecorder }

func (r headRecorder) Write(p []byte) (int, error) {
	if room := 64<<10 - r.Body.Len(); room > 0 {
		r.ResponseRecorder.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// listPagesInto is listPages with the response writer newRecorder makes.
func listPagesInto(b *testing.B, api *API, mediaType string, limit int, gzip bool, newRecorder func() (http.ResponseWriter, *httptest.ResponseRecorder)) {
	cont, pages := "", 0
	for {
		url := fmt.Sprintf("/api/v1/namespaces/default/pods?limit=%d&continue=%s", limit, cont)
		req := httptest.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept", mediaType)
		if gzip {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		w, rec := newRecorder()
		api.ServeHTTP(w, req)
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body.Bytes())
		}
		if gzip != (rec.Header().Get("Content-Encoding") == "gzip") {
			b.Fatalf("Content-Encoding %q", rec.Header().Get("Content-Encoding"))
		}
		pages++
		if limit == 0 {
			return
		}
		if cont = nextContinue(b, rec, mediaType); cont == "" {
			break
		}
	}
	if pages != 20 {
		b.Fatalf("%d pages", pages)
	}
}

// nextContinue reads a page's continue token without decoding its items,
// so that the benchmark measures the server.
func nextContinue(b *testing.B, rec *httptest.ResponseRecorder, mediaType string) string {
	data := rec.Body.Bytes()
	if mediaType == "application/json" {
		var list struct {
			Metadata metav1.ListMeta `json:"metadata"`
		}
		end := bytes.Index(data, []byte(`,"items":`))
		if err := json.Unmarshal(append(data[:end:end], '}'), &list); err != nil {
			b.Fatal(err)
		}
		return list.Metadata.Continue
	}
	// The envelope (magic, runtime.Unknown) holds its typeMeta (field 1),
	// then the list as raw (field 2), whose message starts with field 1,
	// the ListMeta; read field by field, the response's start is enough.
	field := func(data []byte) (value, rest []byte) {
		size, n := binary.Uvarint(data[1:])
		return data[1+n : 1+n+int(size)], data[1+n+int(size):]
	}
	_, rest := field(data[4:]) // typeMeta
	_, n := binary.Uvarint(rest[1:])
	metaBytes, _ := field(rest[1+n:]) // raw's first field
	var meta metav1.ListMeta
	if err := meta.Unmarshal(metaBytes); err != nil {
		b.Fatal(err)
	}
	return meta.Continue
}

// BenchmarkListPods10kReencoded is the baseline the cached encodings
// replace: the same list encoded by the serializer on every request.
func BenchmarkListPods10kReencoded(b *testing.B) {
	api, _ := benchAPI(b, 10000)
	store := api.reg.Snapshot().Lookup(podsResource)
	c := store.Backend().Cache
	for _, mediaType := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		b.Run(mediaType, func(b *testing.B) {
			info := api0Serializer(mediaType)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				res, err := c.List(context.Background(), cache.ListRequest{Filter: cache.Filter{Prefix: store.CollectionPrefix("default")}})
				if err != nil {
					b.Fatal(err)
				}
				list, _ := store.NewListOf(res.Items)
				var buf bytes.Buffer
				if err := info.Serializer.Encode(list, &buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWatchFanOut1000 sends one change to 1,000 watch connections in
// each media type and waits until every one has written it.
func BenchmarkWatchFanOut1000(b *testing.B) {
	for _, mediaType := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		b.Run(mediaType, func(b *testing.B) {
			api, s := benchAPI(b, 1)
			store := api.reg.Snapshot().Lookup(podsResource)
			key := []byte(store.Key("default", "pod-00000"))
			const watchers = 1000
			writers := make([]*countingWriter, watchers)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rv := store.Backend().Cache.Revision()
			for i := range writers {
				writers[i] = newCountingWriter()
				req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/v1/namespaces/default/pods?watch=1&resourceVersion=%d", rv), nil).WithContext(ctx)
				req.Header.Set("Accept", mediaType)
				go api.ServeHTTP(writers[i], req)
			}
			for _, w := range writers {
				<-w.started
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				kv, _, _ := s.Get(ctx, key, 0)
				pod := benchPod(0)
				pod.Labels["round"] = fmt.Sprint(i)
				data, _ := json.Marshal(pod)
				if _, err := s.Update(ctx, key, data, kv.ModRevision); err != nil {
					b.Fatal(err)
				}
				for _, w := range writers {
					w.waitWrites(i + 1)
				}
			}
		})
	}
}

// countingWriter is a ResponseWriter that counts flushed events.
type countingWriter struct {
	header  http.Header
	mu      sync.Mutex
	cond    *sync.Cond
	flushes int
	started chan struct{}
	once    sync.Once
}

func newCountingWriter() *countingWriter {
	w := &countingWriter{header: http.Header{}, started: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	return w
}

func (w *countingWriter) Header() http.Header         { return w.header }
func (w *countingWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *countingWriter) WriteHeader(int)             {}
func (w *countingWriter) Flush() {
	w.once.Do(func() { close(w.started) }) // the first flush follows the headers
	w.mu.Lock()
	w.flushes++
	w.mu.Unlock()
	w.cond.Broadcast()
}

// waitWrites waits until n events have been flushed after the headers.
func (w *countingWriter) waitWrites(n int) {
	deadline := time.Now().Add(30 * time.Second)
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.flushes < n+1 && time.Now().Before(deadline) {
		w.cond.Wait()
	}
}

func api0Serializer(mediaType string) runtime.SerializerInfo {
	for _, info := range codecs.Factory.SupportedMediaTypes() {
		if info.MediaType == mediaType {
			return info
		}
	}
	panic(mediaType)
}
