package handlers

import (
	"net/http"
	"testing"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
	"github.com/kapi-dev/kapi/internal/resources"
)

// TestListSemanticsTable walks the list table of SPEC V3/V4: every
// combination of resourceVersion, resourceVersionMatch, limit and continue,
// and the semantics (or the error code) kube-apiserver gives it.
func TestListSemanticsTable(t *testing.T) {
	token := "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NSwic3RhcnQiOiJucy9hIn0" // rv 5, start ns/a
	type want struct {
		code        int32 // 0: accepted
		consistency cache.Consistency
		revision    int64
		continued   bool
		limit       int
	}
	cases := []struct {
		query string
		want  want
	}{
		// resourceVersion unset: Most Recent, with or without limit.
		{"", want{consistency: cache.Consistent}},
		{"limit=10", want{consistency: cache.Consistent, limit: 10}},
		{"resourceVersionMatch=Exact", want{code: 422}},
		{"resourceVersionMatch=NotOlderThan", want{code: 422}},
		{"resourceVersionMatch=Exact&limit=10", want{code: 422}},
		// resourceVersion=0: Any, read whole whatever the limit.
		{"resourceVersion=0", want{consistency: cache.Any}},
		{"resourceVersion=0&limit=10", want{consistency: cache.Any}},
		{"resourceVersion=0&resourceVersionMatch=NotOlderThan", want{consistency: cache.Any}},
		{"resourceVersion=0&resourceVersionMatch=NotOlderThan&limit=10", want{consistency: cache.Any}},
		{"resourceVersion=0&resourceVersionMatch=Exact", want{code: 422}},
		// resourceVersion=N: Not older than, except a paged list with no
		// match, which is Exact.
		{"resourceVersion=7", want{consistency: cache.NotOlderThan, revision: 7}},
		{"resourceVersion=7&limit=10", want{consistency: cache.Exact, revision: 7, limit: 10}},
		{"resourceVersion=7&resourceVersionMatch=NotOlderThan", want{consistency: cache.NotOlderThan, revision: 7}},
		{"resourceVersion=7&resourceVersionMatch=NotOlderThan&limit=10", want{consistency: cache.NotOlderThan, revision: 7, limit: 10}},
		{"resourceVersion=7&resourceVersionMatch=Exact", want{consistency: cache.Exact, revision: 7}},
		{"resourceVersion=7&resourceVersionMatch=Exact&limit=10", want{consistency: cache.Exact, revision: 7, limit: 10}},
		{"resourceVersion=7&resourceVersionMatch=Bogus", want{code: 422}},
		{"resourceVersion=abc", want{code: 400}},
		// continue: Continue Token, Exact at the token's revision.
		{"continue=" + token + "&limit=10", want{continued: true, limit: 10}},
		{"continue=" + token + "&resourceVersion=0&limit=10", want{continued: true}},
		{"continue=" + token + "&resourceVersion=7", want{code: 400}},
		{"continue=" + token + "&resourceVersionMatch=Exact&resourceVersion=7", want{code: 422}},
		{"continue=garbage", want{code: 400}},
		// sendInitialEvents belongs to watches.
		{"sendInitialEvents=true&resourceVersionMatch=NotOlderThan", want{code: 422}},
	}
	store := registry.NewStore(resources.NewBuiltin().Lookup("", "v1", "configmaps"), nil)
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodGet, "/api/v1/namespaces/ns/configmaps?"+tc.query, nil)
			req := request.Parse(r)
			opts, err := listOptions(r, req, store)
			var lr cache.ListRequest
			if err == nil {
				lr, err = listRequest(req, store, opts)
			}
			if tc.want.code != 0 {
				if err == nil || apiStatus(err).Code != tc.want.code {
					t.Fatalf("got %v, want a %d", err, tc.want.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if lr.Limit != tc.want.limit {
				t.Fatalf("limit %d, want %d", lr.Limit, tc.want.limit)
			}
			if tc.want.continued {
				if lr.Continue == nil || lr.Continue.Revision != 5 {
					t.Fatalf("continue = %+v", lr.Continue)
				}
				return
			}
			if lr.Continue != nil || lr.Consistency != tc.want.consistency || lr.Revision != tc.want.revision {
				t.Fatalf("got consistency %d revision %d, want %d %d", lr.Consistency, lr.Revision, tc.want.consistency, tc.want.revision)
			}
		})
	}
}
