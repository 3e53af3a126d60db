package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// TestAPIServiceLocal: every group-version kapi serves has an APIService
// without a Service, reported available, as kube-apiserver registers them.
func TestAPIServiceLocal(t *testing.T) {
	k := startKapi(t)
	out := k.mustKubectl("get", "apiservices")
	for _, want := range []string{"v1.", "v1.apps", "v2.autoscaling", "v1.apiextensions.k8s.io"} {
		if !hasRow(out, want+" ", "Local", "True") {
			t.Errorf("kubectl get apiservices has no available local %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "apiregistration.k8s.io") {
		t.Errorf("the aggregator's own group has an APIService, as kube-apiserver's has not:\n%s", out)
	}
	spec := k.mustKubectl("get", "apiservice", "v1.apps", "-o", "jsonpath={.spec.groupPriorityMinimum}/{.spec.versionPriority}")
	if spec != "17800/15" {
		t.Errorf("v1.apps priorities = %s, want kube-apiserver's 17800/15", spec)
	}
}

// hasRow reports whether a line of out starts with prefix and holds every
// field.
func hasRow(out, prefix string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, prefix) && !slices.ContainsFunc(fields, func(f string) bool { return !slices.Contains(strings.Fields(line), f) }) {
			return true
		}
	}
	return false
}

// TestAPIServiceProxy registers an aggregated API server run by the test
// and uses it through kapi: discovery lists its group, requests reach it
// with the requester's identity in headers that only the front proxy's
// certificate (from the extension-apiserver-authentication ConfigMap) may
// set, and it stops being served once its Service goes.
func TestAPIServiceProxy(t *testing.T) {
	k := startKapi(t)
	trust := map[string]string{}
	if err := json.Unmarshal([]byte(k.mustKubectl("-n", "kube-system", "get", "configmap",
		"extension-apiserver-authentication", "-o", "jsonpath={.data}")), &trust); err != nil {
		t.Fatal(err)
	}
	proxyCAs := x509.NewCertPool()
	if !proxyCAs.AppendCertsFromPEM([]byte(trust["requestheader-client-ca-file"])) {
		t.Fatalf("no requestheader-client-ca-file in extension-apiserver-authentication: %v", trust)
	}
	var allowedNames []string
	json.Unmarshal([]byte(trust["requestheader-allowed-names"]), &allowedNames)

	caPEM, serving := servingCertificate(t, "wardle.default.svc")
	port := startWardle(t, serving, proxyCAs, allowedNames)

	k.mustKubectl("create", "service", "externalname", "wardle", "--external-name", "localhost", fmt.Sprintf("--tcp=%d", port))
	apply(t, k, fmt.Sprintf(`apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1alpha1.wardle.example.com
spec:
  group: wardle.example.com
  version: v1alpha1
  groupPriorityMinimum: 2000
  versionPriority: 10
  service: {namespace: default, name: wardle, port: %d}
  caBundle: %s
`, port, base64.StdEncoding.EncodeToString(caPEM)))
	waitFor(t, 30*time.Second, "the APIService to be available", func() bool {
		out, _ := k.kubectl("get", "apiservice", "v1alpha1.wardle.example.com", "-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`)
		return out == "True"
	})

	if out := k.mustKubectl("get", "flunders", "-o", "name"); strings.TrimSpace(out) != "flunder.wardle.example.com/seen-by-kapi-admin" {
		t.Errorf("kubectl get flunders = %q, want the flunder the aggregated server names after the admin", out)
	}
	// The requester's uid and extra go to the server as well; a redirect
	// from it is not passed on (kube-aggregator's 502).
	k.mustKubectl("create", "clusterrole", "flunder-reader", "--verb=list", "--resource=flunders.wardle.example.com")
	k.mustKubectl("create", "clusterrolebinding", "vera-reads-flunders", "--clusterrole=flunder-reader", "--user=vera")
	impersonated, _ := http.NewRequest(http.MethodGet, k.config.Host+"/apis/wardle.example.com/v1alpha1/namespaces/default/flunders", nil)
	impersonated.Header.Set("Impersonate-User", "vera")
	impersonated.Header.Set("Impersonate-Uid", "vera-uid")
	impersonated.Header.Set("Impersonate-Extra-Scopes", "a")
	var seen struct {
		Items []metav1.PartialObjectMetadata `json:"items"`
	}
	waitFor(t, 10*time.Second, "vera's list of flunders", func() bool {
		resp, err := k.rawClient().Do(impersonated)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&seen) == nil
	})
	if len(seen.Items) != 1 || seen.Items[0].Annotations["uid"] != "vera-uid" || seen.Items[0].Annotations["extra-scopes"] != "a" {
		t.Errorf("what the aggregated server was told of an impersonated user: %+v", seen.Items)
	}
	if resp, body := rawDo(t, k, http.MethodGet, "/apis/wardle.example.com/v1alpha1/namespaces/default/redirect", "", "", nil); resp.StatusCode != http.StatusBadGateway {
		t.Errorf("a redirect from the aggregated server: %d %s", resp.StatusCode, body)
	}
	// An APIService cannot send the aggregator's own group elsewhere.
	apply(t, k, fmt.Sprintf(`apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.apiregistration.k8s.io}
spec:
  group: apiregistration.k8s.io
  version: v1
  groupPriorityMinimum: 18000
  versionPriority: 15
  service: {namespace: default, name: wardle, port: %d}
  caBundle: %s
`, port, base64.StdEncoding.EncodeToString(caPEM)))
	time.Sleep(time.Second) // for the aggregator to see it, were it to proxy
	k.mustKubectl("get", "apiservices")
	if out := k.mustKubectl("api-resources", "--api-group=wardle.example.com", "--no-headers"); !strings.HasPrefix(out, "flunders") {
		t.Errorf("kubectl api-resources (aggregated discovery) does not list flunders:\n%s", out)
	}
	var groups metav1.APIGroupList
	if err := json.Unmarshal([]byte(k.mustKubectl("get", "--raw", "/apis")), &groups); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(groups.Groups, func(g metav1.APIGroup) bool {
		return g.Name == "wardle.example.com" && g.PreferredVersion.Version == "v1alpha1"
	}) {
		t.Errorf("/apis does not list wardle.example.com: %+v", groups.Groups)
	}
	if groups.Groups[0].Name != "apiregistration.k8s.io" {
		t.Errorf("/apis lists %s first, want apiregistration.k8s.io", groups.Groups[0].Name)
	}
	// OpenAPI v3: the index names the aggregated group-version's document,
	// which comes from its server.
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal([]byte(k.mustKubectl("get", "--raw", "/openapi/v3")), &index); err != nil {
		t.Fatal(err)
	}
	entry, ok := index.Paths["apis/wardle.example.com/v1alpha1"]
	if !ok || index.Paths["api/v1"].ServerRelativeURL == "" {
		t.Fatalf("/openapi/v3 lacks the aggregated or the local group-versions: %v", index.Paths)
	}
	if doc := k.mustKubectl("get", "--raw", entry.ServerRelativeURL); !strings.Contains(doc, "A flunder.") {
		t.Errorf("the aggregated OpenAPI v3 document is not the server's: %s", doc)
	}
	// OpenAPI v2: kapi's document with the server's paths and definitions
	// merged in, in JSON and in protobuf.
	var swagger struct {
		Paths       map[string]json.RawMessage `json:"paths"`
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	if err := json.Unmarshal([]byte(k.mustKubectl("get", "--raw", "/openapi/v2")), &swagger); err != nil {
		t.Fatal(err)
	}
	if _, ok := swagger.Definitions["com.example.wardle.v1alpha1.Flunder"]; !ok || swagger.Definitions["io.k8s.api.core.v1.Pod"] == nil {
		t.Errorf("/openapi/v2 lacks the aggregated or the built-in definitions")
	}
	if _, ok := swagger.Paths["/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders"]; !ok {
		t.Errorf("/openapi/v2 lacks the aggregated paths")
	}
	req, _ := http.NewRequest(http.MethodGet, k.config.Host+"/openapi/v2", nil)
	req.Header.Set("Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	pb, err := k.rawClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	pb.Body.Close()
	if pb.StatusCode != http.StatusOK || !strings.Contains(pb.Header.Get("Content-Type"), "protobuf") {
		t.Errorf("/openapi/v2 in protobuf: %s %s", pb.Status, pb.Header.Get("Content-Type"))
	}

	k.mustKubectl("delete", "service", "wardle")
	waitFor(t, 30*time.Second, "the APIService to be unavailable", func() bool {
		out, _ := k.kubectl("get", "apiservice", "v1alpha1.wardle.example.com", "-o", `jsonpath={.status.conditions[?(@.type=="Available")].reason}`)
		return out == "ServiceNotFound"
	})
	resp, err := k.rawClient().Get(k.config.Host + "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a request to an unavailable APIService got %s, want 503", resp.Status)
	}
}

// startWardle serves a tiny aggregated API (wardle.example.com/v1alpha1
// flunders) on loopback; it believes X-Remote-User only from a client
// certificate the front-proxy CAs verify with an allowed name, as
// k8s.io/apiserver's request header authenticator does.
func startWardle(t *testing.T, serving tls.Certificate, proxyCAs *x509.CertPool, allowedNames []string) int {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/apis/wardle.example.com/v1alpha1", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: "wardle.example.com/v1alpha1",
			APIResources: []metav1.APIResource{{Name: "flunders", SingularName: "flunder", Namespaced: true, Kind: "Flunder", Verbs: []string{"get", "list"}}},
		})
	})
	mux.HandleFunc("/openapi/v2", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]interface{}{"swagger": "2.0", "info": map[string]string{"title": "wardle", "version": "v1alpha1"},
			"paths": map[string]interface{}{"/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders": map[string]interface{}{
				"get": map[string]interface{}{"operationId": "listFlunders", "responses": map[string]interface{}{"200": map[string]string{"description": "OK"}}},
			}},
			"definitions": map[string]interface{}{"com.example.wardle.v1alpha1.Flunder": map[string]interface{}{"type": "object", "description": "A flunder in v2."}},
		})
	})
	mux.HandleFunc("/openapi/v3", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]interface{}{"paths": map[string]interface{}{
			"apis/wardle.example.com/v1alpha1": map[string]string{"serverRelativeURL": "/openapi/v3/apis/wardle.example.com/v1alpha1?hash=F00D"},
		}})
	})
	mux.HandleFunc("/openapi/v3/apis/wardle.example.com/v1alpha1", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]interface{}{"openapi": "3.0.0", "info": map[string]string{"title": "wardle", "version": "v1alpha1"},
			"paths": map[string]interface{}{}, "components": map[string]interface{}{"schemas": map[string]interface{}{
				"com.example.wardle.v1alpha1.Flunder": map[string]interface{}{"type": "object", "description": "A flunder."},
			}}})
	})
	mux.HandleFunc("/apis/wardle.example.com/v1alpha1/namespaces/default/flunders", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]interface{}{
			"kind": "FlunderList", "apiVersion": "wardle.example.com/v1alpha1", "metadata": map[string]string{},
			"items": []interface{}{map[string]interface{}{
				"kind": "Flunder", "apiVersion": "wardle.example.com/v1alpha1",
				"metadata": map[string]interface{}{"name": "seen-by-" + r.Header.Get("X-Remote-User"), "namespace": "default",
					"annotations": map[string]string{"uid": r.Header.Get("X-Remote-Uid"), "extra-scopes": r.Header.Get("X-Remote-Extra-Scopes")}},
			}},
		})
	})
	mux.HandleFunc("/apis/wardle.example.com/v1alpha1/namespaces/default/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if len(r.TLS.PeerCertificates) == 0 || !slices.Contains(allowedNames, r.TLS.PeerCertificates[0].Subject.CommonName) ||
				r.Header.Get("X-Remote-User") == "" || r.Header.Get("Authorization") != "" {
				http.Error(w, "not the front proxy", http.StatusUnauthorized)
				return
			}
			mux.ServeHTTP(w, r)
		}),
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{serving},
			ClientAuth:   tls.VerifyClientCertIfGiven,
			ClientCAs:    proxyCAs,
		},
	}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

func writeJSON(w http.ResponseWriter, v interface{}) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// servingCertificate makes a CA and a serving certificate for dnsName (or
// an IP address),
// returning the CA's PEM.
func servingCertificate(t *testing.T, dnsName string) ([]byte, tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "wardle-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(dnsName); ip != nil {
		tmpl.DNSNames, tmpl.IPAddresses = nil, []net.IP{ip}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestUnavailableAPIServiceIsStale: an APIService whose Service does not
// exist is listed in aggregated discovery as a stale version, as
// kube-aggregator lists it, so that client-go reports its group-version as
// failed rather than not knowing of it.
func TestUnavailableAPIServiceIsStale(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	apply(t, k, `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.missing.example.org}
spec:
  group: missing.example.org
  version: v1
  service: {namespace: default, name: nowhere, port: 443}
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 1000
  versionPriority: 15
`)
	waitFor(t, 20*time.Second, "the APIService to be unavailable", func() bool {
		out, _ := k.kubectl("get", "apiservice", "v1.missing.example.org", "-o", "jsonpath={.status.conditions[0].status}")
		return out == "False"
	})
	resp, body := rawDo(t, k, http.MethodGet, "/apis", "", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `{"metadata":{"name":"missing.example.org"},"versions":[{"version":"v1","freshness":"Stale"}]}`) {
		t.Errorf("aggregated discovery of an unavailable APIService: %d %s", resp.StatusCode, body)
	}
	_, _, err := k.clientset().Discovery().ServerGroupsAndResources()
	var failed *discovery.ErrGroupDiscoveryFailed
	if !errors.As(err, &failed) || failed.Groups[schema.GroupVersion{Group: "missing.example.org", Version: "v1"}] == nil {
		t.Errorf("client-go's discovery: %v", err)
	}
}
