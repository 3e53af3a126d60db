package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// TestPriorityAndFairness: requests are classified by Kubernetes'
// bootstrap FlowSchemas (the X-Kubernetes-PF-* headers name them), and a
// priority level flooded with slow requests refuses the excess with 429
// and Retry-After while another user, in another level, is served.
func TestPriorityAndFairness(t *testing.T) {
	k := startKapiWithTokens(t, "--authorization-mode=AlwaysAllow")
	cs := k.clientset()
	uid := func(kind, name string) string {
		return strings.TrimSpace(k.mustKubectl("get", kind, name, "-o", "jsonpath={.metadata.uid}"))
	}
	get := func(token, path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, k.config.Host+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := k.anonymousClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := get("viewer-token", "/api/v1/namespaces")
	if got, want := resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID"), uid("flowschema", "global-default"); got != want {
		t.Errorf("a user's request went by FlowSchema %q, want global-default's %q", got, want)
	}
	if got, want := resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID"), uid("prioritylevelconfiguration", "global-default"); got != want {
		t.Errorf("a user's request went to priority level %q, want global-default's %q", got, want)
	}
	admin := k.mustRaw("/api/v1/namespaces")
	if got, want := admin.Header.Get("X-Kubernetes-PF-FlowSchema-UID"), uid("flowschema", "exempt"); got != want {
		t.Errorf("system:masters went by FlowSchema %q, want exempt's %q", got, want)
	}
	// kube-apiserver's dumps of the levels' state, in CSV.
	for path, header := range map[string]string{
		"dump_priority_levels": "PriorityLevelName,", "dump_queues": "PriorityLevelName,", "dump_requests": "PriorityLevelName,",
	} {
		out := k.mustKubectl("get", "--raw", "/debug/api_priority_and_fairness/"+path)
		if !strings.HasPrefix(strings.TrimSpace(out), header) || (path == "dump_priority_levels" && !strings.Contains(out, "global-default")) {
			t.Errorf("/debug/api_priority_and_fairness/%s:\n%s", path, out)
		}
	}

	// A level of a single share that neither borrows nor queues, for
	// eddie, whose writes in the flood namespace take 3 s each (a slow
	// webhook).
	apply(t, k, `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: tiny}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 1
    borrowingLimitPercent: 0
    limitResponse: {type: Reject}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: flood}
spec:
  priorityLevelConfiguration: {name: tiny}
  matchingPrecedence: 500
  distinguisherMethod: {type: ByUser}
  rules:
  - subjects: [{kind: User, user: {name: eddie}}]
    resourceRules: [{verbs: ["*"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"]}]
`)
	hooks := startAdmissionServer(t)
	k.mustKubectl("create", "namespace", "flood")
	apply(t, k, fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: slow-flood}
webhooks:
- name: slow.flood.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  timeoutSeconds: 10
  failurePolicy: Fail
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: flood}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
  clientConfig: {url: %s/slow, caBundle: %s}
`, hooks.URL, base64PEM(hooks.caBundle())))
	tinyUID := uid("prioritylevelconfiguration", "tiny")
	waitFor(t, 20*time.Second, "eddie's requests to go to the tiny level", func() bool {
		return get("editor-token", "/api/v1/namespaces/flood/configmaps").Header.Get("X-Kubernetes-PF-PriorityLevel-UID") == tinyUID
	})

	var rejected, retryAfter, created atomic.Int32
	var mu sync.Mutex
	var outcomes []string
	var flood sync.WaitGroup
	for i := range 30 {
		flood.Add(1)
		go func() {
			defer flood.Done()
			body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d"}}`, i)
			req, _ := http.NewRequest(http.MethodPost, k.config.Host+"/api/v1/namespaces/flood/configmaps", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer editor-token")
			req.Header.Set("Content-Type", "application/json")
			resp, err := k.anonymousClient().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			mu.Lock()
			outcomes = append(outcomes, fmt.Sprintf("cm-%d: %d %s", i, resp.StatusCode, strings.TrimSpace(string(b[:min(len(b), 200)]))))
			mu.Unlock()
			switch resp.StatusCode {
			case http.StatusTooManyRequests:
				rejected.Add(1)
				if resp.Header.Get("Retry-After") != "" {
					retryAfter.Add(1)
				}
			case http.StatusCreated:
				created.Add(1)
			default:
				t.Errorf("a flooding create: %d", resp.StatusCode)
			}
		}()
	}
	// While the flood holds the tiny level's seats, another user is
	// served, and health checks answer.
	time.Sleep(500 * time.Millisecond)
	for range 20 {
		if code := get("viewer-token", "/api/v1/namespaces/default/configmaps").StatusCode; code != http.StatusOK {
			t.Errorf("another user's request during the flood: %d", code)
		}
	}
	// (With AlwaysAllow, as kube-apiserver, anonymous requests are
	// refused: a probe has credentials.)
	for _, probe := range []string{"/readyz", "/livez", "/healthz"} {
		if code := get("viewer-token", probe).StatusCode; code != http.StatusOK {
			t.Errorf("%s during the flood: %d", probe, code)
		}
	}
	flood.Wait()
	if rejected.Load() == 0 || created.Load() == 0 {
		t.Errorf("of 30 flooding creates %d were refused and %d created; want some of each", rejected.Load(), created.Load())
	}
	if retryAfter.Load() != rejected.Load() {
		t.Errorf("%d of %d refusals had a Retry-After header", retryAfter.Load(), rejected.Load())
	}
	list, err := cs.CoreV1().ConfigMaps("flood").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cm := range list.Items {
		if strings.HasPrefix(cm.Name, "cm-") { // not the root CA's
			names = append(names, cm.Name)
		}
	}
	if int32(len(names)) != created.Load() {
		t.Errorf("configmaps %v in flood, %d creates acknowledged: %v", names, created.Load(), outcomes)
	}
}

// anonymousClient trusts k's CA but presents no credentials of its own.
func (k *kapi) anonymousClient() *http.Client {
	rt, err := rest.TransportFor(rest.AnonymousClientConfig(k.config))
	if err != nil {
		k.t.Fatal(err)
	}
	return &http.Client{Transport: rt}
}

// mustRaw GETs path as the admin.
func (k *kapi) mustRaw(path string) *http.Response {
	resp, err := k.rawClient().Get(k.config.Host + path)
	if err != nil {
		k.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestWatchLimit: with --max-watches 2, a third watch gets 429 Too Many
// Requests with Retry-After, and is admitted once another ends.
func TestWatchLimit(t *testing.T) {
	k := startKapi(t, "--max-watches", "2")
	client := k.rawClient()
	open := func() *http.Response {
		t.Helper()
		resp, err := client.Get(k.config.Host + "/api/v1/namespaces/default/configmaps?watch=1")
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first, second := open(), open()
	defer second.Body.Close()
	for _, resp := range []*http.Response{first, second} {
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("watch within the limit: %s", resp.Status)
		}
	}
	third := open()
	body, _ := io.ReadAll(third.Body)
	third.Body.Close()
	if third.StatusCode != http.StatusTooManyRequests || third.Header.Get("Retry-After") != "1" ||
		!strings.Contains(string(body), `"reason":"TooManyRequests"`) {
		t.Fatalf("watch over the limit: %s, Retry-After %q, %s", third.Status, third.Header.Get("Retry-After"), body)
	}
	// Lists are not watches.
	if _, err := k.clientset().CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("list at the watch limit: %v", err)
	}
	first.Body.Close()
	waitFor(t, 10*time.Second, "a watch to be admitted after one ended", func() bool {
		resp := open()
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}
