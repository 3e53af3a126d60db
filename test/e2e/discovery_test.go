package e2e

import (
	"io"
	"net/http"
	"strings"
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
	if len(groups) != 22 { // the core group and 21 named groups
		t.Errorf("%d groups, want 22", len(groups))
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

// TestStorageVersionHash: legacy discovery reports each resource's
// storage version hash as kube-apiserver computes it, the same for every
// version of a resource (HorizontalPodAutoscalers are stored in v2).
func TestStorageVersionHash(t *testing.T) {
	k := startKapi(t)
	hash := func(gv, resource string) string {
		list, err := k.clientset().Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			if r.Name == resource {
				return r.StorageVersionHash
			}
		}
		t.Fatalf("%s has no %s", gv, resource)
		return ""
	}
	if got := hash("v1", "pods"); got != "xPOwRZ+Yhw8=" {
		t.Errorf("pods storageVersionHash = %q, want kube-apiserver's xPOwRZ+Yhw8=", got)
	}
	if v1, v2 := hash("autoscaling/v1", "horizontalpodautoscalers"), hash("autoscaling/v2", "horizontalpodautoscalers"); v1 != v2 || v1 == "" {
		t.Errorf("HPA hashes v1 %q, v2 %q: want the same, of the storage version", v1, v2)
	}
	// events.k8s.io Events are stored as core Events; kube-apiserver
	// stores a few resources in a beta version; what is not stored has
	// no hash.
	for _, tc := range []struct{ gv, resource, want string }{
		{"events.k8s.io/v1", "events", "r2yiGXH7wu8="},
		{"apiextensions.k8s.io/v1", "customresourcedefinitions", "jfWCUB31mvA="},
		{"certificates.k8s.io/v1", "clustertrustbundles", "v5yhuVertL4="},
		{"certificates.k8s.io/v1", "podcertificaterequests", "wYA9yXQH8fg="},
		{"resource.k8s.io/v1", "devicetaintrules", "i+85+TcIKpA="},
		{"storagemigration.k8s.io/v1", "storageversionmigrations", "pCjmmKOkLy4="},
		{"authorization.k8s.io/v1", "subjectaccessreviews", ""},
		{"v1", "bindings", ""},
		{"v1", "componentstatuses", ""},
	} {
		if got := hash(tc.gv, tc.resource); got != tc.want {
			t.Errorf("%s %s storageVersionHash = %q, want kube-apiserver's %q", tc.gv, tc.resource, got, tc.want)
		}
	}
}

// TestAggregatedDiscoveryResponseKinds: as kube-apiserver, aggregated
// discovery names a built-in response kind's group and version only where
// they are not the resource's; a custom resource's are named.
func TestAggregatedDiscoveryResponseKinds(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	const accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	for _, tc := range []struct{ path, want string }{
		{"/api", `"resource":"pods","responseKind":{"group":"","version":"","kind":"Pod"}`},
		{"/api", `{"subresource":"eviction","responseKind":{"group":"policy","version":"v1","kind":"Eviction"},"verbs":["create"]}`},
		{"/api", `{"subresource":"log","responseKind":{"group":"","version":"","kind":"Pod"},"verbs":["get"]}`},
		{"/apis", `"resource":"deployments","responseKind":{"group":"","version":"","kind":"Deployment"}`},
		{"/apis", `{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"}`},
		{"/apis", `"resource":"widgets","responseKind":{"group":"example.com","version":"v1","kind":"Widget"}`},
	} {
		resp, body := rawDo(t, k, http.MethodGet, tc.path, "", accept, nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d, lacks %s", tc.path, resp.StatusCode, tc.want)
		}
	}
}
