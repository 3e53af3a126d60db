package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// answer is what a raw request got.
type answer struct {
	code int
	head http.Header
	body []byte
}

func (k *kapi) ask(t *testing.T, method, path string, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, k.config.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := k.rawClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, body}
}

// message is the message of a JSON Status body.
func (a answer) message() string {
	var status struct{ Message string }
	json.Unmarshal(a.body, &status)
	return status.Message
}

const (
	aggregatedJSON  = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	aggregatedProto = "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	routerRefusal   = "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf"
	handlerRefusal  = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
)

// TestDiscoveryNegotiatesAsKube: discovery documents come in JSON, YAML
// or protobuf as the Accept header asks, aggregated discovery in JSON or
// protobuf with an entity tag, and what they do not serve is refused with
// kube-apiserver's answers (its router's for /api and a group-version,
// its handler's for /apis and a group), as kube-apiserver 1.37 answers.
func TestDiscoveryNegotiatesAsKube(t *testing.T) {
	k := startKapi(t)

	if a := k.ask(t, "GET", "/apis/apps/v1", "Accept", "application/yaml"); a.code != 200 || a.head.Get("Content-Type") != "application/yaml" ||
		!bytes.Contains(a.body, []byte("kind: APIResourceList")) {
		t.Errorf("apps/v1 in YAML: %d %s %.80s", a.code, a.head.Get("Content-Type"), a.body)
	}
	if a := k.ask(t, "GET", "/api/v1", "Accept", "application/vnd.kubernetes.protobuf"); a.code != 200 ||
		a.head.Get("Content-Type") != "application/vnd.kubernetes.protobuf" || !bytes.HasPrefix(a.body, []byte("k8s\x00")) {
		t.Errorf("v1 in protobuf: %d %s %q", a.code, a.head.Get("Content-Type"), a.body[:min(len(a.body), 8)])
	}
	if a := k.ask(t, "GET", "/api/v1", "Accept", "application/json;pretty=1"); !bytes.HasPrefix(a.body, []byte("{\n  \"kind\": \"APIResourceList\",\n  \"groupVersion\": \"v1\"")) {
		t.Errorf("v1 asked pretty: %.80s", a.body)
	}
	for _, c := range []struct{ path, accept, want string }{
		{"/api/v1", "text/html", routerRefusal},
		{"/apis/apps/v1", ",,", routerRefusal},
		{"/api", "application/cbor", routerRefusal},
		{"/apis/apps/v1", "application/json;as=Table;v=v1;g=meta.k8s.io", handlerRefusal},
		{"/apis/apps/v1", aggregatedJSON, handlerRefusal},
		{"/apis", "text/html", handlerRefusal},
		{"/apis/apps", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", handlerRefusal},
	} {
		a := k.ask(t, "GET", c.path, "Accept", c.accept)
		if a.code != http.StatusNotAcceptable || a.head.Get("Content-Type") != "application/json" || a.message() != c.want {
			t.Errorf("%s accepting %s: %d %s %q", c.path, c.accept, a.code, a.head.Get("Content-Type"), a.message())
		}
	}
	// A client accepting nothing served gets the Status as indented JSON.
	if a := k.ask(t, "GET", "/api/v1", "Accept", "text/html"); !bytes.HasPrefix(a.body, []byte("{\n  \"kind\": \"Status\"")) || bytes.HasSuffix(a.body, []byte("\n")) {
		t.Errorf("406 body: %q", a.body)
	}

	a := k.ask(t, "GET", "/apis", "Accept", aggregatedProto+","+aggregatedJSON+",application/json")
	etag := a.head.Get("ETag")
	if a.code != 200 || a.head.Get("Content-Type") != aggregatedProto || !bytes.HasPrefix(a.body, []byte("k8s\x00")) ||
		etag == "" || a.head.Get("Cache-Control") != "public" {
		t.Errorf("aggregated discovery in protobuf: %d %v", a.code, a.head)
	}
	if a := k.ask(t, "GET", "/apis", "Accept", aggregatedJSON, "If-None-Match", etag); a.code != http.StatusNotModified || len(a.body) != 0 {
		t.Errorf("aggregated discovery with its entity tag: %d %q", a.code, a.body)
	}
	// As kube-apiserver's, /apis/ is not aggregated discovery's.
	if a := k.ask(t, "GET", "/apis/", "Accept", aggregatedJSON+",application/json"); a.head.Get("Content-Type") != "application/json" ||
		!bytes.Contains(a.body, []byte(`"kind":"APIGroupList"`)) {
		t.Errorf("/apis/ asked for aggregated discovery: %s %.80s", a.head.Get("Content-Type"), a.body)
	}
	if a := k.ask(t, "GET", "/apis/apps/v9"); a.code != 404 || a.message() != "the server could not find the requested resource" {
		t.Errorf("a version a group lacks: %d %q", a.code, a.body)
	}

	// A client of protobuf discovers the API as one of JSON.
	cfg := rest.CopyConfig(k.config)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, resources, err := d.ServerGroupsAndResources(); err != nil || len(resources) < 20 {
		t.Errorf("protobuf discovery: %d group-versions, %v", len(resources), err)
	}
}

// TestServerRoutesAsKube: /version, /metrics and /openapi answer methods
// and media types as kube-apiserver 1.37's routes do.
func TestServerRoutesAsKube(t *testing.T) {
	k := startKapi(t)
	if a := k.ask(t, "GET", "/version/"); a.code != 200 || !bytes.Contains(a.body, []byte(`"gitVersion"`)) {
		t.Errorf("/version/: %d %.80s", a.code, a.body)
	}
	if a := k.ask(t, "POST", "/version"); a.code != http.StatusMethodNotAllowed || a.message() != "the server does not allow this method on the requested resource" {
		t.Errorf("POST /version: %d %q", a.code, a.body)
	}
	if a := k.ask(t, "GET", "/version", "Accept", "text/html"); a.code != http.StatusNotAcceptable ||
		a.message() != "406: Not Acceptable\n\nAvailable representations: application/json" {
		t.Errorf("/version as HTML: %d %q", a.code, a.body)
	}
	if a := k.ask(t, "DELETE", "/metrics"); a.code != 200 || string(a.body) != "metrics reset\n" {
		t.Errorf("DELETE /metrics: %d %.80q", a.code, a.body)
	}
	a := k.ask(t, "GET", "/openapi/v2", "Accept-Encoding", "gzip")
	if a.head.Get("Content-Encoding") != "gzip" || strings.Join(a.head.Values("Vary"), ",") != "Accept-Encoding,Accept" || !bytes.HasPrefix(a.body, []byte{0x1f, 0x8b}) {
		t.Errorf("/openapi/v2 taking gzip: %v", a.head)
	}
	if a := k.ask(t, "GET", "/openapi/v3"); a.head.Get("Content-Type") != "text/plain; charset=utf-8" || a.head.Get("ETag") == "" {
		t.Errorf("/openapi/v3: %v", a.head)
	}
	if a := k.ask(t, "GET", "/openapi/v3/apis/nosuch/v1"); a.code != 404 || len(a.body) != 0 {
		t.Errorf("a v3 document of no group-version: %d %q", a.code, a.body)
	}
	// The index of paths, as kube-apiserver's.
	var root struct{ Paths []string }
	if err := json.Unmarshal(k.ask(t, "GET", "/").body, &root); err != nil || !slices.Contains(root.Paths, "/apis/apps/v1") ||
		!slices.Contains(root.Paths, "/readyz/informer-sync") || !slices.Contains(root.Paths, "/openid/v1/jwks") || !slices.IsSorted(root.Paths) {
		t.Errorf("/: %v %v", root.Paths, err)
	}
	// The checks in kube-apiserver 1.37's order, its identity Lease's hooks
	// among them.
	a = k.ask(t, "GET", "/readyz?verbose")
	want := "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]informer-sync ok\n[+]poststarthook/start-apiserver-admission-initializer ok\n"
	if !strings.HasPrefix(string(a.body), want) || !strings.Contains(string(a.body), "[+]poststarthook/start-kube-apiserver-identity-lease-garbage-collector ok\n") ||
		!strings.HasSuffix(string(a.body), "[+]poststarthook/apiservice-openapiv3-controller ok\n[+]shutdown ok\nreadyz check passed\n") {
		t.Errorf("/readyz?verbose:\n%s", a.body)
	}
}
