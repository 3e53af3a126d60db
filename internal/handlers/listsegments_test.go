package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/resources"
)

// TestListSentAgainFromKeptSection lists the same pods gzipped twice in
// each media type: the second list sends the items section kept from the
// first, and reads back as the uncompressed list does. Once a pod changes
// the next list compresses its items again and shows the change; a section
// no list sent for segmentIdle goes.
func TestListSentAgainFromKeptSection(t *testing.T) {
	api, _ := benchAPI(t, 600) // some 360 KB of JSON: compressed
	now := time.Unix(1000, 0)
	api.segments.now = func() time.Time { return now }
	for i, mediaType := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		t.Run(mediaType, func(t *testing.T) {
			plain := listBody(t, api, mediaType, false)
			if got := listBody(t, api, mediaType, true); got != plain {
				t.Fatalf("the first gzipped list differs from the plain one")
			}
			kept := onlySection(t, api, mediaType)
			now = now.Add(time.Second)
			if got := listBody(t, api, mediaType, true); got != plain {
				t.Fatalf("the list sent from the kept section differs from the plain one")
			}
			if again := onlySection(t, api, mediaType); again != kept || !again.sent.Equal(now) {
				t.Fatalf("the second list did not send the kept section")
			}

			del := httptest.NewRequest(http.MethodDelete, fmt.Sprintf("/api/v1/namespaces/default/pods/pod-%05d", i), nil)
			rec := httptest.NewRecorder()
			api.ServeHTTP(rec, del)
			if rec.Code != http.StatusOK {
				t.Fatalf("delete: %d %s", rec.Code, rec.Body)
			}
			now = now.Add(time.Second)
			changed := listBody(t, api, mediaType, false)
			if changed == plain {
				t.Fatal("deleting a pod did not change the list")
			}
			if got := listBody(t, api, mediaType, true); got != changed {
				t.Fatalf("the gzipped list after a change differs from the plain one")
			}
			var sent []*listSegment
			for _, seg := range keptSections(api, mediaType) {
				if seg.sent.Equal(now) {
					sent = append(sent, seg)
				}
			}
			if len(sent) != 1 || sent[0] == kept {
				t.Fatal("the list after a change was not compressed and kept anew")
			}
		})
	}
	now = now.Add(segmentIdle + time.Second)
	api.segments.dropIdle()
	if n, size := len(api.segments.entries), api.segments.bytes; n != 0 || size != 0 {
		t.Fatalf("%d sections (%d bytes) kept after %v unsent", n, size, segmentIdle)
	}
}

// listBody lists the default namespace's pods, reading a gzipped response
// back with the standard library.
func listBody(t *testing.T, api *API, mediaType string, gzip bool) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/pods", nil)
	req.Header.Set("Accept", mediaType)
	if gzip {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("list: %d %s", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("Content-Encoding") == "gzip"; got != gzip {
		t.Fatalf("gzip asked %t, Content-Encoding %q", gzip, rec.Header().Get("Content-Encoding"))
	}
	if gzip {
		return gunzip(t, rec.Body.Bytes())
	}
	return rec.Body.String()
}

// keptSections returns the sections kept in mediaType's encoding.
func keptSections(api *API, mediaType string) []*listSegment {
	id := api0Serializer(mediaType).Serializer.Identifier()
	api.segments.mu.Lock()
	defer api.segments.mu.Unlock()
	var found []*listSegment
	for key, seg := range api.segments.entries {
		if key.encoder == id {
			found = append(found, seg)
		}
	}
	return found
}

// onlySection returns the one section kept in mediaType's encoding.
func onlySection(t *testing.T, api *API, mediaType string) *listSegment {
	t.Helper()
	sections := keptSections(api, mediaType)
	if len(sections) != 1 {
		t.Fatalf("%d %s sections kept, want 1", len(sections), mediaType)
	}
	return sections[0]
}

// TestKeptSectionKeepsNoObjectAlive keeps a section of two pods and drops
// the pods: they are collected while the section is still kept.
func TestKeptSectionKeepsNoObjectAlive(t *testing.T) {
	var segments listSegments
	store := registry.NewStore(resources.NewBuiltin().Lookup("", "v1", "pods"), nil)
	info := api0Serializer("application/json")
	collected := make(chan string, 2)
	items := []runtime.Object{}
	for _, name := range []string{"a", "b"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
		goruntime.AddCleanup(pod, func(name string) { collected <- name }, name)
		items = append(items, pod)
	}
	segments.put(store, info, items, []byte("deflated"), deflated{})
	if segments.get(store, info, items) == nil {
		t.Fatal("the section of the pods is not found for them")
	}
	items = nil
	deadline := time.Now().Add(10 * time.Second)
	for gone := 0; gone < 2; {
		goruntime.GC()
		select {
		case <-collected:
			gone++
		case <-time.After(100 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatalf("%d of the 2 pods collected in 10 s while their section is kept", gone)
			}
		}
	}
	if len(segments.entries) != 1 {
		t.Fatalf("%d sections kept, want the one", len(segments.entries))
	}
}

// TestLookingForASectionAllocatesNothing: every list a client could take
// gzipped looks for a kept section, found or not.
func TestLookingForASectionAllocatesNothing(t *testing.T) {
	var segments listSegments
	store := registry.NewStore(resources.NewBuiltin().Lookup("", "v1", "pods"), nil)
	info := api0Serializer("application/json")
	kept := []runtime.Object{&corev1.Pod{}, &corev1.Pod{}, &corev1.Pod{}}
	segments.put(store, info, kept, []byte("deflated"), deflated{})
	other := []runtime.Object{kept[0], &corev1.Pod{}, kept[2]}
	for name, items := range map[string][]runtime.Object{"found": kept, "same ends, other middle": other, "none kept": kept[:2]} {
		if allocs := testing.AllocsPerRun(100, func() { segments.get(store, info, items) }); allocs != 0 {
			t.Errorf("%s: %v allocations a lookup", name, allocs)
		}
	}
	if segments.get(store, info, other) != nil || segments.get(store, info, kept) == nil {
		t.Fatal("a lookup found the wrong section")
	}
}
