package openapi

import (
	"bytes"
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/resources"
)

// The in-process client lists the documents without making any, gives
// each the bytes the HTTP handler serves, and names a document again only
// when its group-version's resources changed.
func TestInProcessV3(t *testing.T) {
	builtin := resources.NewBuiltin()
	var infos []*resources.Info
	for _, g := range builtin.Groups() {
		for _, v := range g.Versions {
			infos = append(infos, v.Resources...)
		}
	}
	current := NewHandler(builtin, "v1.37.2")
	client := InProcessV3(func() http.Handler { return current })
	paths, err := client.Paths()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"api/v1", "apis/apps/v1", "apis/rbac.authorization.k8s.io/v1", "api", "apis"} {
		if paths[key] == nil {
			t.Errorf("no path %q among %d", key, len(paths))
		}
	}
	for key, doc := range current.(*handler).v3 {
		if doc.doc != nil {
			t.Fatalf("listing the paths made the document of %s", key)
		}
	}
	schema, err := paths["apis/apps/v1"].Schema(runtime.ContentTypeJSON)
	if err != nil {
		t.Fatal(err)
	}
	if served := get(t, current, "/openapi/v3/apis/apps/v1", "").Body.Bytes(); !bytes.Equal(schema, served) {
		t.Errorf("the in-process schema of apps/v1 is not the served document (%d bytes, served %d)", len(schema), len(served))
	}
	if made := current.(*handler).v3["api/v1"].doc; made != nil {
		t.Errorf("reading apps/v1 made the document of api/v1")
	}
	if _, err := paths["api/v1"].Schema("application/yaml"); err == nil {
		t.Errorf("a schema in YAML: no error")
	}

	// A custom resource's group-version appears; the others keep their names.
	widgets := &resources.Info{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true,
		Verbs: []string{"get", "list", "create"}}
	current = NextHandler(current, resources.New(append(infos[:len(infos):len(infos)], widgets)), "v1.37.2")
	next, err := client.Paths()
	if err != nil {
		t.Fatal(err)
	}
	if next["apis/example.com/v1"] == nil {
		t.Fatalf("the custom resource's group-version is not listed after the registry changed")
	}
	if next["api/v1"].ServerRelativeURL() != paths["api/v1"].ServerRelativeURL() {
		t.Errorf("api/v1 renamed after an unrelated change: %s, was %s", next["api/v1"].ServerRelativeURL(), paths["api/v1"].ServerRelativeURL())
	}
	changed := *widgets
	changed.Verbs = append(changed.Verbs, "delete")
	current = NextHandler(current, resources.New(append(infos[:len(infos):len(infos)], &changed)), "v1.37.2")
	third, err := client.Paths()
	if err != nil {
		t.Fatal(err)
	}
	if third["apis/example.com/v1"].ServerRelativeURL() == next["apis/example.com/v1"].ServerRelativeURL() {
		t.Errorf("the changed custom resource's document kept its name %s", next["apis/example.com/v1"].ServerRelativeURL())
	}
	if schema, err := third["apis/example.com/v1"].Schema(runtime.ContentTypeJSON); err != nil || !bytes.Contains(schema, []byte(`"delete"`)) {
		t.Errorf("the changed custom resource's schema lacks its new verb (err %v)", err)
	}
}
