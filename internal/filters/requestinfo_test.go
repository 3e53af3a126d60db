package filters

import (
	"net/http/httptest"
	"testing"

	"github.com/kapi-dev/kapi/internal/request"
)

// TestRequestedName: the name kube's request info gives a request, which
// authorisation and audit see: the path's, or, for a list or watch, the
// one a field selector requires exactly, when it is a valid name.
func TestRequestedName(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"/api/v1/namespaces/ns/configmaps/path-name", "path-name"},
		{"/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dx", "x"},
		{"/api/v1/namespaces/ns/configmaps?watch=1&fieldSelector=metadata.name%3D%3Dx", "x"},
		{"/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dx,metadata.namespace%3Dns", "x"},
		{"/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name!%3Dx", ""},
		{"/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3D", ""},
		{"/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3D..", ""},
		{"/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Da%25b", ""},
		{"/api/v1/namespaces/ns/configmaps?fieldSelector=spec.x%3Dy", ""},
		{"/api/v1/namespaces/ns/configmaps?fieldSelector=(bad", ""},
		// The deprecated /watch/ prefix reads no list options.
		{"/api/v1/watch/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dx", ""},
	} {
		r := httptest.NewRequest("GET", tc.url, nil)
		if got := kubeRequestInfo(r, request.Parse(r)).Name; got != tc.want {
			t.Errorf("%s: name %q, want %q", tc.url, got, tc.want)
		}
	}
	r := httptest.NewRequest("DELETE", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dx", nil)
	if got := kubeRequestInfo(r, request.Parse(r)).Name; got != "" {
		t.Errorf("a deletecollection by name: name %q, want none", got)
	}
}
