package flowcontrol

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
)

// TestListOfAResourceWithoutCount: a list of a resource the server holds
// no count of (an aggregated server's, as the autoscaler's pods of
// metrics.k8s.io) costs the fewest seats, as in kube-apiserver, and a list
// of many objects more.
func TestListOfAResourceWithoutCount(t *testing.T) {
	counts := func(gr schema.GroupResource) (int64, bool) {
		if gr == (schema.GroupResource{Resource: "pods"}) {
			return 100000, true
		}
		return 0, false
	}
	f, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, informers.NewSharedInformerFactory(fake.NewClientset(), 0), counts, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	seats := func(group, resource string) uint64 {
		r := httptest.NewRequest("GET", "/apis/x", nil)
		r = r.WithContext(genericapirequest.WithRequestInfo(r.Context(), &genericapirequest.RequestInfo{
			IsResourceRequest: true, Verb: "list", APIGroup: group, APIVersion: "v1beta1", Resource: resource,
		}))
		return f.estimate(r, "global-default", "global-default").InitialSeats
	}
	if got := seats("metrics.k8s.io", "pods"); got != 1 {
		t.Errorf("a list of metrics.k8s.io pods takes %d seats, want 1", got)
	}
	if got := seats("", "pods"); got <= 1 {
		t.Errorf("a list of 100,000 pods takes %d seats, want more than 1", got)
	}
}
