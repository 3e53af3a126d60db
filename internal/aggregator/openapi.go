package aggregator

import (
	"net/http"
	"strings"
)

// openAPIV3Prefix is where OpenAPI v3 documents are served, one per
// group-version.
const openAPIV3Prefix = "/openapi/v3"

// v3Index is the /openapi/v3 document: each group-version's document.
type v3Index struct {
	Paths map[string]v3Path `json:"paths"`
}

type v3Path struct {
	ServerRelativeURL string `json:"serverRelativeURL"`
}

// serveOpenAPIV3 adds the available aggregated group-versions to the
// /openapi/v3 index, each pointing at the document its server publishes,
// and passes requests for those documents to their server, as
// kube-aggregator publishes aggregated APIs' OpenAPI.
func (a *Aggregator) serveOpenAPIV3(w http.ResponseWriter, r *http.Request, local http.Handler) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	if path != openAPIV3Prefix {
		gv, isGroup := strings.CutPrefix(path, openAPIV3Prefix+"/apis/")
		group, version, _ := strings.Cut(gv, "/")
		if svc := a.remoteAPIService(group, version); isGroup && svc != nil {
			a.proxy(w, r, svc)
			return
		}
		local.ServeHTTP(w, r)
		return
	}
	available := a.availableRemote()
	if len(available) == 0 {
		local.ServeHTTP(w, r)
		return
	}
	doc := record(local, r)
	if doc.code != http.StatusOK {
		doc.replay(w)
		return
	}
	err := rewrite(doc, func(index *v3Index) {
		for _, svc := range available {
			key := "apis/" + svc.Spec.Group + "/" + svc.Spec.Version
			var remote v3Index
			if err := a.getJSON(r.Context(), svc, openAPIV3Prefix, &remote); err != nil {
				continue // kube-aggregator leaves out what it cannot fetch
			}
			if p, ok := remote.Paths[key]; ok {
				index.Paths[key] = p
			}
		}
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	doc.replay(w)
}
