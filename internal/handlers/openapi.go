package handlers

import (
	"crypto/sha512"
	"fmt"
	"net/http"
	"strings"

	"github.com/kapi-dev/kapi/internal/resources"
)

// openAPI serves /openapi/v3: the index of group-versions and, per
// group-version, a document of its paths and operations with the query
// parameters each accepts. kubectl reads it to learn that the server
// validates fields itself.
//
// TODO(openapi): add the component schemas (from k8s.io/api's generated
// definitions) and /openapi/v2, for kubectl explain and client-side apply.
type openAPI struct {
	index []byte
	docs  map[string][]byte // "api/v1", "apis/apps/v1", ...
}

func newOpenAPI(reg *resources.Registry, version string) *openAPI {
	o := &openAPI{docs: map[string][]byte{}}
	index := map[string]interface{}{}
	paths := map[string]interface{}{}
	for _, g := range reg.Groups() {
		for _, v := range g.Versions {
			key := "apis/" + g.Group + "/" + v.Version
			if g.Group == "" {
				key = "api/" + v.Version
			}
			doc := mustJSON(openAPIDocument(key, v.Resources, version))
			o.docs[key] = doc
			paths[key] = map[string]string{
				"serverRelativeURL": fmt.Sprintf("/openapi/v3/%s?hash=%X", key, sha512.Sum512(doc)),
			}
		}
	}
	index["paths"] = paths
	o.index = mustJSON(index)
	return o
}

func (o *openAPI) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.Trim(strings.TrimPrefix(r.URL.Path, "/openapi/v3"), "/")
	doc := o.index
	if path != "" {
		doc = o.docs[path]
	}
	if doc == nil {
		writeError(w, r, errNoRoute)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(doc)
}

func queryParam(name, description string) map[string]interface{} {
	return map[string]interface{}{
		"name": name, "in": "query", "description": description,
		"schema": map[string]string{"type": "string"}, "allowEmptyValue": true,
	}
}

func openAPIDocument(prefix string, infos []*resources.Info, version string) map[string]interface{} {
	writeParams := []interface{}{
		queryParam("dryRun", "When present, indicates that modifications should not be persisted."),
		queryParam("fieldManager", "A name associated with the actor or entity that is making these changes."),
		queryParam("fieldValidation", "How the server handles unknown and duplicate fields: Ignore, Warn or Strict."),
	}
	paths := map[string]interface{}{}
	for _, info := range infos {
		gvk := map[string]string{"group": info.Group, "version": info.Version, "kind": info.Kind}
		collection := "/" + prefix + "/" + info.Resource
		if info.Namespaced {
			collection = "/" + prefix + "/namespaces/{namespace}/" + info.Resource
		}
		op := func(action string) map[string]interface{} {
			return map[string]interface{}{
				"x-kubernetes-action":             action,
				"x-kubernetes-group-version-kind": gvk,
				"parameters":                      writeParams,
			}
		}
		item := map[string]interface{}{}
		for _, verb := range info.Verbs {
			switch verb {
			case "update":
				item["put"] = op("put")
			case "patch":
				item["patch"] = op("patch")
			case "create":
				paths[collection] = map[string]interface{}{"post": op("post")}
			}
		}
		if len(item) > 0 {
			paths[collection+"/{name}"] = item
		}
	}
	return map[string]interface{}{
		"openapi":    "3.0.0",
		"info":       map[string]string{"title": "Kubernetes", "version": version},
		"paths":      paths,
		"components": map[string]interface{}{},
	}
}
