package server

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestHealthEndpoints reads /healthz, /livez and /readyz as a client with
// and without verbose, excluding a check, and one check alone.
func TestHealthEndpoints(t *testing.T) {
	s := startServer(t)
	client, err := rest.HTTPClientFor(restConfig(t, s.Kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := client.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	// The local APIServices turn Available just after the start (the
	// aggregator's controller, as in kube-apiserver): a loaded machine
	// may see /healthz fail at first.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if code, _ := get("/healthz"); code == http.StatusOK {
			break
		}
	}
	for _, path := range []string{"/healthz", "/livez", "/readyz"} {
		if code, body := get(path); code != http.StatusOK || body != "ok" {
			t.Errorf("%s: %d %q, want 200 ok", path, code, body)
		}
	}
	code, body := get("/readyz?verbose")
	for _, line := range []string{"[+]ping ok", "[+]etcd ok", "[+]informer-sync ok", "[+]shutdown ok", "readyz check passed"} {
		if code != http.StatusOK || !strings.Contains(body, line) {
			t.Errorf("/readyz?verbose: %d, lacks %q:\n%s", code, line, body)
		}
	}
	if _, body := get("/livez?verbose"); strings.Contains(body, "shutdown") || !strings.Contains(body, "livez check passed") {
		t.Errorf("/livez?verbose:\n%s", body)
	}
	if _, body := get("/healthz?verbose&exclude=etcd"); !strings.Contains(body, "[+]etcd excluded: ok") {
		t.Errorf("/healthz excluding etcd:\n%s", body)
	}
	if code, body := get("/readyz/etcd"); code != http.StatusOK || body != "ok" {
		t.Errorf("/readyz/etcd: %d %q", code, body)
	}
	if code, _ := get("/readyz/nosuchcheck"); code != http.StatusNotFound {
		t.Errorf("/readyz/nosuchcheck: %d, want 404", code)
	}
}

// TestInvalidTimeout: a `timeout` option that is not a duration is a 400
// with kube-apiserver's message; a valid one is accepted.
func TestInvalidTimeout(t *testing.T) {
	s := startServer(t)
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	err := client.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces").Param("timeout", "soon").Do(context.Background()).Error()
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "invalid timeout specified in the request URL") {
		t.Fatalf("timeout=soon: %v, want 400", err)
	}
	if _, err := client.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{TimeoutSeconds: nil}); err != nil {
		t.Fatal(err)
	}
	err = client.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces").Param("timeout", "10s").Do(context.Background()).Error()
	if err != nil {
		t.Fatalf("timeout=10s: %v", err)
	}
}

// TestPathsThatAreNotClean: a path outside the API that is not clean is
// not found, as in kube-apiserver, rather than redirected to its cleaned
// form; /index.html is the index of paths, as /.
func TestPathsThatAreNotClean(t *testing.T) {
	s := startServer(t)
	client, err := rest.HTTPClientFor(restConfig(t, s.Kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for path, want := range map[string]int{
		"//version": http.StatusNotFound, "/./version": http.StatusNotFound, "/healthz//ping": http.StatusNotFound,
		"//api/v1/namespaces": http.StatusNotFound, "//": http.StatusNotFound,
		"/version/": http.StatusOK, "/healthz/ping": http.StatusOK, "/index.html": http.StatusOK,
	} {
		resp, err := client.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d %s, want %d", path, resp.StatusCode, body, want)
		}
		if path == "/index.html" && !strings.Contains(string(body), `"/apis/apps/v1"`) {
			t.Errorf("/index.html is not the index of paths: %s", body)
		}
	}
}

// TestAPINamesTheServersAddress: /api names the server's own address for
// every client, the one it advertises (as kube-apiserver does: the
// kubernetes Service's endpoint, here the machine's address), not the
// Host the request named.
func TestAPINamesTheServersAddress(t *testing.T) {
	s := startServer(t)
	client, err := rest.HTTPClientFor(restConfig(t, s.Kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/api", nil)
	req.Host = "elsewhere.example:1"
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var versions metav1.APIVersions
	if err := json.NewDecoder(resp.Body).Decode(&versions); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.URL, "https://"))
	if len(versions.ServerAddressByClientCIDRs) != 1 {
		t.Fatalf("/api names %+v", versions.ServerAddressByClientCIDRs)
	}
	host, gotPort, err := net.SplitHostPort(versions.ServerAddressByClientCIDRs[0].ServerAddress)
	if err != nil || gotPort != port || net.ParseIP(host) == nil {
		t.Errorf("/api names %s, want an IP address and port %s", versions.ServerAddressByClientCIDRs[0].ServerAddress, port)
	}
}
