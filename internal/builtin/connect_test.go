package builtin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/internal/builtin"
	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/pipeline/pipelinetest"
	"github.com/kapi-dev/kapi/internal/simnodes"
)

// TestProxies sends requests through pods/proxy, services/proxy and
// nodes/proxy to a server standing in for the pod and the node (kube
// proxies to no loopback address, so the test's transport dials it for
// any), and checks where each is sent. What runs on a simulated node is
// not reached.
func TestProxies(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.RequestURI())
	}))
	defer upstream.Close()
	dialed := builtin.ProxyThrough(t, upstream.Listener.Addr().String())
	p := pipelinetest.New(t, cache.Options{})
	ctx := genericapirequest.WithNamespace(context.Background(), "default")

	mustCreate(t, p, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker"},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.9"}}}})
	mustCreate(t, p, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "sim", Labels: map[string]string{simnodes.Label: "true"}}})
	runningPod(t, p, "web", "worker", "10.1.2.3")
	runningPod(t, p, "simulated", "sim", "10.1.2.4")
	mustCreate(t, p, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})
	mustCreate(t, p, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "simulated", Namespace: "default"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})
	endpointSlice(t, p, "web", "10.1.2.3")
	endpointSlice(t, p, "simulated", "10.1.2.4")

	for _, tc := range []struct {
		resource, id string
		opts         runtime.Object
		want         string // the address dialed and the upstream's answer, or the error
	}{
		{"pods", "web", &api.PodProxyOptions{Path: "/hello/"}, "10.1.2.3:8080 GET /hello/?q=1"},
		{"pods", "web:9000", &api.PodProxyOptions{Path: "/"}, "10.1.2.3:9000 GET /?q=1"},
		{"pods", "simulated", &api.PodProxyOptions{Path: "/"}, `node "sim" is simulated`},
		{"services", "web:80", &api.ServiceProxyOptions{Path: "/x"}, "10.1.2.3:8080 GET /x?q=1"},
		{"services", "web:http", &api.ServiceProxyOptions{Path: "/x"}, "10.1.2.3:8080 GET /x?q=1"},
		{"services", "simulated", &api.ServiceProxyOptions{}, `no endpoints available for service "simulated"`},
		{"nodes", "worker:9100", &api.NodeProxyOptions{Path: "/metrics"}, "10.0.0.9:9100 GET /metrics?q=1"},
		{"nodes", "sim", &api.NodeProxyOptions{Path: "/metrics"}, `node "sim" is simulated`},
	} {
		connecter := p.Registry().Snapshot().Lookup(schema.GroupVersionResource{Version: "v1", Resource: tc.resource}).Backend().Hooks.Connects["proxy"]
		handler, err := connecter.Connect(ctx, tc.id, tc.opts, nil)
		if err != nil {
			if !strings.Contains(err.Error(), tc.want) || !apierrors.IsServiceUnavailable(err) {
				t.Errorf("%s/%s: %v, want %q", tc.resource, tc.id, err, tc.want)
			}
			continue
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/whatever?q=1", nil))
		if got := dialed() + " " + rec.Body.String(); rec.Code != http.StatusOK || got != tc.want {
			t.Errorf("%s/%s: %d %q, want %q", tc.resource, tc.id, rec.Code, got, tc.want)
		}
	}
}

func mustCreate(t *testing.T, p *pipeline.Pipeline, obj runtime.Object) {
	t.Helper()
	if _, err := p.CreateObject(context.Background(), obj, "test"); err != nil {
		t.Fatal(err)
	}
}

// runningPod creates a pod on a node with an IP, as its kubelet reports.
func runningPod(t *testing.T, p *pipeline.Pipeline, name, node, ip string) {
	t.Helper()
	mustCreate(t, p, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{NodeName: node,
		Containers: []corev1.Container{{Name: "app", Image: "nginx", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}}}})
	store, _ := p.Store(&corev1.Pod{})
	_, err := p.Update(context.Background(), store, "default", name, pipeline.Options{Subresource: "status"}, func(current runtime.Object) (runtime.Object, error) {
		pod := current.DeepCopyObject().(*corev1.Pod)
		pod.Status.Phase, pod.Status.PodIP, pod.Status.PodIPs = corev1.PodRunning, ip, []corev1.PodIP{{IP: ip}}
		return pod, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// endpointSlice creates a Service's slice with one ready pod, as the
// EndpointSlice controller would.
func endpointSlice(t *testing.T, p *pipeline.Pipeline, service, ip string) {
	t.Helper()
	mustCreate(t, p, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: service + "-1", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: service}}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
	})
}
