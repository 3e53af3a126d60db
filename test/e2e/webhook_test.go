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
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// admissionServer is a webhook server the tests run: it answers
// AdmissionReviews at /mutate (adds a label with a JSON patch and a
// warning), /deny (refuses objects with a "forbidden" key), /move (moves
// the object to namespace elsewhere), /seven (sets spec.replicas to 7),
// /extra (adds an empty spec.extra), /badfields (leaves managed fields
// invalid), /v2 (makes the object's apiVersion v2), /chatty (warns 20 times, 303
// characters each), /slow (answers after three seconds) and records the requests it gets.
type admissionServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []admissionv1.AdmissionRequest
}

func startAdmissionServer(t *testing.T) *admissionServer {
	s := &admissionServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/mutate", s.review(func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		patch := `[{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}]`
		pt := admissionv1.PatchTypeJSONPatch
		return &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: &pt, Warnings: []string{"labelled by the test webhook"}}
	}))
	mux.HandleFunc("/deny", s.review(func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		var cm corev1.ConfigMap
		json.Unmarshal(req.Object.Raw, &cm)
		if _, ok := cm.Data["forbidden"]; ok {
			return &admissionv1.AdmissionResponse{Result: &metav1.Status{Code: 403, Message: "the key forbidden is not allowed"}}
		}
		return &admissionv1.AdmissionResponse{Allowed: true}
	}))
	mux.HandleFunc("/annotate", s.review(func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		var cm corev1.ConfigMap
		json.Unmarshal(req.Object.Raw, &cm)
		if cm.Annotations["annotated"] == "yes" {
			return &admissionv1.AdmissionResponse{Allowed: true}
		}
		patch := `[{"op":"add","path":"/metadata/annotations","value":{"annotated":"yes"}}]`
		pt := admissionv1.PatchTypeJSONPatch
		return &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: &pt}
	}))
	mux.HandleFunc("/rename", s.review(patching(`[{"op":"replace","path":"/metadata/name","value":"renamed"}]`)))
	mux.HandleFunc("/move", s.review(patching(`[{"op":"replace","path":"/metadata/namespace","value":"elsewhere"}]`)))
	mux.HandleFunc("/seven", s.review(patching(`[{"op":"replace","path":"/spec/replicas","value":7}]`)))
	mux.HandleFunc("/extra", s.review(patching(`[{"op":"add","path":"/spec/extra","value":{}}]`)))
	mux.HandleFunc("/badfields", s.review(patching(`[{"op":"add","path":"/metadata/managedFields","value":[{"manager":"m","operation":"Update","fieldsType":"Bogus"}]}]`)))
	mux.HandleFunc("/v2", s.review(patching(`[{"op":"replace","path":"/apiVersion","value":"v2"}]`)))
	mux.HandleFunc("/chatty", s.review(func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		var warnings []string
		for i := range 20 {
			warnings = append(warnings, fmt.Sprintf("%02d %s", i, strings.Repeat("w", 300)))
		}
		return &admissionv1.AdmissionResponse{Allowed: true, Warnings: warnings}
	}))
	mux.HandleFunc("/slow", s.review(func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		time.Sleep(3 * time.Second)
		return &admissionv1.AdmissionResponse{Allowed: true}
	}))
	// kube-apiserver verifies a Service's webhook as SERVICE.NAMESPACE.svc,
	// whatever address it reaches it at.
	s.Server = httptest.NewUnstartedServer(mux)
	s.TLS = &tls.Config{Certificates: []tls.Certificate{selfSignedCert(t, "hooks.default.svc")}}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// selfSignedCert is a serving certificate for 127.0.0.1 and dnsName.
func selfSignedCert(t *testing.T, dnsName string) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: dnsName},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{dnsName}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// patching answers every review with the JSON patch.
func patching(patch string) func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		pt := admissionv1.PatchTypeJSONPatch
		return &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: &pt}
	}
}

func (s *admissionServer) review(decide func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.requests = append(s.requests, *review.Request)
		s.mu.Unlock()
		response := decide(review.Request)
		response.UID = review.Request.UID
		review.Response, review.Request = response, nil
		json.NewEncoder(w).Encode(review)
	}
}

// caBundle is the PEM of the certificate the server presents.
func (s *admissionServer) caBundle() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.TLS.Certificates[0].Leaf.Raw}))
}

func (s *admissionServer) seen() []admissionv1.AdmissionRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]admissionv1.AdmissionRequest(nil), s.requests...)
}

// base64PEM is a PEM block as a caBundle field holds it.
func base64PEM(pem string) string { return base64.StdEncoding.EncodeToString([]byte(pem)) }

// TestAdmissionWebhooks: mutating and validating webhook configurations
// are called with AdmissionReviews over HTTPS, by URL and through an
// ExternalName Service, and their patches, refusals, warnings, failure
// policies, timeouts, selectors and match conditions act as in
// kube-apiserver.
func TestAdmissionWebhooks(t *testing.T) {
	hooks := startAdmissionServer(t)
	k := startKapi(t, onlyLifecycleControllers)
	port := hooks.Listener.Addr().String()[strings.LastIndex(hooks.Listener.Addr().String(), ":")+1:]
	k.mustKubectl("create", "namespace", "hooked")
	k.mustKubectl("label", "namespace", "hooked", "webhooks=on")
	apply(t, k, fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: hooks, namespace: default}
spec: {type: ExternalName, externalName: 127.0.0.1}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: labeller}
webhooks:
- name: labeller.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig:
    service: {namespace: default, name: hooks, path: /mutate, port: %s}
    caBundle: %s
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  namespaceSelector: {matchLabels: {webhooks: "on"}}
  matchConditions:
  - {name: not-skipped, expression: "!object.metadata.name.startsWith('skip')"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: denier}
webhooks:
- name: deny.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig:
    url: %s/deny
    caBundle: %s
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  namespaceSelector: {matchLabels: {webhooks: "on"}}
`, port, base64PEM(hooks.caBundle()), hooks.URL, base64PEM(hooks.caBundle())))

	cms := k.clientset().CoreV1().ConfigMaps("hooked")
	// Named probes: as in kube-apiserver, mutating webhooks see a
	// generated name's object without its name (the matchCondition on
	// the name would fail on it).
	probes := 0
	waitFor(t, 10*time.Second, "the webhooks to take effect", func() bool {
		probes++
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("probe-%d", probes)}}, metav1.CreateOptions{})
		return err == nil && cm.Labels["mutated"] == "yes"
	})
	// The name a create generates comes after mutating admission, as in
	// kube-apiserver: the labeller's condition on the name cannot be
	// evaluated, and its failure policy refuses the create.
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "no such key: name") {
		t.Errorf("a generated name's create: %v, want the labeller's condition on the name to fail", err)
	}
	out := k.mustKubectl("create", "configmap", "warned", "-n", "hooked")
	if !strings.Contains(out, "Warning: labelled by the test webhook") {
		t.Errorf("kubectl create did not show the webhook's warning:\n%s", out)
	}
	if cm, _ := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "skipped"}}, metav1.CreateOptions{}); cm.Labels["mutated"] != "" {
		t.Errorf("the match condition did not exclude skipped: %v", cm.Labels)
	}
	if cm, err := k.clientset().CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}}, metav1.CreateOptions{}); err != nil || cm.Labels["mutated"] != "" {
		t.Errorf("the namespace selector did not exclude default: %v %v", cm, err)
	}

	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Data: map[string]string{"forbidden": "x"}}, metav1.CreateOptions{})
	want := `admission webhook "deny.example.com" denied the request: the key forbidden is not allowed`
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("a denied create: %v, want %q", err, want)
	}

	dry := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}
	if _, err := cms.Create(ctx, dry, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	sawDryRun := false
	for _, req := range hooks.seen() {
		if req.Name == "dry" && req.DryRun != nil && *req.DryRun {
			sawDryRun = true
		}
	}
	if !sawDryRun {
		t.Error("the webhooks were not told of the dry run")
	}
	if _, err := cms.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the dry-run object was stored: %v", err)
	}
}

// TestAdmissionWebhookReinvocation: a mutating webhook with
// reinvocationPolicy IfNeeded is called again when a webhook after it
// changed the object.
func TestAdmissionWebhookReinvocation(t *testing.T) {
	hooks := startAdmissionServer(t)
	k := startKapi(t, onlyLifecycleControllers)
	k.mustKubectl("create", "namespace", "re")
	k.mustKubectl("label", "namespace", "re", "reinvoke=test")
	config := func(name, path, policy string) string {
		return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: %s}
webhooks:
- name: %s.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  reinvocationPolicy: %s
  clientConfig: {url: %s%s, caBundle: %s}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  namespaceSelector: {matchLabels: {reinvoke: "test"}}
`, name, name, policy, hooks.URL, path, base64PEM(hooks.caBundle()))
	}
	// Webhooks are called in the order of their configurations' names.
	apply(t, k, config("a-annotator", "/annotate", "IfNeeded"))
	apply(t, k, config("b-labeller", "/mutate", "Never"))
	cms := k.clientset().CoreV1().ConfigMaps("re")
	var created *corev1.ConfigMap
	attempts := 0
	waitFor(t, 10*time.Second, "both webhooks to act", func() bool {
		attempts++ // named: webhooks see no generated name
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("re-%d", attempts)}}, metav1.CreateOptions{})
		created = cm
		return err == nil && cm.Annotations["annotated"] == "yes" && cm.Labels["mutated"] == "yes"
	})
	calls := map[string]int{}
	for _, req := range hooks.seen() {
		if req.Name == created.Name {
			var cm corev1.ConfigMap
			json.Unmarshal(req.Object.Raw, &cm)
			if cm.Labels["mutated"] == "yes" {
				calls["after the labeller"]++
			} else {
				calls["before the labeller"]++
			}
		}
	}
	// The annotator and the labeller see the object without the label;
	// the annotator is called again with it.
	if calls["before the labeller"] != 2 || calls["after the labeller"] != 1 {
		t.Errorf("webhook calls for %s: %v", created.Name, calls)
	}
}

// TestAdmissionMutationsCheckedAfter: what mutating admission makes is
// checked as kube's storage checks it: a created object cannot be moved to
// another namespace, and a Scale's replicas are validated as admission
// left them (a webhook may correct -1).
func TestAdmissionMutationsCheckedAfter(t *testing.T) {
	hooks := startAdmissionServer(t)
	k := startKapi(t, onlyLifecycleControllers)
	k.mustKubectl("create", "deployment", "web", "--image=nginx")
	deployments := k.clientset().AppsV1().Deployments("default")
	_, err := deployments.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":-1}}`), metav1.PatchOptions{}, "scale")
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`) {
		t.Errorf("a scale to -1: %v", err)
	}
	// Each webhook of the server's paths is called for the configmaps
	// labelled with its name; extra for gizmos, seven for Scales.
	config := "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: checked-after}\nwebhooks:\n"
	for _, hook := range []struct{ name, rule, selector string }{
		{"move", `{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}`, "{matchLabels: {move: 'yes'}}"},
		{"chatty", `{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}`, "{matchLabels: {chatty: 'yes'}}"},
		{"badfields", `{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}`, "{matchLabels: {badfields: 'yes'}}"},
		{"v2", `{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}`, "{matchLabels: {v2: 'yes'}}"},
		{"extra", "{apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [gizmos]}", "{}"},
		{"seven", "{apiGroups: [apps], apiVersions: [v1], operations: [UPDATE], resources: [deployments/scale]}", "{}"},
	} {
		config += fmt.Sprintf("- {name: %s.example.com, admissionReviewVersions: [v1], sideEffects: None, clientConfig: {url: '%s/%s', caBundle: %s}, rules: [%s], objectSelector: %s}\n",
			hook.name, hooks.URL, hook.name, base64PEM(hooks.caBundle()), hook.rule, hook.selector)
	}
	apply(t, k, config)
	k.mustKubectl("create", "namespace", "elsewhere")
	cms := k.clientset().CoreV1().ConfigMaps("default")
	waitFor(t, 10*time.Second, "the webhook to move configmaps", func() bool {
		_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "moved-", Labels: map[string]string{"move": "yes"}}}, metav1.CreateOptions{})
		return err != nil
	})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "the namespace of the provided object does not match the namespace sent on the request") {
		t.Errorf("a create a webhook moved to another namespace: %v", err)
	}
	if list, err := k.clientset().CoreV1().ConfigMaps("elsewhere").List(ctx, metav1.ListOptions{LabelSelector: "move=yes"}); err != nil || len(list.Items) > 0 {
		t.Errorf("configmaps moved to elsewhere: %v (%v)", list, err)
	}
	checkWarningsTruncated(t, k)
	checkDefaultsAfterMutation(t, k)
	v2 := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"v2","labels":{"v2":"yes"}}}`)
	if resp, data := rawDo(t, k, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", "", v2); resp.StatusCode != http.StatusInternalServerError ||
		!strings.Contains(string(data), `"message":"Internal error occurred: no kind \"ConfigMap\" is registered for version \"v2\"`) {
		t.Errorf("a create a webhook gave apiVersion v2: %d %s, want kube's internal error", resp.StatusCode, data)
	}
	body := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"badfields","labels":{"badfields":"yes"}}}`)
	resp, data := rawDo(t, k, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", "", body)
	if resp.StatusCode != http.StatusCreated || !strings.Contains(resp.Header.Get("Warning"), ".metadata.managedFields was in an invalid state after admission") ||
		strings.Contains(string(data), "Bogus") {
		t.Errorf("a create a webhook left invalid managed fields: %d %q %s, want them as before admission, with kube's warning", resp.StatusCode, resp.Header.Get("Warning"), data)
	}
	scale, err := deployments.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":-1}}`), metav1.PatchOptions{}, "scale")
	if err != nil || scale == nil {
		t.Fatalf("a scale to -1 a webhook sets to 7: %v", err)
	}
	if d, err := deployments.Get(ctx, "web", metav1.GetOptions{}); err != nil || *d.Spec.Replicas != 7 {
		t.Errorf("the deployment's replicas after the webhook: %v (%v), want 7", d.Spec.Replicas, err)
	}
}

// checkDefaultsAfterMutation: what a webhook adds to a custom resource
// gets the schema's defaults, as kube's defaulter sets them after
// mutating admission.
func checkDefaultsAfterMutation(t *testing.T, k *kapi) {
	t.Helper()
	createCRD(t, k, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.com}
spec:
  group: example.com
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {extra: {type: object, properties: {mode: {type: string, default: auto}}}}}
`, "gizmos.example.com")
	gizmo := `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"g"},"spec":{}}`
	resp, data := rawDo(t, k, http.MethodPost, "/apis/example.com/v1/namespaces/default/gizmos", "application/json", "", []byte(gizmo))
	if resp.StatusCode != http.StatusCreated || !strings.Contains(string(data), `"spec":{"extra":{"mode":"auto"}}`) {
		t.Errorf("a gizmo a webhook gave spec.extra: %d %s, want the schema's default in it", resp.StatusCode, data)
	}
}

// checkWarningsTruncated: past 4,096 characters of warnings, each is cut
// to 256 and those past 4,096 again are dropped, as kube-apiserver's
// recorder does.
func checkWarningsTruncated(t *testing.T, k *kapi) {
	t.Helper()
	body := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"chatty","labels":{"chatty":"yes"}}}`)
	resp, data := rawDo(t, k, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", "", body)
	warnings := resp.Header.Values("Warning")
	if resp.StatusCode != http.StatusCreated || len(warnings) != 16 {
		t.Fatalf("a create a webhook warns of 20 times: %d, %d warnings, want 16: %s", resp.StatusCode, len(warnings), data)
	}
	for _, w := range warnings {
		if want := `299 - "` + w[7:9] + " " + strings.Repeat("w", 253) + `"`; w != want {
			t.Errorf("warning %.20s... of %d characters, want it cut to 256", w, len(w))
		}
	}
}

// TestAdmissionWebhookFailures: an unreachable or slow webhook fails the
// write under failurePolicy Fail, with kube-apiserver's message, and is
// skipped under Ignore.
func TestAdmissionWebhookFailures(t *testing.T) {
	hooks := startAdmissionServer(t)
	k := startKapi(t, onlyLifecycleControllers)
	config := func(name, url, policy string, timeout int) string {
		return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: %s}
webhooks:
- name: %s.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: %s
  timeoutSeconds: %d
  clientConfig:
    url: %s
    caBundle: %s
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [secrets]}
  objectSelector: {matchLabels: {hook: %s}}
`, name, name, policy, timeout, url, base64PEM(hooks.caBundle()), name)
	}
	apply(t, k, config("unreachable", "https://127.0.0.1:1/nothing", "Fail", 5))
	apply(t, k, config("ignored", "https://127.0.0.1:1/nothing", "Ignore", 5))
	apply(t, k, config("slow", hooks.URL+"/slow", "Fail", 1))
	secrets := k.clientset().CoreV1().Secrets("default")
	create := func(name, hook string) error {
		_, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"hook": hook}}}, metav1.CreateOptions{})
		return err
	}
	var err error
	waitFor(t, 10*time.Second, "the unreachable webhook to be called", func() bool {
		err = create("a", "unreachable")
		return err != nil
	})
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), `failed calling webhook "unreachable.example.com": failed to call webhook: Post "https://127.0.0.1:1/nothing?timeout=5s"`) {
		t.Errorf("an unreachable webhook with failurePolicy Fail: %v", err)
	}
	if err := create("b", "ignored"); err != nil {
		t.Errorf("an unreachable webhook with failurePolicy Ignore: %v", err)
	}
	err = create("c", "slow")
	if err == nil || !strings.Contains(err.Error(), `failed calling webhook "slow.example.com"`) || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Errorf("a webhook slower than its timeout: %v", err)
	}

	// A failing webhook for every resource stops every create but the
	// reviews', which kube-apiserver never sends to a webhook.
	apply(t, k, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: everything}
webhooks:
- name: everything.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  clientConfig: {url: "https://127.0.0.1:1/nothing"}
  rules:
  - {apiGroups: ["*"], apiVersions: ["*"], operations: [CREATE], resources: ["*"]}
`)
	waitFor(t, 10*time.Second, "the webhook for everything to be called", func() bool {
		_, err := k.clientset().CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "c-"}}, metav1.CreateOptions{})
		return apierrors.IsInternalError(err)
	})
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods"}}}
	if got, err := k.clientset().AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{}); err != nil || !got.Status.Allowed {
		t.Errorf("a SelfSubjectAccessReview under a failing webhook for everything: %v %+v", err, got)
	}
	if out, err := k.kubectl("auth", "can-i", "create", "pods"); err != nil || strings.TrimSpace(out) != "yes" {
		t.Errorf("kubectl auth can-i under a failing webhook for everything: %v %s", err, out)
	}
}

// TestAdmissionWebhookMatchPolicy: a webhook for autoscaling/v2
// HorizontalPodAutoscalers with matchPolicy Equivalent is sent a write made
// through autoscaling/v1, converted to v2 (its requestKind says v1); with
// Exact it is not called for it.
func TestAdmissionWebhookMatchPolicy(t *testing.T) {
	hooks := startAdmissionServer(t)
	k := startKapi(t, onlyLifecycleControllers)
	config := func(name, policy string) string {
		return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: %s}
webhooks:
- name: %s.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  matchPolicy: %s
  clientConfig: {url: %s/deny, caBundle: %s}
  rules:
  - {apiGroups: [autoscaling], apiVersions: [v2], operations: [CREATE], resources: [horizontalpodautoscalers]}
`, name, name, policy, hooks.URL, base64PEM(hooks.caBundle()))
	}
	apply(t, k, config("equivalent", "Equivalent"))
	apply(t, k, config("exact", "Exact"))
	hpas := k.clientset().AutoscalingV1().HorizontalPodAutoscalers("default")
	target := int32(50)
	var name string
	waitFor(t, 10*time.Second, "the webhook to be called", func() bool {
		name = fmt.Sprintf("h%d", time.Now().UnixNano())
		_, err := hpas.Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d"},
				MaxReplicas:    3, TargetCPUUtilizationPercentage: &target,
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, req := range hooks.seen() {
			if req.Name == name {
				return true
			}
		}
		return false
	})
	var calls []admissionv1.AdmissionRequest
	for _, req := range hooks.seen() {
		if req.Name == name {
			calls = append(calls, req)
		}
	}
	if len(calls) != 1 || calls[0].Kind.Version != "v2" || calls[0].RequestKind == nil || calls[0].RequestKind.Version != "v1" {
		t.Fatalf("webhook calls for %s: %+v", name, calls)
	}
	var hpa map[string]any
	json.Unmarshal(calls[0].Object.Raw, &hpa)
	if hpa["apiVersion"] != "autoscaling/v2" {
		t.Errorf("the webhook was sent %v", hpa["apiVersion"])
	}
}

// TestAdmissionWebhookEquivalentKinds: with matchPolicy Equivalent, a
// webhook for core v1 Events sees events.k8s.io Events (stored as core
// ones) converted to core v1, and a webhook for one version of a custom
// resource sees writes through another, converted by its CRD, as
// kube-apiserver sends them.
func TestAdmissionWebhookEquivalentKinds(t *testing.T) {
	hooks := startAdmissionServer(t)
	k := startKapi(t, onlyLifecycleControllers)
	apply(t, k, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  - {name: v2, served: true, storage: false, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`)
	apply(t, k, fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: equivalent}
webhooks:
- name: equivalent.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  matchPolicy: Equivalent
  clientConfig: {url: %s/deny, caBundle: %s}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [events]}
  - {apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [widgets]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: equivalent}
webhooks:
- name: equivalent.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  matchPolicy: Equivalent
  clientConfig: {url: %s/deny, caBundle: %s}
  rules:
  - {apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [widgets]}
`, hooks.URL, base64PEM(hooks.caBundle()), hooks.URL, base64PEM(hooks.caBundle())))
	waitFor(t, 20*time.Second, "the CRD to be served", func() bool {
		_, err := k.kubectl("get", "widgets.v2.example.com")
		return err == nil
	})
	var event, widget, mutatedWidget *admissionv1.AdmissionRequest
	waitFor(t, 20*time.Second, "the webhook to see both writes", func() bool {
		event, widget, mutatedWidget = nil, nil, nil
		name := fmt.Sprintf("w%d", time.Now().UnixNano())
		apply(t, k, fmt.Sprintf(`apiVersion: example.com/v2
kind: Widget
metadata: {name: %s}
---
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: %s}
eventTime: "2026-01-01T00:00:00.000000Z"
reportingController: example.com/test
reportingInstance: test
action: Tested
reason: Testing
type: Normal
regarding: {kind: Widget, name: %s}
`, name, name, name))
		for _, req := range hooks.seen() {
			if req.Name == name && req.Resource.Resource == "widgets" {
				if mutatedWidget == nil {
					mutatedWidget = &req // the mutating webhook is called first
				}
				widget = &req
			}
			if req.Name == name && req.Resource.Resource == "events" {
				event = &req
			}
		}
		return widget != nil && event != nil
	})
	var obj map[string]any
	json.Unmarshal(widget.Object.Raw, &obj)
	if widget.Kind.Version != "v1" || widget.RequestKind.Version != "v2" || obj["apiVersion"] != "example.com/v1" {
		t.Errorf("the widget's review: kind %v, request kind %v, object %v", widget.Kind, widget.RequestKind, obj["apiVersion"])
	}
	// Converted as kube's converter converts it, not as the storage codec
	// repairs an object it reads: a new object has no generation before
	// its strategy prepares it, after mutating admission.
	obj = nil
	json.Unmarshal(mutatedWidget.Object.Raw, &obj)
	if metadata, _ := obj["metadata"].(map[string]any); mutatedWidget == widget || metadata == nil || metadata["generation"] != nil {
		t.Errorf("the converted widget's metadata in mutating admission: %v", obj["metadata"])
	}
	obj = nil
	json.Unmarshal(event.Object.Raw, &obj)
	if event.Kind.Group != "" || event.RequestKind.Group != "events.k8s.io" || event.Resource.Group != "" || obj["apiVersion"] != "v1" {
		t.Errorf("the event's review: kind %v, request kind %v, resource %v, object %v", event.Kind, event.RequestKind, event.Resource, obj["apiVersion"])
	}
}

// TestAdmissionReviewRequests: webhooks get a write's options as the
// request gave them (CreateOptions, UpdateOptions, DeleteOptions), the
// objects of a deletecollection without their names, and one call for a
// binding or an eviction, whose pod writes kube-apiserver's storage makes
// past admission.
func TestAdmissionReviewRequests(t *testing.T) {
	hooks := startAdmissionServer(t)
	k := startKapi(t, onlyLifecycleControllers)
	k.mustKubectl("create", "namespace", "hooked")
	apply(t, k, fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: everything}
webhooks:
- name: everything.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {url: %s/deny, caBundle: %s}
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: hooked}}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: ["*"], resources: [configmaps, pods, pods/*]}
- name: namespaces.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {url: %s/deny, caBundle: %s}
  objectSelector: {matchLabels: {hooked: "yes"}}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: ["*"], resources: [namespaces]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: rename}
webhooks:
- name: rename.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {url: %s/rename, caBundle: %s}
  objectSelector: {matchLabels: {rename: "yes"}}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
`, hooks.URL, base64PEM(hooks.caBundle()), hooks.URL, base64PEM(hooks.caBundle()), hooks.URL, base64PEM(hooks.caBundle())))
	cms := k.clientset().CoreV1().ConfigMaps("hooked")
	waitFor(t, 20*time.Second, "the webhook to be called", func() bool {
		cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"}}, metav1.CreateOptions{DryRun: []string{"All"}})
		return len(hooks.seen()) > 0
	})
	calls := func(name string) []admissionv1.AdmissionRequest {
		var out []admissionv1.AdmissionRequest
		for _, req := range hooks.seen() {
			if req.Name == name {
				out = append(out, req)
			}
		}
		return out
	}
	options := func(req admissionv1.AdmissionRequest) string { return string(req.Options.Raw) }

	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "asked", Labels: map[string]string{"set": "a"}}},
		metav1.CreateOptions{FieldManager: "mgr1", FieldValidation: "Strict"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Patch(ctx, "asked", types.MergePatchType, []byte(`{"data":{"a":"b"}}`), metav1.PatchOptions{DryRun: []string{"All"}}); err != nil {
		t.Fatal(err)
	}
	propagation := metav1.DeletePropagationBackground
	if err := cms.Delete(ctx, "asked", metav1.DeleteOptions{PropagationPolicy: &propagation}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1","fieldManager":"mgr1","fieldValidation":"Strict"}`,
		`{"kind":"UpdateOptions","apiVersion":"meta.k8s.io/v1","dryRun":["All"]}`,
		`{"kind":"DeleteOptions","apiVersion":"meta.k8s.io/v1","propagationPolicy":"Background"}`,
	}
	if got := calls("asked"); len(got) != 3 || options(got[0]) != want[0] || options(got[1]) != want[1] || options(got[2]) != want[2] {
		t.Errorf("the options webhooks saw: %d calls %v", len(got), got)
	}

	for _, name := range []string{"c1", "c2"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"set": "b"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before := len(calls(""))
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "set=b"}); err != nil {
		t.Fatal(err)
	}
	if unnamed := calls("")[before:]; len(unnamed) != 2 || unnamed[0].Operation != admissionv1.Delete {
		t.Errorf("a deletecollection's deletes: %v, want two without names", unnamed)
	}

	pods := k.clientset().CoreV1().Pods("hooked")
	for _, name := range []string{"bound", "evicted"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{SchedulerName: "nobody", Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "bound"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "evicted"}}); err != nil {
		t.Fatal(err)
	}
	for name, sub := range map[string]string{"bound": "binding", "evicted": "eviction"} {
		got := calls(name)
		if len(got) != 2 || got[1].Operation != admissionv1.Create || got[1].SubResource != sub || got[1].Kind.Kind != strings.ToUpper(sub[:1])+sub[1:] {
			t.Errorf("the calls for pod %s: %+v, want its create and one for its %s", name, got, sub)
			continue
		}
		var body metav1.PartialObjectMetadata
		json.Unmarshal(got[1].Object.Raw, &body)
		if body.Namespace != "hooked" {
			t.Errorf("the %s a webhook saw is in namespace %q, want the request's", sub, body.Namespace)
		}
	}

	// A pod's delete is validated with the grace period its storage
	// gives it (the pod's own 30 s for a pod on a node), as kube-apiserver's.
	if err := pods.Delete(ctx, "bound", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := calls("bound"); len(got) < 3 || got[2].Operation != admissionv1.Delete ||
		options(got[2]) != `{"kind":"DeleteOptions","apiVersion":"meta.k8s.io/v1","gracePeriodSeconds":30}` {
		t.Errorf("the delete of a pod bound to a node: %+v", got)
	}
	// A pod already being deleted gracefully is deleted again without
	// admission, as kube's storage answers it before any.
	before = len(calls("bound"))
	if err := pods.Delete(ctx, "bound", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := len(calls("bound")); got != before {
		t.Errorf("a repeated delete of a pod being deleted made %d calls, want none", got-before)
	}

	// A namespace is created and deleted in itself; its delete is
	// validated with its UID as a precondition, as kube's namespace
	// storage adds it.
	ns, err := k.clientset().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns-hooked", Labels: map[string]string{"hooked": "yes"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.clientset().CoreV1().Namespaces().Delete(ctx, "ns-hooked", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got := calls("ns-hooked")
	wantDelete := fmt.Sprintf(`{"kind":"DeleteOptions","apiVersion":"meta.k8s.io/v1","preconditions":{"uid":"%s"}}`, ns.UID)
	if len(got) != 2 || got[0].Namespace != "ns-hooked" || got[1].Namespace != "ns-hooked" || options(got[1]) != wantDelete {
		t.Errorf("a namespace's create and delete: %+v, want both in the namespace, the delete with options %s", got, wantDelete)
	}

	// A mutating webhook that renames what is created: the validating
	// webhook is asked under the name the request gave.
	renamed, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "original", Labels: map[string]string{"rename": "yes"}}}, metav1.CreateOptions{})
	if err != nil || renamed.Name != "renamed" {
		t.Fatalf("a create renamed by a mutating webhook: %v %v", err, renamed)
	}
	if got := calls("original"); len(got) != 2 || len(calls("renamed")) != 0 {
		t.Errorf("a renamed create: %d calls under the name the request gave (want the mutating and the validating webhook's), %d under the new name",
			len(got), len(calls("renamed")))
	}
}
