package aggregator

import (
	"slices"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationv1helper "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"

	"github.com/kapi-dev/kapi/internal/resources"
)

func apiService(group, version string, groupMinimum, versionPriority int32) *apiregistrationv1.APIService {
	return &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: version + "." + group},
		Spec: apiregistrationv1.APIServiceSpec{
			Group: group, Version: version, GroupPriorityMinimum: groupMinimum, VersionPriority: versionPriority,
			Service: &apiregistrationv1.ServiceReference{Namespace: "default", Name: "api"},
		},
	}
}

// remoteServices are aggregated groups around kapi's own priorities: one
// above every built-in group, one tied with apps (sorted by name before
// it), one below all, and a version added to a built-in group.
func remoteServices(t *testing.T) [][]*apiregistrationv1.APIService {
	apps, _ := resources.APIServicePriority("apps", "v1")
	if apps == 0 {
		t.Fatal("no priority for apps")
	}
	return apiregistrationv1helper.SortedByGroupAndVersion([]*apiregistrationv1.APIService{
		apiService("top.example.com", "v1", 20000, 15),
		apiService("aaa.example.com", "v1", apps, 15),
		apiService("low.example.com", "v1beta1", 10, 5),
		apiService("low.example.com", "v1", 10, 15),
		apiService("batch", "v9", 100, 100),
	})
}

func TestLegacyGroupOrder(t *testing.T) {
	local := []metav1.APIGroup{
		{Name: "apiregistration.k8s.io", Versions: []metav1.GroupVersionForDiscovery{{Version: "v1"}}},
		{Name: "apps", Versions: []metav1.GroupVersionForDiscovery{{Version: "v1"}}},
		{Name: "batch", Versions: []metav1.GroupVersionForDiscovery{{Version: "v1"}}},
	}
	merged := mergeGroups(local, remoteServices(t))
	var names []string
	for _, g := range merged {
		names = append(names, g.Name)
	}
	// kube-aggregator lists its own group first, whatever the priorities.
	want := []string{"apiregistration.k8s.io", "top.example.com", "aaa.example.com", "apps", "batch", "low.example.com"}
	if !slices.Equal(names, want) {
		t.Errorf("groups %v, want %v", names, want)
	}
	for _, g := range merged {
		var versions []string
		for _, v := range g.Versions {
			versions = append(versions, v.Version)
		}
		switch g.Name {
		case "low.example.com":
			if !slices.Equal(versions, []string{"v1", "v1beta1"}) || g.PreferredVersion.Version != "v1" {
				t.Errorf("low.example.com versions %v preferred %s", versions, g.PreferredVersion.Version)
			}
		case "batch":
			// The first version is the preferred one, as kube-aggregator
			// prefers the APIService of the highest version priority.
			if !slices.Equal(versions, []string{"v9", "v1"}) || g.PreferredVersion.Version != "v9" {
				t.Errorf("batch versions %v preferred %s", versions, g.PreferredVersion.Version)
			}
		}
	}
}

func TestAggregatedGroupOrder(t *testing.T) {
	group := func(name string, versions ...string) apidiscoveryv2.APIGroupDiscovery {
		g := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: name}}
		for _, v := range versions {
			g.Versions = append(g.Versions, apidiscoveryv2.APIVersionDiscovery{Version: v})
		}
		return g
	}
	local := []apidiscoveryv2.APIGroupDiscovery{group("apiregistration.k8s.io", "v1"), group("apps", "v1"), group("batch", "v1")}
	remote := []apidiscoveryv2.APIGroupDiscovery{
		group("top.example.com", "v1"), group("aaa.example.com", "v1"), group("batch", "v9"), group("low.example.com", "v1", "v1beta1"),
	}
	merged := mergeAggregated(local, remote, remoteServices(t))
	var names []string
	for _, g := range merged {
		names = append(names, g.Name)
	}
	// Kube's aggregated discovery ranks its own group above any
	// APIService, then every group by priority.
	want := []string{"apiregistration.k8s.io", "top.example.com", "aaa.example.com", "apps", "batch", "low.example.com"}
	if !slices.Equal(names, want) {
		t.Errorf("groups %v, want %v", names, want)
	}
	for _, g := range merged {
		if g.Name == "batch" && (len(g.Versions) != 2 || g.Versions[0].Version != "v9") {
			t.Errorf("batch versions %+v, want v9 first (version priority 100)", g.Versions)
		}
	}
}
