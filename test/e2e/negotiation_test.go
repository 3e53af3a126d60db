package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
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

// TestResourcesNegotiateAsKube: a built-in resource's route refuses an
// Accept header naming none of its media types before its handler runs,
// with the router's Status (a collection's route also names the watch
// streams); custom resources and their group-version's discovery, which
// kube-apiserver serves outside its router, take media ranges and refuse
// with the handler's words; a watch agrees on the read's media type before
// the stream's, as kube-apiserver 1.37 answers.
func TestResourcesNegotiateAsKube(t *testing.T) {
	k := startKapi(t)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	k.mustKubectl("create", "configmap", "nego")
	typed := "application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor"
	streams := "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch, application/cbor-seq"
	const (
		configMaps = "/api/v1/namespaces/default/configmaps"
		widgetList = "/apis/example.com/v1/namespaces/default/widgets"
	)
	for _, c := range []struct{ method, path, accept, want string }{
		{"GET", configMaps, "text/plain", "406: Not Acceptable\n\nAvailable representations: " + typed + ", " + streams},
		{"GET", configMaps + "?watch=1", "application/*", "406: Not Acceptable\n\nAvailable representations: " + typed + ", " + streams},
		{"GET", configMaps + "/nego", "text/plain", "406: Not Acceptable\n\nAvailable representations: " + typed},
		{"DELETE", configMaps + "/nego", "text/plain", "406: Not Acceptable\n\nAvailable representations: " + typed},
		{"GET", configMaps + "?watch=1", "application/json;as=Foo;g=meta.k8s.io;v=v1", "only the following media types are accepted: " + typed},
		{"GET", configMaps + "?watch=1", "application/yaml", "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch, application/cbor;stream=watch"},
		// YAML, agreed on first, does not stream: the JSON after it is not
		// taken instead.
		{"GET", configMaps + "?watch=1", "application/yaml, application/json", "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch, application/cbor;stream=watch"},
		// Custom resources list protobuf, which serves only their metadata
		// (PartialObjectMetadata), as kube's custom resource handler does.
		{"GET", widgetList, "text/plain", "only the following media types are accepted: " + typed},
		{"GET", widgetList + "?watch=1", "application/vnd.kubernetes.protobuf", "only the following media types are accepted: " + typed},
		{"GET", "/apis/example.com/v1", "text/plain", handlerRefusal},
	} {
		a := k.ask(t, c.method, c.path, "Accept", c.accept)
		// The Status comes in the media type agreed on: JSON, YAML or
		// protobuf (whose bytes hold the message as it is).
		var status metav1.Status
		if err := yaml.Unmarshal(a.body, &status); err != nil && bytes.Contains(a.body, []byte(c.want)) {
			status.Message = c.want
		}
		router := strings.HasPrefix(c.want, "406: ")
		if a.code != http.StatusNotAcceptable || status.Message != c.want || (status.Details != nil) != router {
			t.Errorf("%s %s accepting %s: %d %q, details %v", c.method, c.path, c.accept, a.code, status.Message, status.Details)
		}
	}
	// The router refuses before the handler: nothing is deleted.
	if _, err := k.kubectl("get", "configmap", "nego"); err != nil {
		t.Errorf("the refused delete deleted: %v", err)
	}
	for _, path := range []string{widgetList, "/apis/example.com/v1"} {
		if a := k.ask(t, "GET", path, "Accept", "application/*"); a.code != 200 || a.head.Get("Content-Type") != "application/json" {
			t.Errorf("%s accepting application/*: %d %s", path, a.code, a.head.Get("Content-Type"))
		}
	}
	// kube-apiserver's parser takes q=0 as the least preferred.
	if a := k.ask(t, "GET", configMaps, "Accept", "image/png, */*;q=0"); a.code != 200 || a.head.Get("Content-Type") != "application/json" {
		t.Errorf("accepting */*;q=0: %d %s", a.code, a.head.Get("Content-Type"))
	}
	// A group-version of custom resources alone is served for any method,
	// as apiextensions serves it.
	if a := k.ask(t, "POST", "/apis/example.com/v1"); a.code != 200 || !bytes.Contains(a.body, []byte(`"kind":"APIResourceList"`)) {
		t.Errorf("POST of a custom group-version's discovery: %d %.80s", a.code, a.body)
	}
}

// TestServerRoutesAsKube: /version, /metrics and /openapi answer methods
// and media types as kube-apiserver 1.37's routes do; "/" lists the paths,
// /statusz and /flagz show what the server is and how it was started.
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
	// A pod's log route produces text first, and takes no range; /api's
	// route refuses a range before it looks for aggregated discovery.
	if a := k.ask(t, "GET", "/api/v1/namespaces/default/pods/none/log", "Accept", "application/*"); a.code != http.StatusNotAcceptable ||
		!strings.HasPrefix(a.message(), "406: Not Acceptable\n\nAvailable representations: text/plain, application/json, application/yaml, application/vnd.kubernetes.protobuf") {
		t.Errorf("a log for a range: %d %q", a.code, a.message())
	}
	if a := k.ask(t, "GET", "/api", "Accept", "application/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"); a.code != http.StatusNotAcceptable {
		t.Errorf("/api's aggregated discovery for a range: %d", a.code)
	}
	// The document's Accept read as kube-openapi reads it.
	const v2Protobuf = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	for accept, want := range map[string]int{"*/json": 200, "application/json;q=0": 200, "Application/JSON": 406, "*": 200} {
		if a := k.ask(t, "HEAD", "/openapi/v2", "Accept", accept); a.code != want {
			t.Errorf("/openapi/v2 with Accept %q: %d, want %d", accept, a.code, want)
		}
	}
	if a := k.ask(t, "HEAD", "/openapi/v2", "Accept", "*/*, "+v2Protobuf); a.head.Get("Content-Type") != v2Protobuf {
		t.Errorf("/openapi/v2 for a range and then protobuf: %q", a.head.Get("Content-Type"))
	}
	// Read as kube's compressing handler reads it: any case, "*" no, the
	// last parameter's q.
	for enc, want := range map[string]string{"GZIP": "gzip", "gzip;q=0.5": "gzip", "gzip;q=0": "", "*": "", "gzip;q=0;level=1": "gzip", "gzip;q=x": ""} {
		if a := k.ask(t, "GET", "/openapi/v2", "Accept-Encoding", enc); a.head.Get("Content-Encoding") != want {
			t.Errorf("/openapi/v2 with Accept-Encoding %q: Content-Encoding %q", enc, a.head.Get("Content-Encoding"))
		}
	}
	if a := k.ask(t, "HEAD", "/openapi/v2", "Accept-Encoding", "gzip"); a.head.Get("Content-Encoding") != "" || a.head.Get("Content-Length") == "" {
		t.Errorf("HEAD /openapi/v2: %v", a.head)
	}
	for _, path := range []string{"/openapi/v3/", "/openapi/v3/api/v1/"} {
		if a := k.ask(t, "GET", path); a.code != 404 {
			t.Errorf("%s: %d", path, a.code)
		}
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
	// A custom group is listed, as kube-aggregator lists its APIService.
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	if err := json.Unmarshal(k.ask(t, "GET", "/").body, &root); err != nil || !slices.Contains(root.Paths, "/apis/example.com/v1") ||
		!slices.Contains(root.Paths, "/flagz") || !slices.Contains(root.Paths, "/statusz") {
		t.Errorf("/ with a custom group: %v %v", root.Paths, err)
	}
	// kube-apiserver's debugging pages: what it is, and its flags.
	// (Their text puts a delimiter between key and value that changes
	// from start to start, so that nobody parses it.)
	if a := k.ask(t, "GET", "/statusz", "Accept", "text/plain"); a.code != 200 || !strings.HasPrefix(string(a.body), "\napiserver statusz\n") ||
		zpageValue(a.body, "Binary version") != "1.37" || !strings.Contains(zpageValue(a.body, "Paths"), "/readyz") {
		t.Errorf("/statusz: %d %s", a.code, a.body)
	}
	var status struct{ Kind, BinaryVersion, EmulationVersion string }
	a = k.ask(t, "GET", "/statusz", "Accept", "application/json;as=Statusz;v=v1beta1;g=config.k8s.io")
	if err := json.Unmarshal(a.body, &status); err != nil || status.Kind != "Statusz" || status.BinaryVersion != "1.37" || status.EmulationVersion != "1.37" {
		t.Errorf("/statusz as JSON: %d %s", a.code, a.body)
	}
	if a := k.ask(t, "GET", "/flagz", "Accept", "text/plain"); a.code != 200 || !strings.HasPrefix(zpageValue(a.body, "listen"), "127.0.0.1:") ||
		zpageValue(a.body, "history-window") != "5m0s" {
		t.Errorf("/flagz: %d %s", a.code, a.body)
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

// zpageValue is the value of key on a line of /statusz's or /flagz's
// text, whatever delimiter follows the key.
func zpageValue(body []byte, key string) string {
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok && rest != "" && strings.ContainsRune(":= ", rune(rest[0])) {
			return strings.TrimLeft(rest, ":= ")
		}
	}
	return ""
}
