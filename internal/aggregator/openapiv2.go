package aggregator

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/internal/openapi"
)

// mergedV2 caches /openapi/v2 merged with the aggregated servers'
// documents: kapi's changes with its registry, theirs are fetched again
// when an APIService changes or after a while.
type mergedV2 struct {
	mu  sync.Mutex
	key string // kapi's entity tag and the APIServices' versions
	at  time.Time
	doc *openapi.V2Document
}

// serveOpenAPIV2 serves /openapi/v2 with the paths and definitions of the
// available aggregated group-versions added, as kube-aggregator merges
// them; without any, kapi's own document.
func (a *Aggregator) serveOpenAPIV2(w http.ResponseWriter, r *http.Request, local http.Handler) {
	available := a.availableRemote()
	if len(available) == 0 {
		local.ServeHTTP(w, r)
		return
	}
	asJSON := r.Clone(r.Context())
	asJSON.Header = r.Header.Clone()
	asJSON.Header.Set("Accept", "application/json")
	asJSON.Header.Del("If-None-Match")
	asJSON.Header.Del("If-Modified-Since")
	asJSON.Header.Del("Accept-Encoding") // to be merged, not compressed
	own := record(local, asJSON)
	if own.code != http.StatusOK {
		own.replay(w)
		return
	}
	key := own.header.Get("Etag")
	for _, svc := range available {
		key += "/" + svc.Name + "@" + svc.ResourceVersion
	}
	a.v2.mu.Lock()
	defer a.v2.mu.Unlock()
	if a.v2.doc == nil || a.v2.key != key || time.Since(a.v2.at) > discoveryTTL {
		merged, err := a.mergeV2(r, own.body, available)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		a.v2.doc, a.v2.key, a.v2.at = openapi.NewV2Document(merged), key, time.Now()
	}
	a.v2.doc.Serve(w, r)
}

// mergeV2 adds to kapi's swagger document each aggregated server's paths
// under its group-version and the definitions kapi does not have.
func (a *Aggregator) mergeV2(r *http.Request, own []byte, available []*apiregistrationv1.APIService) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(own, &doc); err != nil {
		return nil, err
	}
	paths, definitions := map[string]json.RawMessage{}, map[string]json.RawMessage{}
	json.Unmarshal(doc["paths"], &paths)
	json.Unmarshal(doc["definitions"], &definitions)
	for _, svc := range available {
		var remote struct {
			Paths       map[string]json.RawMessage `json:"paths"`
			Definitions map[string]json.RawMessage `json:"definitions"`
		}
		if err := a.getJSON(r.Context(), svc, "/openapi/v2", &remote); err != nil {
			continue // kube-aggregator leaves out what it cannot fetch
		}
		prefix := "/apis/" + svc.Spec.Group + "/" + svc.Spec.Version + "/"
		for p, item := range remote.Paths {
			if strings.HasPrefix(p+"/", prefix) {
				paths[p] = item
			}
		}
		for name, def := range remote.Definitions {
			if _, ok := definitions[name]; !ok {
				definitions[name] = def
			}
		}
	}
	var err error
	if doc["paths"], err = json.Marshal(paths); err != nil {
		return nil, err
	}
	if doc["definitions"], err = json.Marshal(definitions); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}
