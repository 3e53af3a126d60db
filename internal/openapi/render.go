package openapi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"maps"
	"sort"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

const (
	v2RefPrefix = "#/definitions/"
	v3RefPrefix = "#/components/schemas/"
)

// refName is the definition a schema refers to, or "".
func refName(s *spec.Schema) string {
	ref := s.Ref.String()
	if ref == "" {
		return ""
	}
	return ref[strings.LastIndex(ref, "/")+1:]
}

// convert copies a definition into the form a document writes: v2 refers
// to #/definitions and has no defaults (kube-apiserver prunes them from
// /openapi/v2); v3 refers to #/components/schemas and wraps references
// that carry anything else (a description, a default) in allOf.
func convert(s *spec.Schema, v3 bool) spec.Schema {
	out := *s
	if name := refName(s); name != "" {
		if v3 {
			out.Ref = spec.MustCreateRef(v3RefPrefix + name)
			bare := spec.Schema{SchemaProps: spec.SchemaProps{Ref: out.Ref}}
			if out.Description != "" || out.Default != nil || len(out.Extensions) > 0 {
				out.Ref = spec.Ref{}
				out.AllOf = []spec.Schema{bare}
			}
		} else {
			out.Ref = spec.MustCreateRef(v2RefPrefix + name)
		}
	}
	if !v3 {
		out.Default = nil
	}
	if s.Items != nil && s.Items.Schema != nil {
		items := convert(s.Items.Schema, v3)
		out.Items = &spec.SchemaOrArray{Schema: &items}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		value := convert(s.AdditionalProperties.Schema, v3)
		out.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: &value}
	}
	if s.Properties != nil {
		out.Properties = make(map[string]spec.Schema, len(s.Properties))
		for name, p := range s.Properties {
			out.Properties[name] = convert(&p, v3)
		}
	}
	return out
}

// builtinRendered holds the JSON of each built-in definition as a v2 and
// a v3 document write it (keyed by renderKey). The built-in definitions are
// made once and never change, and a registry change (a custom resource
// definition added) makes every document again: marshaling the definitions
// was most of that.
var builtinRendered sync.Map

type renderKey struct {
	schema *spec.Schema
	v3     bool
}

// rendered is s as a document writes it: convert's result, marshaled once
// for a built-in definition. Custom resources' definitions change with
// their CRDs and are marshaled each time.
func rendered(s *spec.Schema, v3 bool) interface{} {
	if !builtin().holds(s) {
		return convert(s, v3)
	}
	key := renderKey{s, v3}
	if data, ok := builtinRendered.Load(key); ok {
		return data
	}
	data := json.RawMessage(mustJSON(convert(s, v3)))
	builtinRendered.Store(key, data)
	return data
}

// closure lists the definitions the named ones refer to, transitively,
// including themselves.
func closure(defs map[string]*spec.Schema, roots []string) []string {
	return closureOf(func(name string) *spec.Schema { return defs[name] }, roots)
}

// closureOf is closure over the definitions lookup names.
func closureOf(lookup func(name string) *spec.Schema, roots []string) []string {
	seen := map[string]bool{}
	var visit func(s *spec.Schema)
	var add func(name string)
	add = func(name string) {
		if name == "" || seen[name] || lookup(name) == nil {
			return
		}
		seen[name] = true
		visit(lookup(name))
	}
	visit = func(s *spec.Schema) {
		add(refName(s))
		if s.Items != nil && s.Items.Schema != nil {
			visit(s.Items.Schema)
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			visit(s.AdditionalProperties.Schema)
		}
		for _, p := range s.Properties {
			visit(&p)
		}
		for _, list := range [][]spec.Schema{s.AllOf, s.OneOf, s.AnyOf} {
			for i := range list {
				visit(&list[i])
			}
		}
	}
	for _, r := range roots {
		add(r)
	}
	out := make([]string, 0, len(seen))
	for name := range seen {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// referenced lists the definitions the operations of items name.
func referenced(items []*pathItem) []string {
	var out []string
	for _, it := range items {
		for _, o := range it.ops {
			if o.body != "" {
				out = append(out, o.body)
			}
			for _, r := range o.responses {
				if r.schema != "" {
					out = append(out, r.schema)
				}
			}
		}
	}
	return out
}

type object = map[string]interface{}

func gvkObject(o *operation) interface{} {
	return object{"group": o.gvk.Group, "version": o.gvk.Version, "kind": o.gvk.Kind}
}

// v3Document renders items as an OpenAPI v3 document with the schemas
// they refer to; gv, for a group-version's document, narrows the kinds
// of the types every group registers (DeleteOptions, WatchEvent) to the
// core group's and gv's, as kube-apiserver's documents do.
func (d *defSet) v3Document(items []*pathItem, version string, gv *schema.GroupVersion) object {
	schemaRef := func(name string) object {
		if name == "" {
			return object{"type": "string"}
		}
		return object{"$ref": v3RefPrefix + name}
	}
	params := func(ps []param) []interface{} {
		out := make([]interface{}, len(ps))
		for i, p := range ps {
			q := object{"name": p.name, "in": p.in, "description": p.description,
				"schema": object{"type": p.typ, "uniqueItems": true}}
			if p.required {
				q["required"] = true
			}
			out[i] = q
		}
		return out
	}
	paths := object{}
	for _, it := range items {
		item := object{}
		if len(it.params) > 0 {
			item["parameters"] = params(it.params)
		}
		for _, o := range it.ops {
			op := object{"description": o.description, "operationId": o.id, "tags": []string{o.tag}}
			if len(o.params) > 0 {
				op["parameters"] = params(o.params)
			}
			if o.body != "" {
				content := object{}
				for _, mt := range o.consumes {
					content[mt] = object{"schema": schemaRef(o.body)}
				}
				body := object{"content": content}
				if o.method != "delete" {
					body["required"] = true
				}
				op["requestBody"] = body
			}
			responses := object{"401": object{"description": "Unauthorized"}}
			for _, r := range o.responses {
				content := object{}
				for _, mt := range o.produces {
					content[mt] = object{"schema": schemaRef(r.schema)}
				}
				responses[strconv.Itoa(r.code)] = object{"description": r.description, "content": content}
			}
			op["responses"] = responses
			if o.action != "" {
				op[extAction] = o.action
			}
			if o.gvk != nil {
				op[extGVK] = gvkObject(o)
			}
			item[o.method] = op
		}
		paths[it.path] = item
	}
	schemas := object{}
	for _, name := range closure(d.v2, referenced(items)) {
		s := d.v2[name]
		if v3, ok := d.v3[name]; ok {
			s = v3
		}
		schemas[name] = rendered(s, true)
		if gv != nil && len(kindsOf(s)) > 1 {
			schemas[name] = narrowKinds(schemas[name], gv)
		}
	}
	components := object{"securitySchemes": object{"BearerToken": object{
		"type": "apiKey", "description": "Bearer Token authentication", "name": "authorization", "in": "header",
	}}}
	if len(schemas) > 0 {
		components["schemas"] = schemas
	}
	return object{
		"openapi":    "3.0.0",
		"info":       object{"title": "Kubernetes", "version": infoVersion(version)},
		"paths":      paths,
		"components": components,
	}
}

// kindsOf lists the kinds a definition is registered under.
func kindsOf(s *spec.Schema) []interface{} {
	kinds, _ := s.Extensions[extGVK].([]interface{})
	return kinds
}

// narrowKinds keeps, of a rendered definition registered under several
// kinds, those of the core group and of gv.
func narrowKinds(def interface{}, gv *schema.GroupVersion) interface{} {
	m, ok := def.(object)
	if raw, isRaw := def.(json.RawMessage); isRaw {
		// A definition rendered once for every document.
		ok = json.Unmarshal(raw, &m) == nil
	}
	if !ok {
		return def
	}
	kinds, _ := m[extGVK].([]interface{})
	var kept []interface{}
	for _, k := range kinds {
		gvk, _ := k.(map[string]interface{})
		group, _ := gvk["group"].(string)
		version, _ := gvk["version"].(string)
		if (group == "" && version == "v1") || (group == gv.Group && version == gv.Version) {
			kept = append(kept, k)
		}
	}
	if len(kept) == 0 {
		return def
	}
	out := maps.Clone(m)
	out[extGVK] = kept
	return out
}

// v2Document renders items as one swagger 2.0 document with the
// definitions they refer to.
// v2Document is the /openapi/v2 document of items and of the custom
// resources' documents, merged as kube-apiserver merges apiextensions'
// into its own: their paths and shared parameters as built, and the
// definitions they name (kapi's own where it has them).
func (d *defSet) v2Document(items []*pathItem, custom []*spec.Swagger, version string) object {
	params := func(ps []param) []interface{} {
		out := make([]interface{}, len(ps))
		for i, p := range ps {
			q := object{"name": p.name, "in": p.in, "description": p.description, "type": p.typ, "uniqueItems": true}
			if p.required {
				q["required"] = true
			}
			out[i] = q
		}
		return out
	}
	// Like kube-apiserver, the v2 document names each distinct parameter
	// once, under "parameters", and operations refer to it.
	shared := object{}
	share := func(ps []interface{}) []interface{} {
		out := make([]interface{}, len(ps))
		for i, p := range ps {
			b := mustJSON(p)
			sum := sha256.Sum256(b)
			key := p.(object)["name"].(string) + "-" + strings.TrimLeft(base64.URLEncoding.EncodeToString(sum[:]), "-_")[:8]
			shared[key] = json.RawMessage(b)
			out[i] = object{"$ref": "#/parameters/" + key}
		}
		return out
	}
	paths := object{}
	for _, it := range items {
		item := object{}
		if len(it.params) > 0 {
			item["parameters"] = share(params(it.params))
		}
		for _, o := range it.ops {
			op := object{
				"description": o.description, "operationId": o.id, "tags": []string{o.tag},
				"produces": o.produces, "schemes": []string{"https"},
			}
			ps := params(o.params)
			if o.body != "" {
				body := object{"name": "body", "in": "body", "schema": object{"$ref": v2RefPrefix + o.body}}
				if o.method != "delete" {
					body["required"] = true
				}
				ps = append([]interface{}{body}, ps...)
			}
			switch {
			case o.consumes == nil:
				op["consumes"] = []string{"*/*"}
			case len(o.consumes) > 0:
				op["consumes"] = o.consumes
			}
			if len(ps) > 0 {
				op["parameters"] = share(ps)
			}
			responses := object{"401": object{"description": "Unauthorized"}}
			for _, r := range o.responses {
				schema := object{"type": "string"}
				if r.schema != "" {
					schema = object{"$ref": v2RefPrefix + r.schema}
				}
				responses[strconv.Itoa(r.code)] = object{"description": r.description, "schema": schema}
			}
			op["responses"] = responses
			if o.action != "" {
				op[extAction] = o.action
			}
			if o.gvk != nil {
				op[extGVK] = gvkObject(o)
			}
			item[o.method] = op
		}
		paths[it.path] = item
	}
	roots := referenced(items)
	customDefs := map[string]spec.Schema{}
	for _, doc := range custom {
		for path, item := range doc.Paths.Paths {
			paths[path] = item
		}
		for name, p := range doc.Parameters {
			shared[name] = p
		}
		for name, def := range doc.Definitions {
			roots = append(roots, name)
			customDefs[name] = def
		}
	}
	definitions := object{}
	for _, name := range closure(d.v2, roots) {
		definitions[name] = rendered(d.v2[name], false)
	}
	for name, def := range customDefs {
		if _, ok := definitions[name]; !ok {
			definitions[name] = def
		}
	}
	return object{
		"swagger":     "2.0",
		"info":        object{"title": "Kubernetes", "version": infoVersion(version)},
		"paths":       paths,
		"definitions": definitions,
		"parameters":  shared,
		"securityDefinitions": object{"BearerToken": object{
			"type": "apiKey", "description": "Bearer Token authentication", "name": "authorization", "in": "header",
		}},
		"security": []interface{}{object{"BearerToken": []string{}}},
	}
}

func mustJSON(v interface{}) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// infoVersion is the version a document's info names: the release's
// major.minor, as kube-apiserver names the version it emulates ("1.37"),
// from its git version ("v1.37.2").
func infoVersion(gitVersion string) string {
	parts := strings.SplitN(strings.TrimPrefix(gitVersion, "v"), ".", 3)
	if len(parts) < 2 {
		return gitVersion
	}
	return parts[0] + "." + parts[1]
}
