package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// watchEvents decodes a JSON watch stream.
func watchEvents(t *testing.T, body []byte) []metav1.WatchEvent {
	t.Helper()
	var events []metav1.WatchEvent
	dec := json.NewDecoder(bytes.NewReader(body))
	for dec.More() {
		var ev metav1.WatchEvent
		if err := dec.Decode(&ev); err != nil {
			t.Fatalf("watch stream %q: %v", body, err)
		}
		events = append(events, ev)
	}
	return events
}

// serveWatch serves path and returns the answer once the watch has ended.
func serveWatch(api *API, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

const podWatches = "/api/v1/namespaces/default/pods?watch=1"

// TestWatchOfANonNumericResourceVersion: kube-apiserver's storage makes
// no Status of the version it cannot read: 500, without reason.
func TestWatchOfANonNumericResourceVersion(t *testing.T) {
	api, _ := benchAPI(t, 0)
	rec := serveWatch(api, podWatches+"&resourceVersion=abc")
	var status metav1.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &status); err != nil {
		t.Fatalf("HTTP %d %q: %v", rec.Code, rec.Body, err)
	}
	const want = `resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`
	if rec.Code != http.StatusInternalServerError || status.Code != 500 || status.Reason != "" || status.Message != want {
		t.Fatalf("HTTP %d, status %d %q %q; want 500, no reason, %q", rec.Code, status.Code, status.Reason, status.Message, want)
	}
}

// TestWatchFromAFutureVersion: a streaming list from a version the cache
// does not reach answers 200 and an ERROR event, after kube-apiserver's
// three seconds, whatever the watch's timeout; a watch of changes from it
// waits for them, with no bookmark behind the version.
func TestWatchFromAFutureVersion(t *testing.T) {
	api, _ := benchAPI(t, 1)
	t.Run("streaming list", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		rec := serveWatch(api, podWatches+"&sendInitialEvents=true&allowWatchBookmarks=true"+
			"&resourceVersionMatch=NotOlderThan&resourceVersion=99999999&timeoutSeconds=2")
		if took := time.Since(start); took < 3*time.Second {
			t.Errorf("answered after %v, want after three seconds", took)
		}
		events := watchEvents(t, rec.Body.Bytes())
		if rec.Code != http.StatusOK || len(events) != 1 || events[0].Type != "ERROR" {
			t.Fatalf("HTTP %d %q, want 200 and one ERROR event", rec.Code, rec.Body)
		}
		var status metav1.Status
		if err := json.Unmarshal(events[0].Object.Raw, &status); err != nil {
			t.Fatal(err)
		}
		if status.Kind != "Status" || status.Code != http.StatusGatewayTimeout || status.Reason != metav1.StatusReasonTimeout ||
			!strings.HasPrefix(status.Message, "Timeout: Too large resource version: 99999999, current: ") {
			t.Fatalf("ERROR event %s, want a Status 504 Timeout \"Too large resource version\"", events[0].Object.Raw)
		}
		if d := status.Details; d == nil || d.RetryAfterSeconds != 1 || len(d.Causes) != 1 ||
			d.Causes[0] != (metav1.StatusCause{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}) {
			t.Fatalf("details %+v, want retryAfterSeconds 1 and the ResourceVersionTooLarge cause", status.Details)
		}
	})
	t.Run("changes", func(t *testing.T) {
		t.Parallel()
		rec := serveWatch(api, podWatches+"&allowWatchBookmarks=true&resourceVersion=99999999&timeoutSeconds=3")
		if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
			t.Fatalf("HTTP %d %q, want 200 and no event", rec.Code, rec.Body)
		}
	})
}

// TestShortWatchGetsABookmarkBeforeItsEnd: the watch's timeout reaches
// the cache, which sends a bookmark two seconds before it, long before
// the interval's.
func TestShortWatchGetsABookmarkBeforeItsEnd(t *testing.T) {
	api, s := benchAPI(t, 1) // pod-00000, at revision 1
	store := api.reg.Snapshot().Lookup(podsResource)
	w := &writeCounter{ResponseRecorder: httptest.NewRecorder()}
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		api.ServeHTTP(w, httptest.NewRequest(http.MethodGet, podWatches+"&allowWatchBookmarks=true&timeoutSeconds=4&resourceVersion=1", nil))
	}()
	// Changes all along, for bookmarks to be past the watch's start
	// whenever it registered.
writing:
	for i := 1; ; i++ {
		data, _ := json.Marshal(benchPod(i))
		if _, err := s.Create(context.Background(), []byte(store.Key("default", fmt.Sprintf("pod-%05d", i))), data); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
			break writing
		case <-time.After(100 * time.Millisecond):
		}
	}
	if took := time.Since(start); took < 4*time.Second {
		t.Fatalf("a 4-second watch ended after %v", took)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var bookmarks int
	for _, ev := range watchEvents(t, w.body.Bytes()) {
		if ev.Type == "BOOKMARK" {
			bookmarks++
		}
	}
	if bookmarks == 0 {
		t.Fatalf("no bookmark before the end of a 4-second watch: %s", w.body.Bytes())
	}
}

// TestInitialEventsEndIsKubesBookmark: the bookmark that ends a streaming
// list's initial events is the object kube-apiserver 1.37 sends: the
// kind's empty internal object in the watched version (a Deployment's
// replicas of 0, a DaemonSet's template generation annotation), annotated
// k8s.io/initial-events-end.
func TestInitialEventsEndIsKubesBookmark(t *testing.T) {
	api, _ := benchAPI(t, 2)
	const query = "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1"
	for path, want := range map[string]string{
		"/api/v1/namespaces/default/pods": `{"kind":"Pod","apiVersion":"v1","metadata":{"annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"containers":null},"status":{}}`,
		"/apis/apps/v1/namespaces/default/deployments": `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"annotations":{"k8s.io/initial-events-end":"true"}},` +
			`"spec":{"replicas":0,"selector":null,"template":{"metadata":{},"spec":{"containers":null}},"strategy":{}},"status":{}}`,
		"/apis/apps/v1/namespaces/default/daemonsets": `{"kind":"DaemonSet","apiVersion":"apps/v1","metadata":{"annotations":{"deprecated.daemonset.template.generation":"0","k8s.io/initial-events-end":"true"}},` +
			`"spec":{"selector":null,"template":{"metadata":{},"spec":{"containers":null}},"updateStrategy":{}},"status":{"currentNumberScheduled":0,"numberMisscheduled":0,"desiredNumberScheduled":0,"numberReady":0}}`,
	} {
		rec := serveWatch(api, path+query)
		var bookmark string
		for _, ev := range watchEvents(t, rec.Body.Bytes()) {
			if ev.Type == "BOOKMARK" {
				bookmark = regexp.MustCompile(`"resourceVersion":"\d+",`).ReplaceAllString(string(ev.Object.Raw), "")
				break
			}
		}
		if bookmark != want {
			t.Errorf("%s: bookmark\n%s\nwant\n%s", path, bookmark, want)
		}
	}
}
