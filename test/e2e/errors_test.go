package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// statusCase is a raw request and the Status kube-apiserver answers it with.
type statusCase struct {
	name        string
	method      string
	path        string
	contentType string
	accept      string
	body        string
	code        int
	reason      metav1.StatusReason
	message     string // exact, unless prefix is set
	prefix      bool
}

func TestErrorStatuses(t *testing.T) {
	k := startKapi(t)
	cms := k.clientset().CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "exists"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const cmPath = "/api/v1/namespaces/default/configmaps"
	const deployPath = "/apis/apps/v1/namespaces/default/deployments"
	cases := []statusCase{
		{name: "not found", method: "GET", path: cmPath + "/missing",
			code: 404, reason: metav1.StatusReasonNotFound, message: `configmaps "missing" not found`},
		{name: "already exists", method: "POST", path: cmPath, body: `{"metadata":{"name":"exists"}}`,
			code: 409, reason: metav1.StatusReasonAlreadyExists, message: `configmaps "exists" already exists`},
		{name: "invalid name", method: "POST", path: cmPath, body: `{"metadata":{"name":"Bad_Name"}}`,
			code: 422, reason: metav1.StatusReasonInvalid,
			message: `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain`, prefix: true},
		{name: "missing name", method: "POST", path: cmPath, body: `{"data":{"a":"b"}}`,
			code: 422, reason: metav1.StatusReasonInvalid,
			message: `ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required`},
		{name: "namespace missing", method: "POST", path: "/api/v1/namespaces/nope/configmaps", body: `{"metadata":{"name":"a"}}`,
			code: 404, reason: metav1.StatusReasonNotFound, message: `namespaces "nope" not found`},
		{name: "malformed json", method: "POST", path: cmPath, body: `{"metadata":`,
			code: 400, reason: metav1.StatusReasonBadRequest,
			message: `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({"metadata":)`},
		{name: "type error names the field", method: "POST", path: cmPath, body: `{"metadata":{"name":"t"},"data":{"a":1}}`,
			code: 400, reason: metav1.StatusReasonBadRequest, message: `ConfigMap in version "v1" cannot be handled as a ConfigMap:`, prefix: true},
		{name: "namespace mismatch", method: "POST", path: cmPath, body: `{"metadata":{"name":"m","namespace":"kube-system"}}`,
			code: 400, reason: metav1.StatusReasonBadRequest, message: "the namespace of the provided object does not match the namespace sent on the request"},
		{name: "name mismatch on PUT", method: "PUT", path: cmPath + "/exists", body: `{"metadata":{"name":"other"}}`,
			code: 400, reason: metav1.StatusReasonBadRequest, message: "the name of the object (other) does not match the name on the URL (exists)"},
		{name: "PUT naming no object", method: "PUT", path: cmPath + "/exists", body: `{"metadata":{}}`,
			code: 400, reason: metav1.StatusReasonBadRequest, message: "the name of the object (exists based on URL) was undeterminable: name must be provided"},
		{name: "patch removing the name", method: "PATCH", path: cmPath + "/exists", contentType: "application/json-patch+json", body: `[{"op":"remove","path":"/metadata/name"}]`,
			code: 400, reason: metav1.StatusReasonBadRequest, message: "the name of the object (exists based on URL) was undeterminable: name must be provided"},
		{name: "PUT of missing object", method: "PUT", path: cmPath + "/missing", body: `{"metadata":{"name":"missing"}}`,
			code: 404, reason: metav1.StatusReasonNotFound, message: `configmaps "missing" not found`},
		{name: "POST to a named object", method: "POST", path: cmPath + "/exists", body: `{}`,
			code: 405, reason: metav1.StatusReasonMethodNotAllowed},
		{name: "deletecollection of namespaces", method: "DELETE", path: "/api/v1/namespaces",
			code: 405, reason: metav1.StatusReasonMethodNotAllowed},
		{name: "unknown resource", method: "GET", path: "/api/v1/widgets",
			code: 404, reason: metav1.StatusReasonNotFound, message: "the server could not find the requested resource"},
		{name: "version a built-in group lacks", method: "PATCH", path: "/apis/apps/v1beta1/namespaces/default/deployments/d", body: `{}`,
			code: 404, reason: metav1.StatusReasonNotFound, message: "the server could not find the requested resource"},
		{name: "version the core group lacks", method: "GET", path: "/api/v2/pods",
			code: 404, reason: metav1.StatusReasonNotFound, message: "the server could not find the requested resource"},
		{name: "not acceptable", method: "GET", path: cmPath, accept: "text/plain",
			code: 406, reason: metav1.StatusReasonNotAcceptable,
			message: "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor, " +
				"application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch, application/cbor-seq"},
		{name: "application/* is no wildcard", method: "GET", path: cmPath, accept: "application/*",
			code: 406, reason: metav1.StatusReasonNotAcceptable, message: "406: Not Acceptable", prefix: true},
		{name: "unsupported media type", method: "POST", path: cmPath, contentType: "text/plain", body: `x`,
			code: 415, reason: metav1.StatusReasonUnsupportedMediaType,
			message: "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor"},
		{name: "bad dryRun", method: "POST", path: cmPath + "?dryRun=bogus", body: `{"metadata":{"name":"d"}}`,
			code: 422, reason: metav1.StatusReasonInvalid,
			// kube-apiserver 1.32 wrote the value as []string{"bogus"}; the
			// field errors of the release kapi emulates write it as JSON.
			message: `CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["bogus"]: supported values: "All"`},
		{name: "bad dryRun in delete options", method: "DELETE", path: cmPath + "/exists",
			body: `{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["bogus"]}`, code: 422, reason: metav1.StatusReasonInvalid,
			message: `DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["bogus"]: supported values: "All"`},
		{name: "bad fieldValidation", method: "POST", path: cmPath + "?fieldValidation=Bogus", body: `{"metadata":{"name":"d"}}`,
			code: 422, reason: metav1.StatusReasonInvalid, message: `CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus"`, prefix: true},
		{name: "strict unknown field", method: "POST", path: cmPath + "?fieldValidation=Strict", body: `{"metadata":{"name":"s"},"bogus":1}`,
			code: 400, reason: metav1.StatusReasonBadRequest,
			message: `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"`},
		{name: "resourceVersion on create", method: "POST", path: cmPath, body: `{"metadata":{"name":"r","resourceVersion":"5"}}`,
			code: 500, reason: metav1.StatusReasonUnknown, message: "resourceVersion should not be set on objects to be created"},
		{name: "bad label selector", method: "GET", path: cmPath + "?labelSelector=a%20in%20(", code: 400, reason: metav1.StatusReasonBadRequest, prefix: true},
		{name: "unsupported field selector", method: "GET", path: cmPath + "?fieldSelector=data.k%3Dv",
			code: 400, reason: metav1.StatusReasonBadRequest,
			message: `"data.k" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		// kube-apiserver's scheme still knows versions no longer served: it
		// decodes such a body, then refuses its version or its kind.
		{name: "body of a version no longer served", method: "POST", path: deployPath,
			body: `{"apiVersion":"extensions/v1beta1","kind":"Deployment","metadata":{"name":"old"}}`, code: 400, reason: metav1.StatusReasonBadRequest,
			message: "the API version in the data (extensions/v1beta1) does not match the expected API version (apps/v1)"},
		{name: "body of another kind in a version no longer served", method: "POST", path: deployPath,
			body: `{"apiVersion":"apps/v1beta1","kind":"StatefulSet","metadata":{"name":"old"}}`, code: 400, reason: metav1.StatusReasonBadRequest,
			message: `StatefulSet in version "v1beta1" cannot be handled as a Deployment: converting (v1beta1.StatefulSet) to (apps.Deployment): unknown conversion`},
		{name: "body of a version never known", method: "POST", path: deployPath,
			body: `{"apiVersion":"apps/v9","kind":"Deployment","metadata":{"name":"old"}}`, code: 400, reason: metav1.StatusReasonBadRequest,
			message: `Deployment in version "v9" cannot be handled as a Deployment: no kind "Deployment" is registered for version "apps/v9" in scheme`, prefix: true},
		{name: "delete immortal namespace", method: "DELETE", path: "/api/v1/namespaces/kube-system",
			code: 403, reason: metav1.StatusReasonForbidden, message: `namespaces "kube-system" is forbidden: this namespace may not be deleted`},
	}
	client := k.rawClient()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status := doStatus(t, client, k.config.Host, tc)
			if int(status.Code) != tc.code || status.Reason != tc.reason || status.Status != metav1.StatusFailure {
				t.Fatalf("got %d %s %q, want %d %s", status.Code, status.Reason, status.Message, tc.code, tc.reason)
			}
			if tc.message != "" && status.Message != tc.message && !(tc.prefix && strings.HasPrefix(status.Message, tc.message)) {
				t.Fatalf("message %q, want %q", status.Message, tc.message)
			}
		})
	}
	if _, err := cms.Get(ctx, "d", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a refused create stored something: %v", err)
	}
}

// doStatus sends tc and decodes the Status it gets, checking that the HTTP
// code and the Status agree.
func doStatus(t *testing.T, client *http.Client, host string, tc statusCase) metav1.Status {
	t.Helper()
	req, err := http.NewRequest(tc.method, host+tc.path, strings.NewReader(tc.body))
	if err != nil {
		t.Fatal(err)
	}
	ct := tc.contentType
	if ct == "" && tc.body != "" {
		ct = "application/json"
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if tc.accept != "" {
		req.Header.Set("Accept", tc.accept)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var status metav1.Status
	if err := json.Unmarshal(data, &status); err != nil || status.Kind != "Status" {
		t.Fatalf("%d response is not a Status: %v\n%s", resp.StatusCode, err, data)
	}
	if int(status.Code) != resp.StatusCode {
		t.Fatalf("HTTP %d but Status code %d", resp.StatusCode, status.Code)
	}
	return status
}

func TestAuthentication(t *testing.T) {
	k := startKapi(t)
	anonymous := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	status := doStatus(t, anonymous, k.config.Host, statusCase{method: "GET", path: "/api/v1/namespaces"})
	if status.Code != 403 || status.Reason != metav1.StatusReasonForbidden ||
		status.Message != `namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope` {
		t.Fatalf("anonymous list: %+v", status)
	}
	// The handshake names the CAs kapi accepts, as kube-apiserver's does,
	// so Go's client would keep a certificate of another CA to itself:
	// this one presents it all the same, as curl does.
	foreignCert := selfSignedClientCert(t)
	foreign := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &foreignCert, nil
		},
	}}}
	status = doStatus(t, foreign, k.config.Host, statusCase{method: "GET", path: "/api/v1/namespaces"})
	if status.Code != 401 {
		t.Fatalf("client certificate from another CA: %+v", status)
	}
	for _, path := range []string{"/healthz", "/livez", "/readyz"} {
		resp, err := anonymous.Get(k.config.Host + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "ok" {
			t.Fatalf("%s: %d %q", path, resp.StatusCode, body)
		}
	}
	info, err := k.clientset().Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if info.Major != "1" || !strings.HasPrefix(info.GitVersion, "v1."+info.Minor+".") {
		t.Fatalf("version = %+v", info)
	}
	// kube-apiserver 1.37 reports the version it emulates and the oldest
	// it is compatible with.
	if minor, _ := strconv.Atoi(info.Minor); info.EmulationMajor != "1" || info.EmulationMinor != info.Minor ||
		info.MinCompatibilityMajor != "1" || info.MinCompatibilityMinor != strconv.Itoa(minor-1) {
		t.Errorf("version = %+v, want the emulation and compatibility versions", info)
	}
}

// selfSignedClientCert is a client certificate kapi's CA did not sign.
func selfSignedClientCert(t *testing.T) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kapi-admin", Organization: []string{"system:masters"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
