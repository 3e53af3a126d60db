package openapi

import (
	"reflect"
	"sort"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/resources"
)

// The paths of a document are first described in the neutral form below,
// then rendered as OpenAPI v2 (one document for everything) and v3 (one
// per group-version).

type param struct {
	name, in, description, typ string
	required                   bool
}

type response struct {
	code        int
	description string
	schema      string // definition name; "" for a string body
}

type operation struct {
	method      string // get, put, post, patch, delete
	id          string
	description string
	action      string // x-kubernetes-action; "" for discovery
	gvk         *schema.GroupVersionKind
	params      []param
	body        string // request body definition name
	// consumes are the request body's media types: "*/*" when nil, none
	// when noConsumes.
	consumes  []string
	produces  []string
	responses []response
	tag       string
}

type pathItem struct {
	path   string
	params []param
	ops    []*operation
}

// noConsumes is the consumes of an operation whose description names no
// media type for its request.
var noConsumes = []string{}

// Media types kapi reads and writes.
var (
	typedMediaTypes   = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf", "application/cbor"}
	untypedMediaTypes = []string{"application/json", "application/yaml", "application/cbor"}
	watchMediaTypes   = []string{"application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch", "application/cbor-seq"}
	patchMediaTypes   = []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml", "application/apply-patch+cbor"}
	// untypedPatchMediaTypes are those of custom resources.
	untypedPatchMediaTypes = []string{"application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml", "application/apply-patch+cbor"}
)

var (
	prettyParam    = param{name: "pretty", in: "query", typ: "string", description: "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)."}
	namespaceParam = param{name: "namespace", in: "path", typ: "string", required: true, description: "object name and auth scope, such as for teams and projects"}
)

// optionParams are the query parameters of an options type, as
// kube-apiserver derives them: one per scalar (or list of scalars) field,
// described by the type's documentation.
func optionParams(obj interface{}, exclude ...string) []param {
	t := reflect.TypeOf(obj).Elem()
	doc := docs(t)
	var out []param
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := jsonTag(f)
		if f.Anonymous || name == "" || name == "-" || contains(exclude, name) {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		var typ string
		switch ft.Kind() {
		case reflect.String:
			typ = "string"
		case reflect.Bool:
			typ = "boolean"
		case reflect.Int, reflect.Int32, reflect.Int64:
			typ = "integer"
		default:
			continue // preconditions
		}
		out = append(out, param{name: name, in: "query", typ: typ, description: doc[name]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

var (
	listParams             = optionParams(&metav1.ListOptions{})
	deleteCollectionParams = sortedParams(append(optionParams(&metav1.ListOptions{}, "watch", "allowWatchBookmarks"), optionParams(&metav1.DeleteOptions{})...))
	deleteParams           = optionParams(&metav1.DeleteOptions{})
	createParams           = optionParams(&metav1.CreateOptions{})
	updateParams           = optionParams(&metav1.UpdateOptions{})
	patchParams            = optionParams(&metav1.PatchOptions{})
)

// sortedParams sorts parameters as kube-apiserver does: by name, then by
// where they go (a proxy's "path" is both a path and a query parameter).
func sortedParams(p []param) []param {
	sort.SliceStable(p, func(i, j int) bool {
		if p[i].name != p[j].name {
			return p[i].name < p[j].name
		}
		return p[i].in < p[j].in
	})
	return p
}

// groupTag is kube-apiserver's name for a group in tags and operation IDs:
// "core", "apps", "rbacAuthorization", "flowcontrolApiserver".
func groupTag(group string) string {
	if group == "" {
		return "core"
	}
	parts := strings.Split(strings.TrimSuffix(group, ".k8s.io"), ".")
	for i := 1; i < len(parts); i++ {
		parts[i] = upperFirst(parts[i])
	}
	return strings.Join(parts, "")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// article is what kube-apiserver puts before a kind in descriptions.
func article(kind string) string {
	if strings.HasSuffix(kind, "s") && !strings.HasSuffix(kind, "ss") {
		return ""
	}
	if strings.ContainsRune("AEIOU", rune(kind[0])) {
		return "an "
	}
	return "a "
}

// gvPrefix is the URL path of a group-version: /api/v1 or /apis/<group>/<version>.
func gvPrefix(group, version string) string {
	if group == "" {
		return "/api/" + version
	}
	return "/apis/" + group + "/" + version
}

// groupVersionPaths describes the paths of one group-version's resources,
// with defName naming the definition of a kind.
func groupVersionPaths(group, version string, infos []*resources.Info, defName func(schema.GroupVersionKind) string) []*pathItem {
	prefix := gvPrefix(group, version)
	tag := groupTag(group) + "_" + version
	idPrefix := upperFirst(groupTag(group)) + upperFirst(version)
	items := map[string]*pathItem{}
	item := func(path string, params ...param) *pathItem {
		if it, ok := items[path]; ok {
			return it
		}
		it := &pathItem{path: path, params: params}
		items[path] = it
		return it
	}
	typedOK := func(name string) []response { return []response{{200, "OK", name}} }

	// apiextensions' documents of custom resources have neither the
	// group-version's discovery path nor the deprecated watch paths.
	custom := len(infos) > 0 && !codecs.Scheme.Recognizes(infos[0].GroupVersionKind())
	if !custom {
		item(prefix + "/").ops = []*operation{{
			method: "get", id: "get" + idPrefix + "APIResources", description: "get available resources",
			consumes: discoveryMediaTypes, produces: discoveryMediaTypes, responses: typedOK("io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList"), tag: tag,
		}}
	}

	for _, info := range infos {
		gvk := info.GroupVersionKind()
		kind := info.Kind
		obj := defName(gvk)
		list := defName(info.ListGroupVersionKind())
		if obj == "" || (list == "" && contains(info.Verbs, "list")) {
			continue
		}
		produces, patches := typedMediaTypes, patchMediaTypes
		if !codecs.Scheme.Recognizes(gvk) {
			// Strategic merge and protobuf need a Go type.
			produces, patches = untypedMediaTypes, untypedPatchMediaTypes
		}
		listProduces := append(append([]string(nil), produces...), watchMediaTypes...)
		ns, scope := "", ""
		var nsParams []param
		if info.Namespaced {
			ns, scope = "/namespaces/{namespace}", "Namespaced"
			nsParams = []param{namespaceParam}
		}
		nameParam := param{name: "name", in: "path", typ: "string", required: true, description: "name of the " + kind}
		collection := prefix + ns + "/" + info.Resource
		single := collection + "/{name}"
		op := func(method, action, id, description string, params []param) *operation {
			g := gvk
			return &operation{method: method, action: action, id: id, description: description, gvk: &g, params: params, produces: produces, tag: tag}
		}
		deleted := "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
		if info.ReturnsDeletedObject && !info.DeleteDocumentedAsStatus {
			deleted = obj
		}
		has := func(verb string) bool { return contains(info.Verbs, verb) }

		if has("list") {
			described := "list objects of kind " + kind
			if has("watch") {
				described = "list or watch objects of kind " + kind
			}
			o := op("get", "list", "list"+idPrefix+scope+kind, described, listParams)
			o.produces, o.responses = listProduces, typedOK(list)
			it := item(collection, append(nsParams, prettyParam)...)
			it.ops = append(it.ops, o)
			if info.Namespaced {
				o := op("get", "list", "list"+idPrefix+kind+"ForAllNamespaces", described, listParams)
				o.produces, o.responses = listProduces, typedOK(list)
				it := item(prefix+"/"+info.Resource, prettyParam)
				it.ops = append(it.ops, o)
			}
		}
		if has("create") {
			o := op("post", "post", "create"+idPrefix+scope+kind, "create "+article(kind)+kind, createParams)
			o.body, o.consumes = obj, []string{"*/*"}
			o.responses = []response{{200, "OK", obj}, {201, "Created", obj}, {202, "Accepted", obj}}
			it := item(collection, append(nsParams, prettyParam)...)
			it.ops = append(it.ops, o)
		}
		if has("deletecollection") {
			o := op("delete", "deletecollection", "delete"+idPrefix+"Collection"+scope+kind, "delete collection of "+kind, deleteCollectionParams)
			o.body, o.consumes = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", []string{"*/*"}
			o.responses = typedOK("io.k8s.apimachinery.pkg.apis.meta.v1.Status")
			it := item(collection, append(nsParams, prettyParam)...)
			it.ops = append(it.ops, o)
		}
		singleParams := append([]param{nameParam}, append(nsParams, prettyParam)...)
		if has("get") {
			o := op("get", "get", "read"+idPrefix+scope+kind, "read the specified "+kind, nil)
			o.responses = typedOK(obj)
			it := item(single, singleParams...)
			it.ops = append(it.ops, o)
		}
		if has("update") {
			o := op("put", "put", "replace"+idPrefix+scope+kind, "replace the specified "+kind, updateParams)
			o.body, o.consumes = obj, []string{"*/*"}
			o.responses = []response{{200, "OK", obj}, {201, "Created", obj}}
			it := item(single, singleParams...)
			it.ops = append(it.ops, o)
		}
		if has("patch") {
			o := op("patch", "patch", "patch"+idPrefix+scope+kind, "partially update the specified "+kind, patchParams)
			o.body, o.consumes = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch", patches
			o.responses = []response{{200, "OK", obj}, {201, "Created", obj}}
			it := item(single, singleParams...)
			it.ops = append(it.ops, o)
		}
		if has("delete") {
			o := op("delete", "delete", "delete"+idPrefix+scope+kind, "delete "+article(kind)+kind, deleteParams)
			o.body, o.consumes = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", []string{"*/*"}
			o.responses = []response{{200, "OK", deleted}, {202, "Accepted", deleted}}
			it := item(single, singleParams...)
			it.ops = append(it.ops, o)
		}
		if has("watch") && !custom {
			watchEvent := "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent"
			watch := func(path, action, id, description string, params ...param) {
				o := op("get", action, id, description, nil)
				o.produces, o.responses = listProduces, typedOK(watchEvent)
				it := item(path, sortedParams(append(append(append([]param(nil), listParams...), params...), prettyParam))...)
				it.ops = append(it.ops, o)
			}
			single := "watch changes to an object of kind " + kind + ". deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter."
			list := "watch individual changes to a list of " + kind + ". deprecated: use the 'watch' parameter with a list operation instead."
			watch(prefix+"/watch"+ns+"/"+info.Resource, "watchlist", "watch"+idPrefix+scope+kind+"List", list, nsParams...)
			watch(prefix+"/watch"+ns+"/"+info.Resource+"/{name}", "watch", "watch"+idPrefix+scope+kind, single, append([]param{nameParam}, nsParams...)...)
			if info.Namespaced {
				watch(prefix+"/watch/"+info.Resource, "watchlist", "watch"+idPrefix+kind+"ListForAllNamespaces", list)
			}
		}

		for i := range info.Subresources {
			sub := &info.Subresources[i]
			if !sub.Served {
				continue
			}
			subGVK := subresourceGVK(info, sub)
			if c, ok := connecters[subGVK]; ok {
				description := sub.Name + " of " + kind
				for _, it := range connectPaths(single+"/"+sub.Name, idPrefix, scope+kind+upperFirst(sub.Name), description, subGVK, c, nsParams, tag) {
					items[it.path] = it
				}
				continue
			}
			if options, ok := streamedReads[schema.GroupResource{Group: info.Group, Resource: info.Resource + "/" + sub.Name}]; ok {
				obj, err := codecs.Scheme.New(options)
				if err != nil {
					continue
				}
				o := op("get", "get", "read"+idPrefix+scope+kind+upperFirst(sub.Name), "read "+sub.Name+" of the specified "+kind, nil)
				o.consumes, o.produces, o.responses = []string{"*/*"}, streamedProduces, []response{{200, "OK", ""}}
				it := item(single+"/"+sub.Name, sortedParams(append(append([]param{}, singleParams...), optionParams(obj)...))...)
				it.ops = append(it.ops, o)
				continue
			}
			subObj := defName(subGVK)
			if subObj == "" {
				continue
			}
			path := single + "/" + sub.Name
			suffix := upperFirst(sub.Name)
			subOp := func(method, action, id, description string, params []param) *operation {
				o := op(method, action, id, description, params)
				o.gvk = &subGVK
				return o
			}
			subHas := func(verb string) bool { return contains(sub.Verbs, verb) }
			// The name is described as the sub-resource's kind's (a
			// Scale's, a Binding's), as kube-apiserver's routes have it.
			subName := nameParam
			subName.description = "name of the " + subGVK.Kind
			it := item(path, append([]param{subName}, singleParams[1:]...)...)
			if subHas("get") {
				o := subOp("get", "get", "read"+idPrefix+scope+kind+suffix, "read "+sub.Name+" of the specified "+kind, nil)
				o.responses = typedOK(subObj)
				it.ops = append(it.ops, o)
			}
			if subHas("update") {
				o := subOp("put", "put", "replace"+idPrefix+scope+kind+suffix, "replace "+sub.Name+" of the specified "+kind, updateParams)
				o.body, o.consumes = subObj, []string{"*/*"}
				o.responses = []response{{200, "OK", subObj}, {201, "Created", subObj}}
				it.ops = append(it.ops, o)
			}
			if subHas("patch") {
				o := subOp("patch", "patch", "patch"+idPrefix+scope+kind+suffix, "partially update "+sub.Name+" of the specified "+kind, patchParams)
				o.body, o.consumes = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch", patches
				o.responses = []response{{200, "OK", subObj}, {201, "Created", subObj}}
				it.ops = append(it.ops, o)
			}
			if subHas("create") {
				o := subOp("post", "post", "create"+idPrefix+scope+kind+suffix, "create "+sub.Name+" of "+article(kind)+kind, createParams)
				o.body, o.consumes = subObj, []string{"*/*"}
				o.responses = []response{{200, "OK", subObj}, {201, "Created", subObj}, {202, "Accepted", subObj}}
				it.ops = append(it.ops, o)
			}
		}
	}

	out := make([]*pathItem, 0, len(items))
	for _, it := range items {
		if len(it.ops) > 0 {
			hoistSharedParams(it)
			out = append(out, it)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// streamedReads are the sub-resources a GET reads as a stream of bytes
// (a pod's log), by the options kind they take from the query, as
// kube-apiserver describes them: its options as parameters, and an answer
// that is a string, in text or any of the API's media types.
var streamedReads = map[schema.GroupResource]schema.GroupVersionKind{
	{Resource: "pods/log"}: {Version: "v1", Kind: "PodLogOptions"},
}

var streamedProduces = []string{"text/plain", "application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}

// connecter describes a connect sub-resource as kube-apiserver's
// connecter for it does: the HTTP methods it takes, and whether it also
// serves <path>/{path}, the rest of the URL going to the options' "path".
type connecter struct {
	methods []string
	subpath bool
}

var (
	streamMethods = []string{"get", "post"}
	proxyMethods  = []string{"get", "post", "put", "patch", "delete", "head", "options"}
)

// connecters are the connect sub-resources, by the options kind they take:
// kube-apiserver describes them by that kind, not by their verbs.
var connecters = map[schema.GroupVersionKind]connecter{
	{Version: "v1", Kind: "PodAttachOptions"}:      {methods: streamMethods},
	{Version: "v1", Kind: "PodExecOptions"}:        {methods: streamMethods},
	{Version: "v1", Kind: "PodPortForwardOptions"}: {methods: streamMethods},
	{Version: "v1", Kind: "PodProxyOptions"}:       {methods: proxyMethods, subpath: true},
	{Version: "v1", Kind: "ServiceProxyOptions"}:   {methods: proxyMethods, subpath: true},
	{Version: "v1", Kind: "NodeProxyOptions"}:      {methods: proxyMethods, subpath: true},
}

// connectPaths describes a connect sub-resource at path: per method an
// operation connect<idPrefix><Method><idName> answering any bytes. Its
// parameters (the options' fields, read from the query) are the path's,
// the name described as the options kind's, as kube-apiserver has them.
func connectPaths(path, idPrefix, idName, description string, gvk schema.GroupVersionKind, c connecter, nsParams []param, tag string) []*pathItem {
	obj, err := codecs.Scheme.New(gvk)
	if err != nil {
		return nil
	}
	nameParam := param{name: "name", in: "path", typ: "string", required: true, description: "name of the " + gvk.Kind}
	params := append(append([]param{nameParam}, nsParams...), optionParams(obj)...)
	item := func(path, withPath string, extra ...param) *pathItem {
		it := &pathItem{path: path, params: sortedParams(append(append([]param(nil), params...), extra...))}
		for _, m := range c.methods {
			g := gvk
			it.ops = append(it.ops, &operation{
				method: m, action: "connect", gvk: &g, tag: tag,
				id:          "connect" + idPrefix + upperFirst(m) + idName + withPath,
				description: "connect " + strings.ToUpper(m) + " requests to " + description,
				produces:    []string{"*/*"}, responses: []response{{200, "OK", ""}},
			})
		}
		return it
	}
	out := []*pathItem{item(path, "")}
	if c.subpath {
		out = append(out, item(path+"/{path}", "WithPath",
			param{name: "path", in: "path", typ: "string", required: true, description: "path to the resource"}))
	}
	return out
}

// hoistSharedParams moves the query parameters every operation of a path
// shares to the path, as kube-apiserver's documents do. A PATCH keeps its
// own: clients look for fieldValidation on the operation itself.
func hoistSharedParams(it *pathItem) {
	for _, o := range it.ops {
		if o.method == "patch" {
			return
		}
	}
	var shared []param
	for _, p := range it.ops[0].params {
		everywhere := true
		for _, o := range it.ops[1:] {
			found := false
			for _, q := range o.params {
				found = found || q.name == p.name
			}
			everywhere = everywhere && found
		}
		if everywhere {
			shared = append(shared, p)
		}
	}
	if len(shared) == 0 {
		return
	}
	for _, o := range it.ops {
		var rest []param
		for _, q := range o.params {
			if !containsParam(shared, q.name) {
				rest = append(rest, q)
			}
		}
		o.params = rest
	}
	it.params = sortedParams(append(it.params, shared...))
}

func containsParam(list []param, name string) bool {
	for _, p := range list {
		if p.name == name {
			return true
		}
	}
	return false
}

// builtinGroup reports whether a group's versions serve a built-in kind.
func builtinGroup(versions []resources.VersionResources) bool {
	for _, v := range versions {
		for _, info := range v.Resources {
			if codecs.Scheme.Recognizes(info.GroupVersionKind()) {
				return true
			}
		}
	}
	return false
}

// discoveryMediaTypes are those discovery documents are served in.
var discoveryMediaTypes = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}

// rootPaths describes the paths outside the group-versions: the discovery
// paths of the API roots and groups, the version and the service account
// issuer's OpenID documents.
func rootPaths(reg *resources.Registry) map[string][]*pathItem {
	get := func(path, id, description, def, tag string, consumes, produces []string) *pathItem {
		return &pathItem{path: path, ops: []*operation{{
			method: "get", id: id, description: description, tag: tag,
			consumes: consumes, produces: produces, responses: []response{{200, "OK", def}},
		}}}
	}
	discovery := func(path, id, description, def, tag string) *pathItem {
		return get(path, id, description, def, tag, discoveryMediaTypes, discoveryMediaTypes)
	}
	json := []string{"application/json"}
	out := map[string][]*pathItem{
		"api":     {discovery("/api/", "getCoreAPIVersions", "get available API versions", "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions", "core")},
		"apis":    {discovery("/apis/", "getAPIVersions", "get available API versions", "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList", "apis")},
		"version": {get("/version/", "getCodeVersion", "get the version information for this server", versionInfoDefinition, "version", json, json)},
		".well-known/openid-configuration": {get("/.well-known/openid-configuration/", "getServiceAccountIssuerOpenIDConfiguration",
			"get service account issuer OpenID configuration, also known as the 'OIDC discovery doc'", "", "WellKnown", noConsumes, json)},
		"openid/v1/jwks": {get("/openid/v1/jwks/", "getServiceAccountIssuerOpenIDKeyset",
			"get service account issuer OpenID JSON Web Key Set (contains public token verification keys)", "", "openid", noConsumes, []string{"application/jwk-set+json"})},
	}
	for _, g := range reg.Groups() {
		if g.Group == "" || !builtinGroup(g.Versions) {
			continue // apiextensions publishes no group path for custom resources
		}
		tag := groupTag(g.Group)
		out["apis/"+g.Group] = []*pathItem{discovery("/apis/"+g.Group+"/", "get"+upperFirst(tag)+"APIGroup", "get information of a group", "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup", tag)}
	}
	return out
}
