package e2e

// Watches (raw, client-go and kubectl), resource version semantics, paging
// and selectors, checked against what a real kube-apiserver does.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// eventTimeout bounds every wait for one watch event or callback.
const eventTimeout = 10 * time.Second

// ---------------------------------------------------------------------------
// Raw watch reader

// watchEvent is one decoded event of a JSON watch stream.
type watchEvent struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

// watchReader decodes the events of one raw watch response.
type watchReader struct {
	t      *testing.T
	resp   *http.Response
	cancel context.CancelFunc
	events chan watchEvent
	done   chan struct{} // closed by close
	err    error         // why the stream ended; read after events is closed
}

// openWatch GETs path (with its query) and fails unless the answer is 200.
func openWatch(t *testing.T, k *kapi, path string) *watchReader {
	t.Helper()
	resp, cancel := startWatch(t, k, path)
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		cancel()
		t.Fatalf("watch %s: HTTP %d: %s", path, resp.StatusCode, body)
	}
	return newWatchReader(t, resp, cancel)
}

// startWatch sends a watch request and returns the response unread.
func startWatch(t *testing.T, k *kapi, path string) (*http.Response, context.CancelFunc) {
	t.Helper()
	reqCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	req, err := http.NewRequestWithContext(reqCtx, "GET", k.config.Host+path, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	resp, err := k.rawClient().Do(req)
	if err != nil {
		cancel()
		t.Fatalf("watch %s: %v", path, err)
	}
	return resp, cancel
}

func newWatchReader(t *testing.T, resp *http.Response, cancel context.CancelFunc) *watchReader {
	w := &watchReader{t: t, resp: resp, cancel: cancel, events: make(chan watchEvent, 1024), done: make(chan struct{})}
	go w.decode()
	t.Cleanup(w.close)
	return w
}

func (w *watchReader) decode() {
	defer close(w.events)
	dec := json.NewDecoder(w.resp.Body)
	for {
		var ev watchEvent
		if err := dec.Decode(&ev); err != nil {
			w.err = err
			return
		}
		select {
		case w.events <- ev:
		case <-w.done:
			w.err = errors.New("closed")
			return
		}
	}
}

func (w *watchReader) close() {
	select {
	case <-w.done:
		return
	default:
	}
	close(w.done)
	w.cancel()
	w.resp.Body.Close()
}

// next returns the next event, failing the test if none comes in time or
// the stream ends.
func (w *watchReader) next() watchEvent {
	w.t.Helper()
	ev, ok := w.nextWithin(eventTimeout)
	if !ok {
		w.t.Fatalf("no watch event within %v", eventTimeout)
	}
	return ev
}

// nextWithin returns the next event, or false if none came within d. A
// stream that ends fails the test.
func (w *watchReader) nextWithin(d time.Duration) (watchEvent, bool) {
	w.t.Helper()
	select {
	case ev, ok := <-w.events:
		if !ok {
			w.t.Fatalf("watch stream ended: %v", w.err)
		}
		return ev, true
	case <-time.After(d):
		return watchEvent{}, false
	}
}

// nextNonBookmark skips bookmarks.
func (w *watchReader) nextNonBookmark() watchEvent {
	w.t.Helper()
	for {
		if ev := w.next(); ev.Type != "BOOKMARK" {
			return ev
		}
	}
}

// expect reads the next non-bookmark event and checks its type and name.
func (w *watchReader) expect(typ, name string) watchEvent {
	w.t.Helper()
	ev := w.nextNonBookmark()
	if ev.Type != typ || objName(ev.Object) != name {
		w.t.Fatalf("event %s %s (rv %s), want %s %s", ev.Type, objName(ev.Object), objRV(ev.Object), typ, name)
	}
	return ev
}

// waitEnd drains the stream until it ends, failing if that takes longer
// than d, and returns the events read on the way.
func (w *watchReader) waitEnd(d time.Duration) []watchEvent {
	w.t.Helper()
	var seen []watchEvent
	timeout := time.After(d)
	for {
		select {
		case ev, ok := <-w.events:
			if !ok {
				if !errors.Is(w.err, io.EOF) {
					w.t.Fatalf("stream ended with %v, want EOF", w.err)
				}
				return seen
			}
			seen = append(seen, ev)
		case <-timeout:
			w.t.Fatalf("watch stream still open after %v; events read: %s", d, describe(seen))
		}
	}
}

func describe(evs []watchEvent) string {
	var parts []string
	for _, ev := range evs {
		parts = append(parts, fmt.Sprintf("%s %s@%s", ev.Type, objName(ev.Object), objRV(ev.Object)))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// ---------------------------------------------------------------------------
// Unstructured helpers

// field walks nested maps.
func field(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func fieldString(obj map[string]any, path ...string) string {
	s, _ := field(obj, path...).(string)
	return s
}

func objName(obj map[string]any) string { return fieldString(obj, "metadata", "name") }
func objRV(obj map[string]any) string   { return fieldString(obj, "metadata", "resourceVersion") }

// ---------------------------------------------------------------------------
// Raw request helpers

// getRaw sends a GET and returns the response (body closed) and its body.
func getRaw(t *testing.T, k *kapi, path string) (*http.Response, []byte) {
	t.Helper()
	reqCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, "GET", k.config.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := k.rawClient().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", path, err)
	}
	return resp, body
}

// decodeStatus decodes a Status body and checks it agrees with the HTTP code.
func decodeStatus(t *testing.T, resp *http.Response, body []byte) metav1.Status {
	t.Helper()
	var status metav1.Status
	if err := json.Unmarshal(body, &status); err != nil || status.Kind != "Status" {
		t.Fatalf("%d response is not a Status: %v\n%s", resp.StatusCode, err, body)
	}
	if int(status.Code) != resp.StatusCode {
		t.Fatalf("HTTP %d but Status code %d", resp.StatusCode, status.Code)
	}
	return status
}

// listRV lists a collection and returns the list's resourceVersion.
func listRV(t *testing.T, k *kapi, path string) string {
	t.Helper()
	resp, body := getRaw(t, k, path)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("list %s: HTTP %d: %s", path, resp.StatusCode, body)
	}
	var list metav1.List
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	if list.ResourceVersion == "" {
		t.Fatalf("list %s has no resourceVersion", path)
	}
	return list.ResourceVersion
}

func createNamespace(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createConfigMap(t *testing.T, cms typedcorev1.ConfigMapInterface, name string, labels map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Data:       map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating configmap %s: %v", name, err)
	}
	return cm
}

func updateConfigMap(t *testing.T, cms typedcorev1.ConfigMapInterface, cm *corev1.ConfigMap) *corev1.ConfigMap {
	t.Helper()
	out, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("updating configmap %s: %v", cm.Name, err)
	}
	return out
}

func deleteConfigMap(t *testing.T, cms typedcorev1.ConfigMapInterface, name string) {
	t.Helper()
	if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting configmap %s: %v", name, err)
	}
}

func names(items []corev1.ConfigMap) []string {
	var out []string
	for _, cm := range items {
		out = append(out, cm.Name)
	}
	return out
}

func sortedNames(items []corev1.ConfigMap) string {
	n := names(items)
	sort.Strings(n)
	return strings.Join(n, ",")
}

// ---------------------------------------------------------------------------
// 1. client-go informers and watches

// informerEvent is one callback of an informer's event handler.
type informerEvent struct {
	typ  string // add, update, delete
	name string
	data string // data["k"]
	rv   string
}

// requestLog records the GET requests a client sends.
type requestLog struct {
	mu   sync.Mutex
	urls []*url.URL
}

func (l *requestLog) RoundTripper(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet {
			l.mu.Lock()
			u := *req.URL
			l.urls = append(l.urls, &u)
			l.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (l *requestLog) configMapRequests() (lists, watchLists, watches []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, u := range l.urls {
		if !strings.HasSuffix(u.Path, "/configmaps") {
			continue
		}
		q := u.Query()
		switch {
		case q.Get("watch") == "" || q.Get("watch") == "false":
			lists = append(lists, u.String())
		case q.Get("sendInitialEvents") == "true":
			watchLists = append(watchLists, u.String())
		default:
			watches = append(watches, u.String())
		}
	}
	return
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestInformer runs a client-go shared informer on configmaps with the
// classic list then watch, and with the WatchListClient feature, which makes
// the reflector stream its initial list as a watch with
// sendInitialEvents=true. client-go reads KUBE_FEATURE_WatchListClient once
// per process (and defaults it on since 1.35), so the gate is switched with
// client-go's own test helper, which overrides the environment either way.
func TestInformer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		watchList bool
		json      bool
	}{
		{name: "list and watch", json: true},
		{name: "watch list", watchList: true, json: true},
		{name: "default clientset (protobuf)", watchList: true},
		{name: "default clientset, list and watch (protobuf)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, tc.watchList)
			k := startKapi(t, withoutRootCA)
			cfg := *k.config
			if tc.json {
				cfg.ContentType = "application/json"
				cfg.AcceptContentTypes = "application/json"
			}
			testInformer(t, &cfg, tc.watchList)
		})
	}
}

func testInformer(t *testing.T, config *rest.Config, watchList bool) {
	cfg := *config
	var reqs requestLog
	cfg.Wrap(reqs.RoundTripper)
	cs, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	createNamespace(t, cs, "inf")
	cms := cs.CoreV1().ConfigMaps("inf")
	createConfigMap(t, cms, "before", nil)

	events := make(chan informerEvent, 100)
	send := func(typ string, obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			t.Errorf("informer delivered %T", obj)
			return
		}
		events <- informerEvent{typ, cm.Name, cm.Data["k"], cm.ResourceVersion}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("inf"))
	informer := factory.Core().V1().ConfigMaps().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { send("add", obj) },
		UpdateFunc: func(_, obj any) { send("update", obj) },
		DeleteFunc: func(obj any) { send("delete", obj) },
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer func() { close(stop); factory.Shutdown() }()
	factory.Start(stop)
	syncCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), informer.HasSynced) {
		t.Fatal("informer did not sync within 20s")
	}

	expect := func(typ, name, data string) informerEvent {
		t.Helper()
		select {
		case ev := <-events:
			if ev.typ != typ || ev.name != name || ev.data != data {
				t.Fatalf("informer event %+v, want %s %s data %q", ev, typ, name, data)
			}
			return ev
		case <-time.After(eventTimeout):
			t.Fatalf("no informer event within %v, want %s %s", eventTimeout, typ, name)
		}
		return informerEvent{}
	}
	expect("add", "before", "v")

	created := createConfigMap(t, cms, "after", nil)
	if ev := expect("add", "after", "v"); ev.rv != created.ResourceVersion {
		t.Errorf("add carries rv %s, want %s", ev.rv, created.ResourceVersion)
	}
	created.Data["k"] = "v2"
	updated := updateConfigMap(t, cms, created)
	if ev := expect("update", "after", "v2"); ev.rv != updated.ResourceVersion {
		t.Errorf("update carries rv %s, want %s", ev.rv, updated.ResourceVersion)
	}
	deleteConfigMap(t, cms, "after")
	expect("delete", "after", "v2")
	if _, exists, _ := informer.GetStore().GetByKey("inf/after"); exists {
		t.Error("deleted configmap still in the informer's store")
	}
	if _, exists, _ := informer.GetStore().GetByKey("inf/before"); !exists {
		t.Error("configmap missing from the informer's store")
	}

	// The reflector silently falls back to a plain list when a streaming
	// list fails, so check which requests it actually made.
	lists, watchLists, watches := reqs.configMapRequests()
	if watchList {
		if len(watchLists) == 0 || len(lists) != 0 {
			t.Fatalf("watch-list informer: streaming lists %v, plain lists %v; want a streaming list and no plain list", watchLists, lists)
		}
	} else if len(lists) == 0 || len(watchLists) != 0 || len(watches) == 0 {
		t.Fatalf("list-watch informer: lists %v, streaming lists %v, watches %v", lists, watchLists, watches)
	}
}

// TestClientGoWatch lists and watches configmaps through client-go's typed
// client, and sends the streaming list a WatchListClient reflector sends.
func TestClientGoWatch(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	t.Run("json", func(t *testing.T) {
		cfg := *k.config
		cfg.ContentType = "application/json"
		cfg.AcceptContentTypes = "application/json"
		testClientGoWatch(t, &cfg, "json")
	})
	t.Run("protobuf preferred", func(t *testing.T) {
		testClientGoWatch(t, k.config, "proto")
	})
}

func testClientGoWatch(t *testing.T, cfg *rest.Config, ns string) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	createNamespace(t, cs, ns)
	cms := cs.CoreV1().ConfigMaps(ns)
	createConfigMap(t, cms, "before", nil)

	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil || sortedNames(list.Items) != "before" {
		t.Fatalf("list: %v, %v", list, err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatalf("watch from the list: %v", err)
	}
	defer w.Stop()
	// The streaming list a reflector sends with WatchListClient on.
	stream, err := cms.Watch(ctx, metav1.ListOptions{
		SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true,
	})
	if err != nil {
		t.Fatalf("streaming list: %v", err)
	}
	defer stream.Stop()

	next := func(w watch.Interface) (watch.EventType, *corev1.ConfigMap) {
		t.Helper()
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatal("watch ended")
				}
				if ev.Type == watch.Error {
					t.Fatalf("watch error: %v", apierrors.FromObject(ev.Object))
				}
				cm, ok := ev.Object.(*corev1.ConfigMap)
				if !ok {
					t.Fatalf("%s event carries %T", ev.Type, ev.Object)
				}
				return ev.Type, cm
			case <-time.After(eventTimeout):
				t.Fatalf("no event within %v", eventTimeout)
			}
		}
	}
	skipBookmarks := func(w watch.Interface) (watch.EventType, *corev1.ConfigMap) {
		t.Helper()
		for {
			if typ, cm := next(w); typ != watch.Bookmark {
				return typ, cm
			}
		}
	}
	expect := func(w watch.Interface, typ watch.EventType, name, data, rv string) {
		t.Helper()
		gotType, cm := skipBookmarks(w)
		if gotType != typ || cm.Name != name || cm.Data["k"] != data || (rv != "" && cm.ResourceVersion != rv) {
			t.Fatalf("event %s %s data %q rv %s; want %s %s data %q rv %s", gotType, cm.Name, cm.Data["k"], cm.ResourceVersion, typ, name, data, rv)
		}
	}

	// The streaming list: the existing object, then the bookmark that ends
	// the initial events.
	expect(stream, watch.Added, "before", "v", "")
	if typ, cm := next(stream); typ != watch.Bookmark || cm.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
		t.Fatalf("after the initial events: %s %+v, want a bookmark annotated %s", typ, cm.ObjectMeta, metav1.InitialEventsAnnotationKey)
	}

	created := createConfigMap(t, cms, "after", nil)
	created.Data["k"] = "v2"
	updated := updateConfigMap(t, cms, created)
	deleteConfigMap(t, cms, "after")
	for _, w := range []watch.Interface{w, stream} {
		expect(w, watch.Added, "after", "v", created.ResourceVersion)
		expect(w, watch.Modified, "after", "v2", updated.ResourceVersion)
		expect(w, watch.Deleted, "after", "v2", "")
	}
}

// TestStreamingListByHand sends the request a WatchListClient reflector
// sends and checks the stream: ADDED for every existing object, a bookmark
// marking the end of the initial events, then live events.
func TestStreamingListByHand(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	cs := k.clientset()
	createNamespace(t, cs, "stream")
	cms := cs.CoreV1().ConfigMaps("stream")
	want := map[string]bool{}
	for i := range 3 {
		name := fmt.Sprintf("cm%d", i)
		createConfigMap(t, cms, name, nil)
		want[name] = true
	}
	rvBefore := listRV(t, k, "/api/v1/namespaces/stream/configmaps")

	w := openWatch(t, k, "/api/v1/namespaces/stream/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
	got := map[string]bool{}
	var bookmark watchEvent
	for bookmark.Type == "" {
		ev := w.next()
		switch ev.Type {
		case "ADDED":
			got[objName(ev.Object)] = true
		case "BOOKMARK":
			if fieldString(ev.Object, "metadata", "annotations", "k8s.io/initial-events-end") != "true" {
				t.Fatalf("bookmark before the initial events ended: %v", ev.Object)
			}
			bookmark = ev
		default:
			t.Fatalf("initial event %s %s, want ADDED", ev.Type, objName(ev.Object))
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("initial ADDED events for %v, want %v", got, want)
	}
	if bookmark.Object["kind"] != "ConfigMap" || rv(t, objRV(bookmark.Object)) < rv(t, rvBefore) {
		t.Fatalf("initial-events-end bookmark %v; want kind ConfigMap and rv >= %s", bookmark.Object, rvBefore)
	}

	created := createConfigMap(t, cms, "live", nil)
	if ev := w.expect("ADDED", "live"); objRV(ev.Object) != created.ResourceVersion {
		t.Fatalf("live ADDED rv %s, want %s", objRV(ev.Object), created.ResourceVersion)
	}

	// Without initial events, version "0" is any version, as in kube's
	// watch cache: the watch starts now (kapi replayed the history from
	// its beginning, or answered 410 once it was compacted).
	quiet := openWatch(t, k, "/api/v1/namespaces/stream/configmaps?watch=1&sendInitialEvents=false&resourceVersion=0&resourceVersionMatch=NotOlderThan")
	createConfigMap(t, cms, "after", nil)
	if ev := quiet.next(); ev.Type != "ADDED" || objName(ev.Object) != "after" {
		t.Fatalf("a watch from version 0 without initial events: first event %s %s, want ADDED after", ev.Type, objName(ev.Object))
	}
}

// ---------------------------------------------------------------------------
// 2. kubectl get -w

// lineReader collects the lines a background process prints.
type lineReader struct {
	t     *testing.T
	lines chan string
	mu    sync.Mutex
	all   []string
}

func (r *lineReader) waitFor(re *regexp.Regexp) string {
	r.t.Helper()
	timeout := time.After(eventTimeout)
	for {
		select {
		case line, ok := <-r.lines:
			if !ok {
				r.t.Fatalf("output ended before a line matching %q; output:\n%s", re, r.output())
			}
			if re.MatchString(line) {
				return line
			}
		case <-timeout:
			r.t.Fatalf("no line matching %q within %v; output:\n%s", re, eventTimeout, r.output())
		}
	}
}

func (r *lineReader) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.all, "\n")
}

// kubectlBackground starts kubectl with a deadline and streams its stdout.
func kubectlBackground(t *testing.T, k *kapi, args ...string) *lineReader {
	t.Helper()
	runCtx, cancel := context.WithTimeout(ctx, time.Minute)
	cmd := exec.CommandContext(runCtx, "kubectl", append([]string{"--kubeconfig", k.kubeconfig()}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+filepath.Join(k.dataDir, "kubectl-cache"))
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	r := &lineReader{t: t, lines: make(chan string, 1000)}
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			r.mu.Lock()
			r.all = append(r.all, sc.Text())
			r.mu.Unlock()
			r.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("kubectl stderr:\n%s", stderr)
		}
	})
	return r
}

func TestKubectlGetWatch(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	cs := k.clientset()
	createNamespace(t, cs, "kw")
	cms := cs.CoreV1().ConfigMaps("kw")
	out := kubectlBackground(t, k, "-n", "kw", "get", "configmaps", "-w", "--output-watch-events")

	// Whether kubectl's list or its watch reports it, the ADDED line means
	// the watch covers everything after.
	cm := createConfigMap(t, cms, "w1", nil)
	out.waitFor(regexp.MustCompile(`^ADDED\s+w1\s`))
	cm.Data["k2"] = "v2"
	updateConfigMap(t, cms, cm)
	out.waitFor(regexp.MustCompile(`^MODIFIED\s+w1\s`))
	deleteConfigMap(t, cms, "w1")
	out.waitFor(regexp.MustCompile(`^DELETED\s+w1\s`))
}

// ---------------------------------------------------------------------------
// 3. Watch semantics by resourceVersion

func TestWatchResourceVersions(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	cs := k.clientset()
	createNamespace(t, cs, "rv")
	cms := cs.CoreV1().ConfigMaps("rv")
	createConfigMap(t, cms, "one", nil)
	createConfigMap(t, cms, "two", nil)
	const base = "/api/v1/namespaces/rv/configmaps"
	listed := listRV(t, k, base)

	unset := openWatch(t, k, base+"?watch=1")
	zero := openWatch(t, k, base+"?watch=1&resourceVersion=0")
	fromList := openWatch(t, k, base+"?watch=1&resourceVersion="+listed)

	marker := createConfigMap(t, cms, "marker", nil)
	for _, tc := range []struct {
		name string
		w    *watchReader
	}{{"unset", unset}, {"0", zero}} {
		t.Run("resourceVersion "+tc.name, func(t *testing.T) {
			tc.w.t = t
			var synthetic []string
			for {
				ev := tc.w.nextNonBookmark()
				if ev.Type != "ADDED" {
					t.Fatalf("event %s %s, want only ADDED", ev.Type, objName(ev.Object))
				}
				if objName(ev.Object) == "marker" {
					break
				}
				synthetic = append(synthetic, objName(ev.Object))
			}
			sort.Strings(synthetic)
			if fmt.Sprint(synthetic) != "[one two]" {
				t.Fatalf("synthetic ADDED events before the live one: %v, want [one two]", synthetic)
			}
		})
	}

	t.Run("resourceVersion of the list", func(t *testing.T) {
		fromList.t = t
		if ev := fromList.expect("ADDED", "marker"); objRV(ev.Object) != marker.ResourceVersion {
			t.Fatalf("ADDED rv %s, want %s", objRV(ev.Object), marker.ResourceVersion)
		}
		one, err := cms.Get(ctx, "one", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		one.Data["k"] = "changed"
		updated := updateConfigMap(t, cms, one)
		ev := fromList.expect("MODIFIED", "one")
		if objRV(ev.Object) != updated.ResourceVersion || fieldString(ev.Object, "data", "k") != "changed" {
			t.Fatalf("MODIFIED rv %s data %v, want rv %s data changed", objRV(ev.Object), ev.Object["data"], updated.ResourceVersion)
		}
		deleteConfigMap(t, cms, "one")
		ev = fromList.expect("DELETED", "one")
		if rv(t, objRV(ev.Object)) <= rv(t, updated.ResourceVersion) {
			t.Fatalf("DELETED rv %s, want the deletion's, after the update's %s", objRV(ev.Object), updated.ResourceVersion)
		}
	})

	// A watch from the resourceVersion of the update replays only what
	// came after it.
	t.Run("resourceVersion of a later write", func(t *testing.T) {
		two, err := cms.Get(ctx, "two", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w := openWatch(t, k, base+"?watch=1&resourceVersion="+two.ResourceVersion)
		w.expect("ADDED", "marker")
		w.expect("MODIFIED", "one")
		w.expect("DELETED", "one")
	})
}

// ---------------------------------------------------------------------------
// 4. Bookmarks

func TestWatchBookmarks(t *testing.T) {
	k := startKapi(t, "--bookmark-interval", "1s", withoutRootCA)
	cs := k.clientset()
	createNamespace(t, cs, "bm")
	createConfigMap(t, cs.CoreV1().ConfigMaps("bm"), "idle", nil)
	const base = "/api/v1/namespaces/bm/configmaps"
	listed := listRV(t, k, base)

	t.Run("allowed", func(t *testing.T) {
		w := openWatch(t, k, base+"?watch=1&allowWatchBookmarks=true&resourceVersion="+listed)
		// As kube-apiserver's, a bookmark is sent only past the watch's
		// start: a write elsewhere takes the revision there.
		createConfigMap(t, cs.CoreV1().ConfigMaps("default"), "elsewhere", nil)
		ev := w.next()
		if ev.Type != "BOOKMARK" {
			t.Fatalf("idle watch got %s %s, want BOOKMARK", ev.Type, objName(ev.Object))
		}
		if ev.Object["kind"] != "ConfigMap" || ev.Object["apiVersion"] != "v1" {
			t.Fatalf("bookmark object %v, want kind ConfigMap apiVersion v1", ev.Object)
		}
		var keys []string
		for key := range ev.Object {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		meta, _ := ev.Object["metadata"].(map[string]any)
		if fmt.Sprint(keys) != "[apiVersion kind metadata]" || len(meta) != 1 || objRV(ev.Object) == "" {
			t.Fatalf("bookmark object %v, want only kind, apiVersion and metadata.resourceVersion", ev.Object)
		}
		if rv(t, objRV(ev.Object)) < rv(t, listed) {
			t.Fatalf("bookmark rv %s before the watch's start %s", objRV(ev.Object), listed)
		}
	})

	t.Run("not allowed", func(t *testing.T) {
		w := openWatch(t, k, base+"?watch=1&resourceVersion="+listed)
		if ev, ok := w.nextWithin(3 * time.Second); ok {
			t.Fatalf("watch without allowWatchBookmarks got %s %v", ev.Type, ev.Object)
		}
	})
}

// ---------------------------------------------------------------------------
// 5. timeoutSeconds

func TestWatchTimeoutSeconds(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	start := time.Now()
	w := openWatch(t, k, "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1")
	w.waitEnd(5 * time.Second)
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("watch with timeoutSeconds=1 ended after %v", d)
	}
	// A negative timeout ends the watch at once, as in kube-apiserver,
	// before its initial events.
	createConfigMap(t, k.clientset().CoreV1().ConfigMaps("default"), "present", nil)
	w = openWatch(t, k, "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=-1")
	if seen := w.waitEnd(10 * time.Second); len(seen) > 0 {
		t.Errorf("a watch with a negative timeout sent %s", describe(seen))
	}
}

// TestWatchAsKubeAPIServer137 checks watches against what kube-apiserver
// 1.37 answers: a bookmark shortly before the timeout, streaming lists and
// watches from a version still to come, and a version that is no number.
func TestWatchAsKubeAPIServer137(t *testing.T) {
	k := startKapi(t, withoutRootCA) // the default, one-minute bookmark interval
	cs := k.clientset()
	createNamespace(t, cs, "edges")
	const base = "/api/v1/namespaces/edges/configmaps"
	listed := listRV(t, k, base)
	future := strconv.FormatInt(rv(t, listed)+100000, 10)
	// writeElsewhere moves the revision past every watch's start, for
	// bookmarks to be due, without an event in the watched namespace.
	writeElsewhere := func(t *testing.T, name string) {
		createConfigMap(t, cs.CoreV1().ConfigMaps("default"), name, nil)
	}

	t.Run("bookmark before the timeout", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		w := openWatch(t, k, base+"?watch=1&allowWatchBookmarks=true&timeoutSeconds=4&resourceVersion="+listed)
		writeElsewhere(t, "before-timeout")
		ev := w.next()
		// Due two seconds before the end, it comes in the second before.
		if took := time.Since(start); ev.Type != "BOOKMARK" || took < 900*time.Millisecond || took > 3*time.Second {
			t.Fatalf("%s %s after %v; want a BOOKMARK 1 to 2 seconds into a 4-second watch", ev.Type, objName(ev.Object), took)
		}
		for _, ev := range w.waitEnd(5 * time.Second) {
			if ev.Type != "BOOKMARK" {
				t.Fatalf("event %s %s, want only bookmarks", ev.Type, objName(ev.Object))
			}
		}
	})

	t.Run("streaming list from a future version", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		// kube-apiserver waits its three seconds, past the watch's timeout.
		w := openWatch(t, k, base+"?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=2&resourceVersion="+future)
		if took := time.Since(start); took < 3*time.Second {
			t.Errorf("answered after %v, want after three seconds", took)
		}
		evs := w.waitEnd(5 * time.Second)
		if len(evs) != 1 || evs[0].Type != "ERROR" {
			t.Fatalf("events %s, want one ERROR event", describe(evs))
		}
		var status metav1.Status
		data, _ := json.Marshal(evs[0].Object)
		if err := json.Unmarshal(data, &status); err != nil {
			t.Fatal(err)
		}
		if status.Kind != "Status" || status.Code != http.StatusGatewayTimeout || status.Reason != metav1.StatusReasonTimeout ||
			!strings.HasPrefix(status.Message, "Timeout: Too large resource version: "+future+", current: ") {
			t.Fatalf("ERROR event object %s, want a Status 504 Timeout \"Too large resource version\"", data)
		}
		if d := status.Details; d == nil || d.RetryAfterSeconds != 1 || len(d.Causes) != 1 ||
			d.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge || d.Causes[0].Message != "Too large resource version" {
			t.Fatalf("details %+v, want retryAfterSeconds 1 and a ResourceVersionTooLarge cause", status.Details)
		}
	})

	t.Run("changes from a future version", func(t *testing.T) {
		t.Parallel()
		w := openWatch(t, k, base+"?watch=1&allowWatchBookmarks=true&timeoutSeconds=4&resourceVersion="+future)
		writeElsewhere(t, "future")
		// Nothing: a bookmark would be behind the version asked for.
		if evs := w.waitEnd(8 * time.Second); len(evs) != 0 {
			t.Fatalf("events %s, want none", describe(evs))
		}
	})

	t.Run("non-numeric version", func(t *testing.T) {
		t.Parallel()
		resp, body := getRaw(t, k, base+"?watch=1&resourceVersion=abc")
		status := decodeStatus(t, resp, body)
		const want = `resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`
		if resp.StatusCode != http.StatusInternalServerError || status.Reason != "" || status.Message != want {
			t.Fatalf("HTTP %d %s %q, want 500, no reason, %q", resp.StatusCode, status.Reason, status.Message, want)
		}
	})
}

// ---------------------------------------------------------------------------
// 6. History window

// pollWriting calls write then done every 100ms until done reports true,
// failing the test at deadline.
func pollWriting(t *testing.T, what string, deadline time.Time, write func(), done func() bool) {
	t.Helper()
	for !time.Now().After(deadline) {
		write()
		if done() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("still no %s by the deadline", what)
}

func TestWatchHistoryWindow(t *testing.T) {
	const window = 2 * time.Second
	k := startKapi(t, "--history-window", window.String())
	cs := k.clientset()
	cms := cs.CoreV1().ConfigMaps("default")
	cm := createConfigMap(t, cms, "h", nil)
	first := cm.ResourceVersion
	start := time.Now()
	i := 0
	write := func() {
		i++
		cm.Data["k"] = strconv.Itoa(i)
		cm = updateConfigMap(t, cms, cm)
	}
	for range 3 {
		write()
	}
	const base = "/api/v1/namespaces/default/configmaps"

	// Keep writing until the window has passed and a watch from the first
	// version is refused, polling.
	var errEvent watchEvent
	pollWriting(t, "ERROR event for a watch from rv "+first, start.Add(30*time.Second), write, func() bool {
		if time.Since(start) < window {
			return false
		}
		resp, cancel := startWatch(t, k, base+"?watch=1&resourceVersion="+first)
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(resp.Body)
			cancel()
			resp.Body.Close()
			t.Fatalf("watch from expired rv %s: HTTP %d, want 200 with an ERROR event: %s", first, resp.StatusCode, body)
		}
		w := newWatchReader(t, resp, cancel)
		defer w.close()
		ev := w.next()
		if ev.Type != "ERROR" {
			return false // still replaying history
		}
		errEvent = ev
		if evs := w.waitEnd(5 * time.Second); len(evs) != 0 {
			t.Fatalf("events after the ERROR event: %s", describe(evs))
		}
		return true
	})

	var status metav1.Status
	data, _ := json.Marshal(errEvent.Object)
	if err := json.Unmarshal(data, &status); err != nil {
		t.Fatal(err)
	}
	if status.Kind != "Status" || status.Code != http.StatusGone || status.Reason != metav1.StatusReasonExpired ||
		!strings.HasPrefix(status.Message, "too old resource version: ") {
		t.Fatalf("ERROR event object %s; want a Status 410 Expired \"too old resource version: ...\"", data)
	}

	// Storage compaction may trail the watch history a little (as etcd's
	// does kube-apiserver's watch cache), so poll for the list too.
	var resp *http.Response
	var body []byte
	pollWriting(t, "refusal of an exact list at rv "+first, time.Now().Add(15*time.Second), write, func() bool {
		resp, body = getRaw(t, k, base+"?resourceVersionMatch=Exact&resourceVersion="+first)
		return resp.StatusCode != http.StatusOK
	})
	if resp.StatusCode != http.StatusGone {
		t.Fatalf("exact list at expired rv %s: HTTP %d, want 410: %s", first, resp.StatusCode, body)
	}
	if s := decodeStatus(t, resp, body); s.Reason != metav1.StatusReasonExpired {
		t.Fatalf("exact list at expired rv: reason %s %q, want Expired", s.Reason, s.Message)
	}
}

// ---------------------------------------------------------------------------
// 7. Resource versions from the future

func TestFutureResourceVersion(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	createConfigMap(t, k.clientset().CoreV1().ConfigMaps("default"), "f", nil)
	const base = "/api/v1/namespaces/default/configmaps"
	current := rv(t, listRV(t, k, base))
	future := current + 1000
	tooLarge := regexp.MustCompile(`^Timeout: Too large resource version: (\d+), current: (\d+)$`)

	for _, tc := range []struct{ name, path string }{
		{"list", base + "?resourceVersionMatch=NotOlderThan&resourceVersion=" + strconv.FormatInt(future, 10)},
		{"get", base + "/f?resourceVersion=" + strconv.FormatInt(future, 10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			resp, body := getRaw(t, k, tc.path)
			took := time.Since(start)
			if resp.StatusCode != http.StatusGatewayTimeout {
				t.Fatalf("HTTP %d after %v, want 504: %s", resp.StatusCode, took, body)
			}
			if took < 2*time.Second || took > 15*time.Second {
				t.Errorf("answered after %v, want about 3s of waiting", took)
			}
			status := decodeStatus(t, resp, body)
			if status.Reason != metav1.StatusReasonTimeout {
				t.Fatalf("reason %s, want Timeout", status.Reason)
			}
			m := tooLarge.FindStringSubmatch(status.Message)
			if m == nil {
				t.Fatalf("message %q, want \"Timeout: Too large resource version: N, current: M\"", status.Message)
			}
			if n, _ := strconv.ParseInt(m[1], 10, 64); n != future {
				t.Fatalf("message %q names %d, want %d", status.Message, n, future)
			}
			if cur, _ := strconv.ParseInt(m[2], 10, 64); cur < current || cur >= future {
				t.Fatalf("message %q: current %d, want the server's revision (>= %d)", status.Message, cur, current)
			}
			if got := resp.Header.Get("Retry-After"); got != "1" {
				t.Errorf("Retry-After %q, want 1", got)
			}
			if status.Details == nil || status.Details.RetryAfterSeconds != 1 || len(status.Details.Causes) != 1 ||
				status.Details.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge {
				t.Errorf("details %+v, want retryAfterSeconds 1 and a ResourceVersionTooLarge cause", status.Details)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// 8. List option validation

func TestListOptionValidation(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	cms := k.clientset().CoreV1().ConfigMaps("default")
	createConfigMap(t, cms, "a", nil)
	createConfigMap(t, cms, "b", nil)
	page, err := cms.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || page.Continue == "" {
		t.Fatalf("first page: continue %q, %v", page.Continue, err)
	}
	const base = "/api/v1/namespaces/default/configmaps"
	const invalid = `ListOptions.meta.k8s.io "" is invalid: `
	cases := []statusCase{
		{name: "match without resourceVersion", path: base + "?resourceVersionMatch=NotOlderThan",
			code: 422, reason: metav1.StatusReasonInvalid,
			message: invalid + "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"},
		{name: "Exact at 0", path: base + "?resourceVersionMatch=Exact&resourceVersion=0",
			code: 422, reason: metav1.StatusReasonInvalid,
			message: invalid + `resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`},
		{name: "sendInitialEvents on a list", path: base + "?sendInitialEvents=true",
			code: 422, reason: metav1.StatusReasonInvalid,
			message: invalid + "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"},
		{name: "sendInitialEvents without match", path: base + "?watch=1&sendInitialEvents=true",
			code: 422, reason: metav1.StatusReasonInvalid,
			message: invalid + "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"},
		{name: "continue with resourceVersion", path: base + "?limit=1&resourceVersion=5&continue=" + url.QueryEscape(page.Continue),
			code: 400, reason: metav1.StatusReasonBadRequest,
			message: "specifying resource version is not allowed when using continue"},
		{name: "garbage continue", path: base + "?limit=1&continue=garbage",
			code: 400, reason: metav1.StatusReasonBadRequest, message: "invalid continue token: ", prefix: true},
	}
	client := k.rawClient()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.method = "GET"
			status := doStatus(t, client, k.config.Host, tc)
			if int(status.Code) != tc.code || status.Reason != tc.reason {
				t.Fatalf("got %d %s %q, want %d %s", status.Code, status.Reason, status.Message, tc.code, tc.reason)
			}
			if status.Message != tc.message && !(tc.prefix && strings.HasPrefix(status.Message, tc.message)) {
				t.Fatalf("message %q, want %q", status.Message, tc.message)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// 9. Paging

func TestPaging(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	cs := k.clientset()
	createNamespace(t, cs, "pages")
	cms := cs.CoreV1().ConfigMaps("pages")
	var all []string
	for i := range 25 {
		name := fmt.Sprintf("p%02d", i)
		labels := map[string]string{"parity": []string{"even", "odd"}[i%2]}
		createConfigMap(t, cms, name, labels)
		all = append(all, name)
	}

	t.Run("label selector has no remainingItemCount", func(t *testing.T) {
		var got []string
		opts := metav1.ListOptions{LabelSelector: "parity=even", Limit: 5}
		for pages := 0; ; pages++ {
			list, err := cms.List(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			if list.RemainingItemCount != nil {
				t.Errorf("page %d: remainingItemCount %d with a label selector, want absent", pages, *list.RemainingItemCount)
			}
			got = append(got, names(list.Items)...)
			if list.Continue == "" {
				break
			}
			if pages > 20 {
				t.Fatal("too many pages")
			}
			opts.Continue = list.Continue
		}
		if len(got) != 13 {
			t.Fatalf("pages hold %d even configmaps, want 13: %v", len(got), got)
		}
	})

	first, err := cms.List(ctx, metav1.ListOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	snapshot := first.ResourceVersion

	// Change the collection between pages: later pages still show the
	// snapshot of the first.
	createConfigMap(t, cms, "p99", nil)
	createConfigMap(t, cms, "p10a", nil)
	deleteConfigMap(t, cms, "p15")
	deleteConfigMap(t, cms, "p22")

	second, err := cms.List(ctx, metav1.ListOptions{Limit: 10, Continue: first.Continue})
	if err != nil {
		t.Fatal(err)
	}
	third, err := cms.List(ctx, metav1.ListOptions{Limit: 10, Continue: second.Continue})
	if err != nil {
		t.Fatal(err)
	}
	pages := []*corev1.ConfigMapList{first, second, third}
	wantRemaining := []string{"15", "5", "absent"}
	for i, page := range pages {
		if got := strings.Join(names(page.Items), ","); got != strings.Join(all[10*i:min(10*i+10, 25)], ",") {
			t.Errorf("page %d: %s, want %v", i+1, got, all[10*i:min(10*i+10, 25)])
		}
		if page.ResourceVersion != snapshot {
			t.Errorf("page %d: resourceVersion %s, want the first page's %s", i+1, page.ResourceVersion, snapshot)
		}
		if last := i == 2; (page.Continue == "") != last {
			t.Errorf("page %d: continue %q", i+1, page.Continue)
		}
		remaining := "absent"
		if page.RemainingItemCount != nil {
			remaining = strconv.FormatInt(*page.RemainingItemCount, 10)
		}
		if remaining != wantRemaining[i] {
			t.Errorf("page %d: remainingItemCount %s, want %s", i+1, remaining, wantRemaining[i])
		}
	}

	exact, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: snapshot, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(exact.Items), ","); got != strings.Join(all, ",") || exact.ResourceVersion != snapshot {
		t.Fatalf("exact list at %s: rv %s items %s, want the first page's state %v", snapshot, exact.ResourceVersion, got, all)
	}
	now, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(now.Items) != 25 || rv(t, now.ResourceVersion) <= rv(t, snapshot) {
		t.Fatalf("current list: %d items at rv %s", len(now.Items), now.ResourceVersion)
	}
}

// TestPagedListOfAPastRevision: pages of an exact list at a revision the
// watch cache no longer holds (an object changed since, and no paged list
// kept a snapshot of it) are read from storage; each object comes once,
// as it was at that revision, and every page says that revision.
func TestPagedListOfAPastRevision(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	cs := k.clientset()
	createNamespace(t, cs, "past")
	cms := cs.CoreV1().ConfigMaps("past")
	var all []string
	for i := range 5 {
		name := fmt.Sprintf("p%d", i)
		createConfigMap(t, cms, name, nil)
		all = append(all, name+"=v")
	}
	past, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	changed := past.Items[2].DeepCopy()
	changed.Data["k"] = "changed"
	updateConfigMap(t, cms, changed)

	var got []string
	opts := metav1.ListOptions{ResourceVersion: past.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact, Limit: 2}
	for pages := 1; ; pages++ {
		page, err := cms.List(ctx, opts)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		if page.ResourceVersion != past.ResourceVersion {
			t.Fatalf("page %d at resourceVersion %s, want %s", pages, page.ResourceVersion, past.ResourceVersion)
		}
		for _, cm := range page.Items {
			got = append(got, cm.Name+"="+cm.Data["k"])
		}
		if page.Continue == "" || pages > len(all) {
			break
		}
		opts = metav1.ListOptions{Limit: 2, Continue: page.Continue}
	}
	if strings.Join(got, ",") != strings.Join(all, ",") {
		t.Fatalf("pages of the list at %s: %v, want %v", past.ResourceVersion, got, all)
	}
}

// ---------------------------------------------------------------------------
// 10. Field and label selectors

func TestSelectors(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	cs := k.clientset()
	createNamespace(t, cs, "sel")
	pods := cs.CoreV1().Pods("sel")
	for name, node := range map[string]string{"a": "n1", "b": "n1", "c": "n2"} {
		if _, err := pods.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ selector, want string }{
		{"spec.nodeName=n1", "a,b"},
		{"spec.nodeName=n2", "c"},
		{"spec.nodeName!=n1", "c"},
		{"status.phase=Pending", "a,b,c"},
		{"status.phase=Running", ""},
		{"metadata.name=b", "b"},
	} {
		list, err := pods.List(ctx, metav1.ListOptions{FieldSelector: tc.selector})
		if err != nil {
			t.Errorf("pods with %s: %v", tc.selector, err)
			continue
		}
		var got []string
		for _, p := range list.Items {
			got = append(got, p.Name)
		}
		sort.Strings(got)
		if strings.Join(got, ",") != tc.want {
			t.Errorf("pods with %s: %v, want %s", tc.selector, got, tc.want)
		}
	}

	client := k.rawClient()
	for _, tc := range []statusCase{
		{name: "unsupported pod field", path: "/api/v1/namespaces/sel/pods?fieldSelector=spec.foo%3Dx",
			code: 400, reason: metav1.StatusReasonBadRequest, message: "field label not supported: spec.foo"},
		{name: "configmap data field", path: "/api/v1/namespaces/sel/configmaps?fieldSelector=data.k%3Dv",
			code: 400, reason: metav1.StatusReasonBadRequest,
			message: `"data.k" is not a known field selector: only "metadata.name", "metadata.namespace"`},
	} {
		tc.method = "GET"
		status := doStatus(t, client, k.config.Host, tc)
		if int(status.Code) != tc.code || status.Reason != tc.reason || status.Message != tc.message {
			t.Errorf("%s: got %d %s %q, want %d %s %q", tc.name, status.Code, status.Reason, status.Message, tc.code, tc.reason, tc.message)
		}
	}

	// Every configmap carries set=s, so anything else in the namespace
	// cannot disturb the results.
	cms := cs.CoreV1().ConfigMaps("sel")
	for name, app := range map[string]string{"web": "web", "db": "db", "cache": "cache", "none": ""} {
		labels := map[string]string{"set": "s"}
		if app != "" {
			labels["app"] = app
		}
		createConfigMap(t, cms, name, labels)
	}
	for _, tc := range []struct{ selector, want string }{
		{"set=s,app=web", "web"},
		{"set=s,app==web", "web"},
		{"set=s,app!=web", "cache,db,none"},
		{"set=s,app in (web,db)", "db,web"},
		{"set=s,app notin (web,db)", "cache,none"},
		{"set=s,app", "cache,db,web"},
		{"set=s,!app", "none"},
	} {
		list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: tc.selector})
		if err != nil {
			t.Errorf("configmaps with %q: %v", tc.selector, err)
			continue
		}
		if got := sortedNames(list.Items); got != tc.want {
			t.Errorf("configmaps with %q: %s, want %s", tc.selector, got, tc.want)
		}
	}
}

// ---------------------------------------------------------------------------
// 11. Filtered watch

// TestFilteredWatch watches a label selector while an object moves in and
// out of it: entering is ADDED, leaving is DELETED carrying the last
// matching content at the leaving write's resourceVersion.
func TestFilteredWatch(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	cs := k.clientset()
	createNamespace(t, cs, "fw")
	cms := cs.CoreV1().ConfigMaps("fw")
	const base = "/api/v1/namespaces/fw/configmaps"
	w := openWatch(t, k, base+"?watch=1&labelSelector=tier%3Dweb&resourceVersion="+listRV(t, k, base))

	// Not matching: no event. The next event read must be the one for the
	// label being added, which shows nothing came before it.
	cm := createConfigMap(t, cms, "f", map[string]string{"tier": "db"})

	check := func(typ, tier, wantRV string) {
		t.Helper()
		ev := w.expect(typ, "f")
		if got := fieldString(ev.Object, "metadata", "labels", "tier"); got != tier || objRV(ev.Object) != wantRV {
			t.Fatalf("%s event: tier %q rv %s, want tier %q rv %s", typ, got, objRV(ev.Object), tier, wantRV)
		}
	}
	cm.Labels["tier"] = "web"
	cm = updateConfigMap(t, cms, cm)
	check("ADDED", "web", cm.ResourceVersion)

	cm.Labels["tier"] = "api"
	cm = updateConfigMap(t, cms, cm)
	check("DELETED", "web", cm.ResourceVersion)

	cm.Labels["tier"] = "web"
	cm = updateConfigMap(t, cms, cm)
	check("ADDED", "web", cm.ResourceVersion)

	// An unrelated non-matching write, then a matching one: only the
	// latter shows, as MODIFIED.
	createConfigMap(t, cms, "other", map[string]string{"tier": "db"})
	cm.Data["k"] = "v2"
	cm = updateConfigMap(t, cms, cm)
	check("MODIFIED", "web", cm.ResourceVersion)
}

// TestWatchTableHeadersOnce: a watch in Table form sends the column
// definitions with its first event only, and its bookmarks are Tables of
// one row whose object carries the bookmark's annotations, as from
// kube-apiserver.
func TestWatchTableHeadersOnce(t *testing.T) {
	k := startKapi(t)
	k.mustKubectl("create", "secret", "generic", "s1")
	k.mustKubectl("create", "secret", "generic", "s2")
	req, _ := http.NewRequest(http.MethodGet, k.config.Host+
		"/api/v1/namespaces/default/secrets?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1", nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := k.rawClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	decoder := json.NewDecoder(resp.Body)
	var events []struct {
		Type   string
		Object metav1.Table
	}
	for {
		var e struct {
			Type   string
			Object metav1.Table
		}
		if err := decoder.Decode(&e); err != nil {
			break
		}
		events = append(events, e)
	}
	if len(events) != 3 || events[2].Type != "BOOKMARK" {
		t.Fatalf("events: %+v", events)
	}
	if len(events[0].Object.ColumnDefinitions) == 0 || events[1].Object.ColumnDefinitions != nil || events[2].Object.ColumnDefinitions != nil {
		t.Errorf("column definitions per event: %d, %v, %v; want only the first's",
			len(events[0].Object.ColumnDefinitions), events[1].Object.ColumnDefinitions, events[2].Object.ColumnDefinitions)
	}
	bookmark := events[2].Object
	if len(bookmark.Rows) != 1 || !strings.Contains(string(bookmark.Rows[0].Object.Raw), `"k8s.io/initial-events-end":"true"`) {
		t.Errorf("bookmark table: %+v", bookmark.Rows)
	}
}
