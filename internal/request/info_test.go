package request

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
)

// The expectations below are what kube-apiserver's RequestInfoFactory
// (k8s.io/apiserver/pkg/endpoints/request) reports for the same request.

func parse(method, target string) *Info {
	return Parse(httptest.NewRequest(method, target, nil))
}

func TestParseResourceRequests(t *testing.T) {
	tests := []struct {
		name   string
		method string
		url    string
		want   Info
		skip   string
	}{
		// core group
		{name: "core list across namespaces", method: "GET", url: "/api/v1/pods",
			want: Info{Verb: "list", Prefix: "api", Version: "v1", Resource: "pods"}},
		{name: "core list across namespaces, trailing slash", method: "GET", url: "/api/v1/pods/",
			want: Info{Verb: "list", Prefix: "api", Version: "v1", Resource: "pods"}},
		{name: "core namespaced list", method: "GET", url: "/api/v1/namespaces/default/pods",
			want: Info{UnderNamespace: true, Verb: "list", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods"}},
		{name: "core namespaced get", method: "GET", url: "/api/v1/namespaces/default/pods/foo",
			want: Info{UnderNamespace: true, Verb: "get", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods", Name: "foo"}},
		{name: "core sub-resource get", method: "GET", url: "/api/v1/namespaces/default/pods/foo/status",
			want: Info{UnderNamespace: true, Verb: "get", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods", Name: "foo", Subresource: "status"}},
		{name: "core sub-resource update", method: "PUT", url: "/api/v1/namespaces/default/pods/foo/status",
			want: Info{UnderNamespace: true, Verb: "update", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods", Name: "foo", Subresource: "status"}},
		{name: "core sub-resource patch", method: "PATCH", url: "/api/v1/namespaces/default/pods/foo/status",
			want: Info{UnderNamespace: true, Verb: "patch", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods", Name: "foo", Subresource: "status"}},
		{name: "core sub-resource create", method: "POST", url: "/api/v1/namespaces/default/pods/foo/eviction",
			want: Info{UnderNamespace: true, Verb: "create", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods", Name: "foo", Subresource: "eviction"}},
		{name: "proxy path keeps the rest in Extra", method: "GET", url: "/api/v1/namespaces/default/pods/foo/proxy/a/b",
			want: Info{UnderNamespace: true, Verb: "get", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods", Name: "foo", Subresource: "proxy", Extra: []string{"a", "b"}}},
		{name: "core cluster-scoped list", method: "GET", url: "/api/v1/nodes",
			want: Info{Verb: "list", Prefix: "api", Version: "v1", Resource: "nodes"}},
		{name: "core cluster-scoped get", method: "GET", url: "/api/v1/nodes/n1",
			want: Info{Verb: "get", Prefix: "api", Version: "v1", Resource: "nodes", Name: "n1"}},
		{name: "core cluster-scoped sub-resource", method: "PUT", url: "/api/v1/nodes/n1/status",
			want: Info{Verb: "update", Prefix: "api", Version: "v1", Resource: "nodes", Name: "n1", Subresource: "status"}},

		// named groups
		{name: "group list across namespaces", method: "GET", url: "/apis/apps/v1/deployments",
			want: Info{Verb: "list", Prefix: "apis", Group: "apps", Version: "v1", Resource: "deployments"}},
		{name: "group namespaced list", method: "GET", url: "/apis/apps/v1/namespaces/ns1/deployments",
			want: Info{UnderNamespace: true, Verb: "list", Prefix: "apis", Group: "apps", Version: "v1", Namespace: "ns1", Resource: "deployments"}},
		{name: "group namespaced get", method: "GET", url: "/apis/apps/v1/namespaces/ns1/deployments/web",
			want: Info{UnderNamespace: true, Verb: "get", Prefix: "apis", Group: "apps", Version: "v1", Namespace: "ns1", Resource: "deployments", Name: "web"}},
		{name: "group scale sub-resource", method: "PUT", url: "/apis/apps/v1/namespaces/ns1/deployments/web/scale",
			want: Info{UnderNamespace: true, Verb: "update", Prefix: "apis", Group: "apps", Version: "v1", Namespace: "ns1", Resource: "deployments", Name: "web", Subresource: "scale"}},
		{name: "dotted group cluster-scoped get", method: "GET", url: "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin",
			want: Info{Verb: "get", Prefix: "apis", Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles", Name: "admin"}},
		{name: "CRDs", method: "GET", url: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
			want: Info{Verb: "list", Prefix: "apis", Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}},

		// namespaces themselves
		{name: "namespaces list", method: "GET", url: "/api/v1/namespaces",
			want: Info{Verb: "list", Prefix: "api", Version: "v1", Resource: "namespaces"}},
		{name: "namespaces create", method: "POST", url: "/api/v1/namespaces",
			want: Info{Verb: "create", Prefix: "api", Version: "v1", Resource: "namespaces"}},
		{name: "namespace get lives in itself", method: "GET", url: "/api/v1/namespaces/kube-system",
			want: Info{Verb: "get", Prefix: "api", Version: "v1", Namespace: "kube-system", Resource: "namespaces", Name: "kube-system"}},
		{name: "namespaces under a namespace are that namespace's", method: "GET", url: "/api/v1/namespaces/foo/namespaces/bar",
			want: Info{UnderNamespace: true, Verb: "get", Prefix: "api", Version: "v1", Namespace: "foo", Resource: "namespaces", Name: "bar"}},
		{name: "namespace delete", method: "DELETE", url: "/api/v1/namespaces/foo",
			want: Info{Verb: "delete", Prefix: "api", Version: "v1", Namespace: "foo", Resource: "namespaces", Name: "foo"}},
		{name: "namespace status", method: "PUT", url: "/api/v1/namespaces/foo/status",
			want: Info{Verb: "update", Prefix: "api", Version: "v1", Namespace: "foo", Resource: "namespaces", Name: "foo", Subresource: "status"}},
		{name: "namespace status get", method: "GET", url: "/api/v1/namespaces/foo/status",
			want: Info{Verb: "get", Prefix: "api", Version: "v1", Namespace: "foo", Resource: "namespaces", Name: "foo", Subresource: "status"}},
		{name: "namespace finalize", method: "PUT", url: "/api/v1/namespaces/foo/finalize",
			want: Info{Verb: "update", Prefix: "api", Version: "v1", Namespace: "foo", Resource: "namespaces", Name: "foo", Subresource: "finalize"}},

		// the /watch/ path prefix
		{name: "watch prefix all namespaces", method: "GET", url: "/api/v1/watch/pods",
			want: Info{WatchPath: true, Verb: "watch", Prefix: "api", Version: "v1", Resource: "pods"}},
		{name: "watch prefix namespaced", method: "GET", url: "/api/v1/watch/namespaces/default/pods",
			want: Info{UnderNamespace: true, WatchPath: true, Verb: "watch", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods"}},
		{name: "watch prefix named object", method: "GET", url: "/api/v1/watch/namespaces/default/pods/foo",
			want: Info{UnderNamespace: true, WatchPath: true, Verb: "watch", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods", Name: "foo"}},
		{name: "watch prefix named group", method: "GET", url: "/apis/apps/v1/watch/namespaces/ns1/deployments",
			want: Info{UnderNamespace: true, WatchPath: true, Verb: "watch", Prefix: "apis", Group: "apps", Version: "v1", Namespace: "ns1", Resource: "deployments"}},
		{name: "watch prefix namespaces", method: "GET", url: "/api/v1/watch/namespaces",
			want: Info{WatchPath: true, Verb: "watch", Prefix: "api", Version: "v1", Resource: "namespaces"}},
		{name: "watch prefix one namespace", method: "GET", url: "/api/v1/watch/namespaces/foo",
			want: Info{WatchPath: true, Verb: "watch", Prefix: "api", Version: "v1", Namespace: "foo", Resource: "namespaces", Name: "foo"}},

		// the removed /proxy/ path prefix, still read as the verb proxy
		{name: "proxy prefix namespaced", method: "GET", url: "/api/v1/proxy/namespaces/default/pods/foo",
			want: Info{ProxyPath: true, UnderNamespace: true, Verb: "proxy", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods", Name: "foo"}},
		{name: "proxy prefix cluster-scoped with a path", method: "DELETE", url: "/api/v1/proxy/nodes/n1/x",
			want: Info{ProxyPath: true, Verb: "proxy", Prefix: "api", Version: "v1", Resource: "nodes", Name: "n1", Extra: []string{"x"}}},
		{name: "a resource named proxy", method: "GET", url: "/api/v1/proxy",
			want: Info{Verb: "list", Prefix: "api", Version: "v1", Resource: "proxy"}},

		// ?watch=
		{name: "watch=1", method: "GET", url: "/api/v1/namespaces/default/pods?watch=1",
			want: Info{UnderNamespace: true, Verb: "watch", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods"}},
		{name: "watch=true", method: "GET", url: "/api/v1/namespaces/default/pods?watch=true",
			want: Info{UnderNamespace: true, Verb: "watch", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods"}},
		{name: "watch=True", method: "GET", url: "/api/v1/pods?watch=True",
			want: Info{Verb: "watch", Prefix: "api", Version: "v1", Resource: "pods"}},
		{name: "watch=true with other params", method: "GET", url: "/apis/apps/v1/deployments?resourceVersion=5&watch=true&allowWatchBookmarks=true",
			want: Info{Verb: "watch", Prefix: "apis", Group: "apps", Version: "v1", Resource: "deployments"}},
		{name: "watch=0", method: "GET", url: "/api/v1/namespaces/default/pods?watch=0",
			want: Info{UnderNamespace: true, Verb: "list", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods"}},
		{name: "watch=false", method: "GET", url: "/api/v1/namespaces/default/pods?watch=false",
			want: Info{UnderNamespace: true, Verb: "list", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods"}},
		{name: "watch=FALSE", method: "GET", url: "/api/v1/pods?watch=FALSE",
			want: Info{Verb: "list", Prefix: "api", Version: "v1", Resource: "pods"}},
		{name: "HEAD watch=1", method: "HEAD", url: "/api/v1/pods?watch=1",
			want: Info{Verb: "watch", Prefix: "api", Version: "v1", Resource: "pods"}},
		// kube-apiserver decodes watch with runtime.Convert_Slice_string_To_bool:
		// only "0" and "false" (any case) are false; any other value is true.
		{name: "watch=yes", method: "GET", url: "/api/v1/pods?watch=yes",
			want: Info{Verb: "watch", Prefix: "api", Version: "v1", Resource: "pods"}},
		{name: "watch with empty value", method: "GET", url: "/api/v1/pods?watch=",
			want: Info{Verb: "watch", Prefix: "api", Version: "v1", Resource: "pods"}},
		// kube-apiserver only consults ?watch when the path names no object,
		// and GET .../pods/NAME?watch=true returns the object.
		{name: "watch=true on a named object is a get", method: "GET", url: "/api/v1/namespaces/default/pods/foo?watch=true",
			want: Info{UnderNamespace: true, Verb: "get", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods", Name: "foo"}},
		{name: "watch=1 on a namespace is a get", method: "GET", url: "/api/v1/namespaces/foo?watch=1",
			want: Info{Verb: "get", Prefix: "api", Version: "v1", Namespace: "foo", Resource: "namespaces", Name: "foo"}},

		// verbs per method
		{name: "HEAD list", method: "HEAD", url: "/api/v1/namespaces/default/configmaps",
			want: Info{UnderNamespace: true, Verb: "list", Prefix: "api", Version: "v1", Namespace: "default", Resource: "configmaps"}},
		{name: "HEAD get", method: "HEAD", url: "/api/v1/namespaces/default/configmaps/c",
			want: Info{UnderNamespace: true, Verb: "get", Prefix: "api", Version: "v1", Namespace: "default", Resource: "configmaps", Name: "c"}},
		{name: "POST create", method: "POST", url: "/api/v1/namespaces/default/configmaps",
			want: Info{UnderNamespace: true, Verb: "create", Prefix: "api", Version: "v1", Namespace: "default", Resource: "configmaps"}},
		{name: "POST to a name is still create", method: "POST", url: "/api/v1/namespaces/default/configmaps/c",
			want: Info{UnderNamespace: true, Verb: "create", Prefix: "api", Version: "v1", Namespace: "default", Resource: "configmaps", Name: "c"}},
		{name: "PUT update", method: "PUT", url: "/api/v1/namespaces/default/configmaps/c",
			want: Info{UnderNamespace: true, Verb: "update", Prefix: "api", Version: "v1", Namespace: "default", Resource: "configmaps", Name: "c"}},
		{name: "PATCH patch", method: "PATCH", url: "/api/v1/namespaces/default/configmaps/c",
			want: Info{UnderNamespace: true, Verb: "patch", Prefix: "api", Version: "v1", Namespace: "default", Resource: "configmaps", Name: "c"}},
		{name: "DELETE named is delete", method: "DELETE", url: "/api/v1/namespaces/default/configmaps/c",
			want: Info{UnderNamespace: true, Verb: "delete", Prefix: "api", Version: "v1", Namespace: "default", Resource: "configmaps", Name: "c"}},
		{name: "DELETE collection", method: "DELETE", url: "/api/v1/namespaces/default/configmaps",
			want: Info{UnderNamespace: true, Verb: "deletecollection", Prefix: "api", Version: "v1", Namespace: "default", Resource: "configmaps"}},
		{name: "DELETE collection across namespaces", method: "DELETE", url: "/apis/apps/v1/deployments",
			want: Info{Verb: "deletecollection", Prefix: "apis", Group: "apps", Version: "v1", Resource: "deployments"}},
		{name: "DELETE cluster-scoped named", method: "DELETE", url: "/api/v1/nodes/n1",
			want: Info{Verb: "delete", Prefix: "api", Version: "v1", Resource: "nodes", Name: "n1"}},
		{name: "DELETE ignores watch", method: "DELETE", url: "/api/v1/pods?watch=true",
			want: Info{Verb: "deletecollection", Prefix: "api", Version: "v1", Resource: "pods"}},
		{name: "POST ignores watch", method: "POST", url: "/api/v1/namespaces/default/pods?watch=1",
			want: Info{UnderNamespace: true, Verb: "create", Prefix: "api", Version: "v1", Namespace: "default", Resource: "pods"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			tc.want.IsResourceRequest = true
			got := parse(tc.method, tc.url)
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("Parse(%s %s)\n got %+v\nwant %+v", tc.method, tc.url, *got, tc.want)
			}
		})
	}
}

// TestParseNonResource checks that discovery and other paths are not
// resource requests and keep the lower-cased method as their verb, as
// kube-apiserver's RequestInfo does.
func TestParseNonResource(t *testing.T) {
	tests := []struct {
		method, url, verb string
	}{
		{"GET", "/", "get"},
		{"GET", "/api", "get"},
		{"GET", "/api/", "get"},
		{"GET", "/api/v1", "get"},
		{"GET", "/api/v1/", "get"},
		{"GET", "/apis", "get"},
		{"GET", "/apis/apps", "get"},
		{"GET", "/apis/apps/v1", "get"},
		{"GET", "/apis/apps/v1/", "get"},
		{"GET", "/apis/apiextensions.k8s.io/v1", "get"},
		{"GET", "/healthz", "get"},
		{"GET", "/healthz/ready", "get"},
		{"GET", "/livez", "get"},
		{"GET", "/version", "get"},
		{"GET", "/openapi/v2", "get"},
		{"GET", "/openapi/v3/api/v1", "get"},
		{"GET", "/metrics", "get"},
		{"HEAD", "/api", "head"},
		{"POST", "/api", "post"},
		{"PUT", "/apis/apps/v1", "put"},
		{"DELETE", "/apis", "delete"},
		{"GET", "/apix/v1/pods", "get"},
		{"GET", "/v1/pods", "get"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.url, func(t *testing.T) {
			got := parse(tc.method, tc.url)
			if got.IsResourceRequest {
				t.Errorf("Parse(%s %s) = %+v, want a non-resource request", tc.method, tc.url, *got)
			}
			if got.Verb != tc.verb {
				t.Errorf("Parse(%s %s).Verb = %q, want %q", tc.method, tc.url, got.Verb, tc.verb)
			}
			if got.Resource != "" || got.Name != "" || got.Namespace != "" || got.Subresource != "" {
				t.Errorf("Parse(%s %s) = %+v, want no resource fields", tc.method, tc.url, *got)
			}
		})
	}
}

// TestParseDiscoveryFields checks the prefix, group and version the discovery
// handler routes on.
func TestParseDiscoveryFields(t *testing.T) {
	tests := []struct {
		url                    string
		prefix, group, version string
	}{
		{"/api", "api", "", ""},
		{"/api/v1", "api", "", "v1"},
		{"/apis", "apis", "", ""},
		{"/apis/apps", "apis", "apps", ""},
		{"/apis/apps/v1", "apis", "apps", "v1"},
		{"/healthz", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			got := parse(http.MethodGet, tc.url)
			if got.Prefix != tc.prefix || got.Group != tc.group || got.Version != tc.version {
				t.Errorf("Parse(GET %s) prefix/group/version = %q/%q/%q, want %q/%q/%q",
					tc.url, got.Prefix, got.Group, got.Version, tc.prefix, tc.group, tc.version)
			}
		})
	}
}

// TestParseUnknownMethod: kube-apiserver leaves the verb empty for a method
// it has no verb for.
func TestParseUnknownMethod(t *testing.T) {
	got := parse(http.MethodOptions, "/api/v1/pods")
	if got.Verb != "" {
		t.Errorf("Verb = %q, want empty", got.Verb)
	}
}
