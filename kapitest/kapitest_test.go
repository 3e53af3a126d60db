package kapitest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

var ctx = context.Background()

// TestIsolatedInParallel: servers started by parallel tests do not see
// each other's objects.
func TestIsolatedInParallel(t *testing.T) {
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			env := kapitest.Start(t)
			client := kubernetes.NewForConfigOrDie(env.Config)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "same"}, Data: map[string]string{"i": fmt.Sprint(i)}}
			if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			got, err := client.CoreV1().ConfigMaps("default").Get(ctx, "same", metav1.GetOptions{})
			if err != nil || got.Data["i"] != fmt.Sprint(i) {
				t.Fatalf("got %v, %v: another test's object", got.Data, err)
			}
			if _, err := os.Stat(env.Kubeconfig); err != nil {
				t.Errorf("kubeconfig: %v", err)
			}
		})
	}
}

// TestWithCRDs: CRDs from a directory are established before Start
// returns.
func TestWithCRDs(t *testing.T) {
	dir := t.TempDir()
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer, default: 1}}}}}}
`
	if err := os.WriteFile(filepath.Join(dir, "widgets.yaml"), []byte(crd), 0o600); err != nil {
		t.Fatal(err)
	}
	env := kapitest.Start(t, kapitest.WithCRDs(dir))
	widgets := dynamic.NewForConfigOrDie(env.Config).Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"})
	w := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]interface{}{"name": "w"}, "spec": map[string]interface{}{},
	}}
	got, err := widgets.Namespace("default").Create(ctx, w, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 1 {
		t.Errorf("widget = %v, want the default size", got.Object)
	}
}

// TestNoGoroutineLeftBehind: a stopped server leaves no goroutine behind,
// also after it scheduled and ran a pod on a simulated node.
func TestNoGoroutineLeftBehind(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("server", func(t *testing.T) {
		env := kapitest.Start(t, kapitest.WithSimulatedNodes(2))
		client := kubernetes.NewForConfigOrDie(env.Config)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}
		if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			got, err := client.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
			if err == nil && got.Status.Phase == corev1.PodRunning && got.Spec.NodeName != "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the pod did not run on a simulated node: %v, %v", got.Status, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before+2 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before, %d after stopping the server:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

// TestUserConfig: a user's configuration is authenticated as that user.
func TestUserConfig(t *testing.T) {
	env := kapitest.Start(t)
	config, err := env.UserConfig("ann", "team-a")
	if err != nil {
		t.Fatal(err)
	}
	review, err := kubernetes.NewForConfigOrDie(config).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := review.Status.UserInfo; u.Username != "ann" || len(u.Groups) != 2 || u.Groups[0] != "team-a" {
		t.Errorf("the user's config is authenticated as %+v", u)
	}
}

// TestWithWebhooks: a webhook configuration as kubebuilder writes it (a
// Service reference) is installed pointed at the test's own HTTPS server,
// which then decides the requests it matches.
func TestWithWebhooks(t *testing.T) {
	dir := t.TempDir()
	manifest := `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: validating-webhook-configuration}
webhooks:
- name: vconfigmap.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate-configmap}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  namespaceSelector:
    matchLabels: {webhook: "on"}
`
	if err := os.WriteFile(filepath.Join(dir, "manifests.yaml"), []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	env := kapitest.Start(t, kapitest.WithWebhooks(dir))
	if env.Webhooks == nil {
		t.Fatal("no webhook server settings")
	}
	paths := make(chan string, 10)
	mux := http.NewServeMux()
	mux.HandleFunc("/validate-configmap", func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.Path
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		allowed := review.Request.Name != "bad"
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: allowed}
		if !allowed {
			review.Response.Result = &metav1.Status{Message: "bad names are refused"}
		}
		review.Request = nil
		json.NewEncoder(w).Encode(&review)
	})
	server := &http.Server{Addr: net.JoinHostPort(env.Webhooks.Host, fmt.Sprint(env.Webhooks.Port)), Handler: mux}
	go server.ListenAndServeTLS(filepath.Join(env.Webhooks.CertDir, "tls.crt"), filepath.Join(env.Webhooks.CertDir, "tls.key"))
	t.Cleanup(func() { server.Close() })

	client := kubernetes.NewForConfigOrDie(env.Config)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hooked", Labels: map[string]string{"webhook": "on"}}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bad := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bad"}}
	var err error
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) { // until the server listens
		if _, err = client.CoreV1().ConfigMaps("hooked").Create(ctx, bad, metav1.CreateOptions{}); err != nil && strings.Contains(err.Error(), "denied") {
			break
		}
		client.CoreV1().ConfigMaps("hooked").Delete(ctx, "bad", metav1.DeleteOptions{})
		time.Sleep(50 * time.Millisecond)
	}
	want := `admission webhook "vconfigmap.example.com" denied the request: bad names are refused`
	if err == nil || err.Error() != want {
		t.Fatalf("creating bad: %v, want %q", err, want)
	}
	if got := <-paths; got != "/validate-configmap" {
		t.Errorf("the webhook was called at %q", got)
	}
	good := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "good"}}
	if _, err := client.CoreV1().ConfigMaps("hooked").Create(ctx, good, metav1.CreateOptions{}); err != nil {
		t.Errorf("creating good: %v", err)
	}
}

// TestConversionWebhook: a CRD converting its versions through a webhook
// Service is pointed at the test's webhook server, as envtest points it,
// and a read in the other version is converted there.
func TestConversionWebhook(t *testing.T) {
	dir := t.TempDir()
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.com"},
"spec":{"group":"example.com","names":{"plural":"gadgets","singular":"gadget","kind":"Gadget"},"scope":"Namespaced",
"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],
  "clientConfig":{"service":{"name":"webhook-service","namespace":"system","path":"/convert"}}}},
"versions":[
 {"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
 {"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
	// The same CRD twice, in JSON: installed once.
	for _, name := range []string{"a.json", "b.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(crd), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := kapitest.Start(t, kapitest.WithCRDs(dir))
	if env.Webhooks == nil {
		t.Fatal("no webhook server for the conversion webhook")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/convert", func(w http.ResponseWriter, r *http.Request) {
		var review apiextensionsv1.ConversionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		response := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
		for _, raw := range review.Request.Objects {
			var obj map[string]interface{}
			json.Unmarshal(raw.Raw, &obj)
			obj["apiVersion"] = review.Request.DesiredAPIVersion
			obj["convertedBy"] = "the test"
			converted, _ := json.Marshal(obj)
			response.ConvertedObjects = append(response.ConvertedObjects, k8sruntime.RawExtension{Raw: converted})
		}
		review.Request, review.Response = nil, response
		json.NewEncoder(w).Encode(&review)
	})
	server := &http.Server{Addr: net.JoinHostPort(env.Webhooks.Host, fmt.Sprint(env.Webhooks.Port)), Handler: mux}
	go server.ListenAndServeTLS(filepath.Join(env.Webhooks.CertDir, "tls.crt"), filepath.Join(env.Webhooks.CertDir, "tls.key"))
	t.Cleanup(func() { server.Close() })

	client := dynamic.NewForConfigOrDie(env.Config)
	gadget := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]interface{}{"name": "g"}}}
	if _, err := client.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}).Namespace("default").Create(ctx, gadget, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	v2 := client.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "gadgets"}).Namespace("default")
	var got *unstructured.Unstructured
	var err error
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) { // until the test's server listens
		if got, err = v2.Get(ctx, "g", metav1.GetOptions{}); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || got.Object["convertedBy"] != "the test" || got.GetAPIVersion() != "example.com/v2" {
		t.Fatalf("the gadget read in v2: %v %v", err, got)
	}
}

// TestWithoutControllers: WithControllers() runs none, as envtest's
// server: a new namespace gets neither a default ServiceAccount nor the
// root CA ConfigMap.
func TestWithoutControllers(t *testing.T) {
	env := kapitest.Start(t, kapitest.WithControllers())
	client := kubernetes.NewForConfigOrDie(env.Config)
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "quiet"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the controllers, if any ran, act within milliseconds
	if list, err := client.CoreV1().ConfigMaps("quiet").List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("ConfigMaps in a new namespace without controllers: %v %v", err, list)
	}
	if list, err := client.CoreV1().ServiceAccounts("quiet").List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("ServiceAccounts in a new namespace without controllers: %v %v", err, list)
	}
}

// TestNewInATemporaryDirectory: New("") keeps the server's files in a
// directory of its own, which Stop removes.
func TestNewInATemporaryDirectory(t *testing.T) {
	env, err := kapitest.New("")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(env.Kubeconfig)
	if _, err := os.Stat(env.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	if err := env.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the server's directory %s after Stop: %v", dir, err)
	}
}

// TestStopLogsNoErrors: an Env stopped as soon as it started logs no
// error: its controllers' complaints of being stopped before their
// informers synced are logged at Debug.
func TestStopLogsNoErrors(t *testing.T) {
	logFile, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	env, err := kapitest.New("", kapitest.WithLogs(logFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Stop(); err != nil {
		t.Fatal(err)
	}
	logs, err := os.ReadFile(logFile.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(logs), "\n") {
		if strings.Contains(line, "level=ERROR") {
			t.Errorf("logged: %s", line)
		}
	}
	if !strings.Contains(string(logs), "level=INFO") {
		t.Errorf("nothing logged at Info: %q", logs)
	}
}

// TestCRDsBeforeWebhooks: CRDs are installed before the webhook
// configurations, which a webhook for every create, not served yet, would
// otherwise refuse.
func TestCRDsBeforeWebhooks(t *testing.T) {
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	everything := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "everything"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "everything.example.com", AdmissionReviewVersions: []string{"v1"}, SideEffects: &none, FailurePolicy: &fail,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "system", Name: "webhook-service"}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}},
			}},
		}},
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "things.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing", Kind: "Thing"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}}},
		},
	}
	env, err := kapitest.New(t.TempDir(), kapitest.WithCRDObjects(crd), kapitest.WithWebhookObjects(everything))
	if err != nil {
		t.Fatalf("a CRD and a webhook for every create: %v", err)
	}
	if err := env.Stop(); err != nil {
		t.Error(err)
	}
}
