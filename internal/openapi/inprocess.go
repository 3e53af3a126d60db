package openapi

import (
	"bytes"
	"fmt"
	"net/http"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/openapi"
)

// InProcessV3 is a client (client-go's openapi.Client) of the /openapi/v3
// documents of the handler current returns (a NewHandler or NextHandler),
// for the server's own readers. Unlike the HTTP index, which names every
// document by the hash of its content and so makes them all, its paths
// name each document by a version given when the document was laid out,
// and a document is made only when its schema is asked for.
//
// kube's mutating admission policy plugin lists the paths at once and
// every 5 s, and reads the documents of the kinds its policies mutate
// only: over HTTP its first list made every document at each start.
func InProcessV3(current func() http.Handler) openapi.Client {
	return inProcessV3{current}
}

type inProcessV3 struct{ current func() http.Handler }

func (c inProcessV3) Paths() (map[string]openapi.GroupVersion, error) {
	h, ok := c.current().(*handler)
	if !ok {
		return nil, fmt.Errorf("no OpenAPI handler to read")
	}
	h.v3Once.Do(h.layOutV3)
	paths := make(map[string]openapi.GroupVersion, len(h.v3))
	for key, doc := range h.v3 {
		paths[key] = inProcessGroupVersion{key: key, doc: doc}
	}
	return paths, nil
}

type inProcessGroupVersion struct {
	key string
	doc *v3Document
}

func (g inProcessGroupVersion) Schema(contentType string) ([]byte, error) {
	switch contentType {
	case runtime.ContentTypeJSON:
		return bytes.Clone(g.doc.get().json), nil
	case runtime.ContentTypeProtobuf, mediaV3Protobuf:
		pb, err := g.doc.get().protobuf()
		return bytes.Clone(pb), err
	}
	return nil, fmt.Errorf("OpenAPI v3 schema of %s: unsupported content type %q", g.key, contentType)
}

// ServerRelativeURL changes when the document does, as the HTTP index's
// hash does: a document is laid out again only when its resources
// change.
func (g inProcessGroupVersion) ServerRelativeURL() string {
	return fmt.Sprintf("/openapi/v3/%s?layout=%d", g.key, g.doc.layout)
}

// layouts numbers the v3 documents laid out by this process.
var layouts atomic.Uint64
