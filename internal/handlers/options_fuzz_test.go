package handlers

import (
	"net/http"
	"net/url"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
	"github.com/kapi-dev/kapi/internal/resources"
)

// FuzzListOptions feeds arbitrary selectors and resource-version options
// through option parsing and filtering: errors are fine, panics are not.
func FuzzListOptions(f *testing.F) {
	f.Add("app in (a,b),!x", "spec.nodeName=n1", "", "", "10", "")
	f.Add("a!=b", "status.phase!=Running,metadata.name=x", "5", "Exact", "0", "")
	f.Add("((", "spec.foo=1", "abc", "Bogus", "-1", "garbage")
	reg := resources.NewBuiltin()
	pods := registry.NewStore(reg.Lookup("", "v1", "pods"), nil)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "a"}},
		Spec:       corev1.PodSpec{NodeName: "n1"},
	}
	f.Fuzz(func(t *testing.T, labelSel, fieldSel, rv, match, limit, cont string) {
		q := url.Values{}
		for k, v := range map[string]string{"labelSelector": labelSel, "fieldSelector": fieldSel,
			"resourceVersion": rv, "resourceVersionMatch": match, "limit": limit, "continue": cont} {
			if v != "" {
				q.Set(k, v)
			}
		}
		r, err := http.NewRequest(http.MethodGet, "/api/v1/namespaces/ns/pods?"+q.Encode(), nil)
		if err != nil {
			return
		}
		req := request.Parse(r)
		opts, err := listOptions(r, req, pods)
		if err != nil {
			if apiStatus(err).Code < 400 || apiStatus(err).Code >= 500 {
				t.Fatalf("options error is not a client error: %v", err)
			}
			return
		}
		if _, err := listRequest(req, pods, opts); err != nil {
			return
		}
		if m := filterFor(req, pods, opts).Match; m != nil {
			m(pod)
		}
	})
}
