package e2e

import (
	"io"
	"net/http"
	"testing"
)

func TestAggregatedDiscovery(t *testing.T) {
	k := startKapi(t)
	client := k.rawClient()
	for _, path := range []string{"/api", "/apis"} {
		req, _ := http.NewRequest("GET", k.config.Host+path, nil)
		req.Header.Set("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" {
			t.Fatalf("%s: Content-Type %q", path, ct)
		}
	}
	// client-go's discovery uses the aggregated documents.
	groups, resources, err := k.clientset().Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 20 { // the core group and 19 named groups
		t.Errorf("%d groups, want 20", len(groups))
	}
	found := map[string]bool{}
	for _, list := range resources {
		for _, r := range list.APIResources {
			found[list.GroupVersion+" "+r.Name] = true
		}
	}
	for _, want := range []string{"v1 pods", "v1 pods/status", "apps/v1 deployments", "autoscaling/v2 horizontalpodautoscalers",
		"apiextensions.k8s.io/v1 customresourcedefinitions", "flowcontrol.apiserver.k8s.io/v1 flowschemas",
		"apiregistration.k8s.io/v1 apiservices"} {
		if !found[want] {
			t.Errorf("discovery lacks %s", want)
		}
	}
}
