package handlers

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/request"
	"github.com/kapi-dev/kapi/internal/resources"
	"github.com/kapi-dev/kapi/internal/respond"
)

// discovery serves /api, /apis and the per-group and per-version documents
// in the legacy form and, when asked, in the aggregated form. The documents
// never change while the server runs, so their JSON is encoded once.
type discovery struct {
	legacyGroups   *document            // /apis
	group          map[string]*document // /apis/GROUP
	groupVersion   map[string]*document // /api/v1, /apis/GROUP/VERSION
	aggregatedCore *AggregatedDocument
	aggregatedAPIs *AggregatedDocument
}

// document is a legacy discovery document and its JSON.
type document struct {
	obj  runtime.Object
	json []byte
	// routed says whether kube-apiserver serves the document by its
	// router, for GET only and refusing media types it does not produce
	// with the router's own 406 (/api, a group-version of built-in
	// resources), or outside it for any method (/apis, a group, and a
	// group-version of custom resources alone, which apiextensions
	// serves).
	routed bool
}

func newDocument(obj runtime.Object) *document { return &document{obj: obj, json: mustJSON(obj)} }

func newDiscovery(reg *resources.Registry, _ string) *discovery {
	d := &discovery{group: map[string]*document{}, groupVersion: map[string]*document{}}
	groups := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	core := &apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"}}
	apis := &apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: core.TypeMeta}
	for _, g := range reg.Groups() {
		aggregated := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.Group}}
		group := metav1.APIGroup{Name: g.Group}
		for _, v := range g.Versions {
			gv := metav1.GroupVersionForDiscovery{GroupVersion: groupVersion(g.Group, v.Version), Version: v.Version}
			group.Versions = append(group.Versions, gv)
			doc := newDocument(resourceList(g.Group, gv.GroupVersion, v.Resources))
			doc.routed = slices.ContainsFunc(v.Resources, kubeOwnKind)
			d.groupVersion[gv.GroupVersion] = doc
			aggregated.Versions = append(aggregated.Versions, aggregatedVersion(v))
		}
		group.PreferredVersion = group.Versions[0]
		if g.Group == "" {
			core.Items = append(core.Items, aggregated)
			continue
		}
		groups.Groups = append(groups.Groups, group)
		apis.Items = append(apis.Items, aggregated)
		d.group[g.Group] = newDocument(&metav1.APIGroup{
			TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
			Name:     group.Name, Versions: group.Versions, PreferredVersion: group.PreferredVersion,
		})
	}
	d.legacyGroups = newDocument(groups)
	d.aggregatedCore = NewAggregatedDocument(core)
	d.aggregatedAPIs = NewAggregatedDocument(apis)
	return d
}

// kubeOwnKind reports whether info is a kind of kube-apiserver's own.
func kubeOwnKind(info *resources.Info) bool {
	return codecs.Scheme.Recognizes(info.GroupVersionKind())
}

func groupVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

func resourceList(group, gv string, infos []*resources.Info) *metav1.APIResourceList {
	list := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv,
		APIResources: []metav1.APIResource{},
	}
	if group == "" {
		list.APIVersion = "" // as kube-apiserver's /api/v1
	}
	for _, info := range infos {
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: info.Resource, SingularName: info.Singular, Namespaced: info.Namespaced,
			Kind: info.Kind, Verbs: info.DiscoveryVerbs(), ShortNames: info.ShortNames, Categories: info.Categories,
			StorageVersionHash: info.StorageVersionHash,
		})
		for _, sub := range info.Subresources {
			if !sub.Served {
				continue
			}
			kind := sub.Kind
			if kind == "" {
				kind = info.Kind
			}
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: info.Resource + "/" + sub.Name, Namespaced: info.Namespaced,
				Group: sub.Group, Version: sub.Version, Kind: kind, Verbs: sub.Verbs,
			})
		}
	}
	return list
}

func aggregatedVersion(v resources.VersionResources) apidiscoveryv2.APIVersionDiscovery {
	out := apidiscoveryv2.APIVersionDiscovery{Version: v.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
	for _, info := range v.Resources {
		scope := apidiscoveryv2.ScopeCluster
		if info.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		// kube-apiserver names a built-in's group and version only where
		// they are not the resource's (a Scale, an Eviction); apiextensions
		// names a custom resource's always.
		custom := !codecs.Scheme.Recognizes(info.GroupVersionKind())
		ownKind := func(kind string) *metav1.GroupVersionKind {
			if custom {
				return &metav1.GroupVersionKind{Group: info.Group, Version: info.Version, Kind: kind}
			}
			return &metav1.GroupVersionKind{Kind: kind}
		}
		res := apidiscoveryv2.APIResourceDiscovery{
			Resource:         info.Resource,
			ResponseKind:     ownKind(info.Kind),
			Scope:            scope,
			SingularResource: info.Singular,
			Verbs:            info.DiscoveryVerbs(),
			ShortNames:       info.ShortNames,
			Categories:       info.Categories,
		}
		for _, sub := range info.Subresources {
			if !sub.Served {
				continue
			}
			kind := ownKind(cmp.Or(sub.Kind, info.Kind))
			if sub.Version != "" {
				kind.Group, kind.Version = sub.Group, sub.Version
			}
			res.Subresources = append(res.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource: sub.Name, ResponseKind: kind, Verbs: sub.Verbs,
			})
		}
		out.Resources = append(out.Resources, res)
	}
	return out
}

func mustJSON(v interface{}) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // discovery documents are plain structs
	}
	return append(data, '\n')
}

// serve answers a non-resource request under /api or /apis.
func (d *discovery) serve(w http.ResponseWriter, r *http.Request, req *request.Info, serverAddress string) {
	var (
		doc        *document
		aggregated *AggregatedDocument
	)
	switch {
	case req.Prefix == "api" && req.Version == "":
		doc, aggregated = &document{obj: legacyCore(serverAddress), routed: true}, d.aggregatedCore
	case req.Prefix == "apis" && req.Group == "":
		doc = d.legacyGroups
		// As kube-apiserver's, /apis/ is not aggregated discovery's.
		if r.URL.Path == "/apis" {
			aggregated = d.aggregatedAPIs
		}
	case req.Prefix == "apis" && req.Version == "":
		doc = d.group[req.Group]
	case req.Prefix == "api" && req.Group == "":
		doc = d.groupVersion[req.Version]
	default:
		doc = d.groupVersion[groupVersion(req.Group, req.Version)]
		if doc == nil && d.group[req.Group] != nil {
			// A version a served group lacks: kube-apiserver's handler
			// of unknown paths answers.
			respond.ErrorIn(w, r, errPathNotFound, discoveryMedia)
			return
		}
	}
	if doc == nil {
		http.NotFound(w, r) // no route of kube-apiserver's: its mux answers
		return
	}
	if r.Method != http.MethodGet && doc.routed {
		respond.ErrorIn(w, r, errMethodNotAllowed, discoveryMedia)
		return
	}
	if aggregated != nil {
		if doc.routed {
			// /api is a route of kube's router, which checks the Accept
			// header first (a range such as application/* is refused).
			if err := codecs.CheckRoute(r, discoveryMedia, nil); err != nil {
				respond.ErrorIn(w, r, err, discoveryMedia)
				return
			}
		}
		if info, ok := AcceptsAggregated(r); ok {
			aggregated.Write(w, r, info)
			return
		}
	}
	WriteDiscovery(w, r, doc.obj, doc.json, doc.routed)
}

// legacyCore is the /api document, naming the server's address.
func legacyCore(serverAddress string) *metav1.APIVersions {
	return &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: []string{"v1"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: serverAddress},
		},
	}
}
