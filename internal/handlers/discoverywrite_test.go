package handlers

import (
	"net/http/httptest"
	"testing"
)

// TestAcceptsAggregatedAsKube: aggregated discovery is negotiated as
// kube-apiserver negotiates it: the first clause naming
// apidiscovery.k8s.io/v2 APIGroupDiscoveryList in a media type discovery
// serves (JSON, YAML, protobuf, or a range of them) wins, wherever it
// comes in the header; plain clauses never match.
func TestAcceptsAggregatedAsKube(t *testing.T) {
	const (
		params = ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
		agg    = "application/json" + params
		json   = "application/json"
		yaml   = "application/yaml"
		proto  = "application/vnd.kubernetes.protobuf"
	)
	for _, tc := range []struct {
		name, accept, want string // want "": not aggregated
	}{
		{"no Accept", "", ""},
		{"plain json", json, ""},
		{"wildcard", "*/*", ""},
		{"aggregated alone", agg, json},
		{"aggregated then json", agg + ",application/json", json},
		{"json then aggregated", "application/json," + agg, json},
		{"wildcard then aggregated", "*/*, " + agg, json},
		{"yaml then aggregated", "application/yaml, " + agg, json},
		{"lower-q aggregated then json", agg + ";q=0.5,application/json", json},
		{"client-go with protobuf first", proto + params + "," + agg + ",application/json;q=0.9", proto},
		{"yaml aggregated", yaml + params, yaml},
		{"a range aggregated", "application/*" + params, json},
		{"older version only", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", ""},
		{"other kind", "application/json;g=apidiscovery.k8s.io;v=v2;as=Table", ""},
		{"unserved type then aggregated", "text/html," + agg, json},
		{"upper-case media type", "Application/JSON" + params, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/apis", nil)
			if tc.accept != "" {
				r.Header.Set("Accept", tc.accept)
			}
			info, ok := AcceptsAggregated(r)
			if info.MediaType != tc.want || ok != (tc.want != "") {
				t.Errorf("AcceptsAggregated(%q) = %q, %v, want %q", tc.accept, info.MediaType, ok, tc.want)
			}
		})
	}
}
