package aggregator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/transport"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationv1helper "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"

	"github.com/kapi-dev/kapi/internal/handlers"
	"github.com/kapi-dev/kapi/internal/resources"
)

// remoteGroups are the APIServices backed by a Service, a slice per group
// in kube-aggregator's order (group priority, then version priority).
func (a *Aggregator) remoteGroups() [][]*apiregistrationv1.APIService {
	all, err := a.apiServices.List(labels.Everything())
	if err != nil {
		return nil
	}
	var remote []*apiregistrationv1.APIService
	for _, svc := range all {
		if svc.Spec.Service != nil {
			remote = append(remote, svc)
		}
	}
	if len(remote) == 0 {
		return nil
	}
	return apiregistrationv1helper.SortedByGroupAndVersion(remote)
}

// Paths are the paths of the groups and group-versions aggregated
// servers serve, available or not, as kube-aggregator lists them at "/".
func (a *Aggregator) Paths() []string {
	var paths []string
	for _, versions := range a.remoteGroups() {
		for _, svc := range versions {
			paths = append(paths, "/apis/"+svc.Spec.Group, "/apis/"+svc.Spec.Group+"/"+svc.Spec.Version)
		}
	}
	return paths
}

// availableRemote are the available APIServices backed by a Service, in
// kube-aggregator's order.
func (a *Aggregator) availableRemote() []*apiregistrationv1.APIService {
	var available []*apiregistrationv1.APIService
	for _, versions := range a.remoteGroups() {
		for _, svc := range versions {
			if apiregistrationv1helper.IsAPIServiceConditionTrue(svc, apiregistrationv1.Available) {
				available = append(available, svc)
			}
		}
	}
	return available
}

// serveGroupList serves /apis: kapi's groups and the aggregated ones, in
// the legacy or the aggregated form the client asked for.
func (a *Aggregator) serveGroupList(w http.ResponseWriter, r *http.Request, local http.Handler) {
	remote := a.remoteGroups()
	if len(remote) == 0 {
		local.ServeHTTP(w, r)
		return
	}
	if info, ok := handlers.AcceptsAggregated(r); ok && r.URL.Path == "/apis" {
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := localDocument(local, r, aggregatedJSON, &list); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		list.Items = mergeAggregated(list.Items, a.discovery.groups(r.Context(), remote), remote)
		handlers.NewAggregatedDocument(&list).Write(w, r, info)
		return
	}
	var list metav1.APIGroupList
	if err := localDocument(local, r, runtime.ContentTypeJSON, &list); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	list.Groups = mergeGroups(list.Groups, remote)
	handlers.WriteDiscovery(w, r, &list, nil, false)
}

// serveGroup serves /apis/GROUP: the group's versions served by kapi and
// by APIServices.
func (a *Aggregator) serveGroup(w http.ResponseWriter, r *http.Request, group string, local http.Handler) {
	var versions []*apiregistrationv1.APIService
	for _, g := range a.remoteGroups() {
		if g[0].Spec.Group == group {
			versions = g
		}
	}
	if versions == nil {
		local.ServeHTTP(w, r)
		return
	}
	var g metav1.APIGroup
	if err := localDocument(local, r, runtime.ContentTypeJSON, &g); err == nil {
		g = mergeGroups([]metav1.APIGroup{g}, [][]*apiregistrationv1.APIService{versions})[0]
	} else {
		// kapi serves no version of the group.
		g = mergeGroups(nil, [][]*apiregistrationv1.APIService{versions})[0]
		g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
	}
	handlers.WriteDiscovery(w, r, &g, nil, false)
}

// aggregatedJSON asks for aggregated discovery in JSON.
const aggregatedJSON = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// localDocument reads into out kapi's own discovery document for r, in
// JSON (accept), for the aggregator to merge the APIServices' into it
// before it answers in the representation r asks for.
func localDocument(local http.Handler, r *http.Request, accept string, out any) error {
	r = r.Clone(r.Context())
	r.Header.Set("Accept", accept)
	r.Header.Del("If-None-Match")
	doc := record(local, r)
	if doc.code != http.StatusOK {
		return fmt.Errorf("kapi's discovery answered %d", doc.code)
	}
	if err := json.Unmarshal(doc.body, out); err != nil {
		return fmt.Errorf("decoding kapi's discovery: %w", err)
	}
	return nil
}

// mergeGroups adds the aggregated group-versions to kapi's groups, as
// kube-aggregator lists them: its own group first, then the groups by
// priority, then by the name of their first APIService; a group's
// versions by version priority.
func mergeGroups(groups []metav1.APIGroup, remote [][]*apiregistrationv1.APIService) []metav1.APIGroup {
	order := newPriorities(remote)
	index := map[string]int{}
	for i, g := range groups {
		index[g.Name] = i
		for _, v := range g.Versions {
			order.addLocal(g.Name, v.Version)
		}
	}
	for _, versions := range remote {
		name := versions[0].Spec.Group
		i, ok := index[name]
		if !ok {
			groups = append(groups, metav1.APIGroup{Name: name})
			i = len(groups) - 1
			index[name] = i
		}
		added := false
		for _, svc := range versions {
			gv := metav1.GroupVersionForDiscovery{GroupVersion: name + "/" + svc.Spec.Version, Version: svc.Spec.Version}
			if !hasVersion(groups[i].Versions, gv.Version) {
				groups[i].Versions = append(groups[i].Versions, gv)
				added = true
			}
		}
		if added {
			// The APIService of the highest version priority gives the
			// preferred version.
			sort.SliceStable(groups[i].Versions, func(a, b int) bool {
				return order.versionBefore(name, groups[i].Versions[a].Version, groups[i].Versions[b].Version)
			})
			groups[i].PreferredVersion = groups[i].Versions[0]
		}
	}
	sort.SliceStable(groups, func(i, j int) bool { return order.groupBefore(groups[i].Name, groups[j].Name, order.firstService) })
	return groups
}

// priorities are the APIServices' priorities of the groups and versions
// discovery lists: kapi's own (as kube-apiserver registers them) and the
// aggregated ones.
type priorities struct {
	group        map[string]int32  // the highest groupPriorityMinimum of a group's APIServices
	firstService map[string]string // the least name of a group's APIServices of that priority
	version      map[schema.GroupVersion]int32
}

func newPriorities(remote [][]*apiregistrationv1.APIService) *priorities {
	p := &priorities{group: map[string]int32{}, firstService: map[string]string{}, version: map[schema.GroupVersion]int32{}}
	for _, versions := range remote {
		for _, svc := range versions {
			p.add(svc.Spec.Group, svc.Spec.Version, svc.Spec.GroupPriorityMinimum, svc.Spec.VersionPriority)
		}
	}
	return p
}

// addLocal adds a version kapi serves, unless an APIService of the
// aggregated servers already names it.
func (p *priorities) addLocal(group, version string) {
	if _, ok := p.version[schema.GroupVersion{Group: group, Version: version}]; ok {
		return
	}
	groupMinimum, versionPriority := resources.APIServicePriority(group, version)
	p.add(group, version, groupMinimum, versionPriority)
}

func (p *priorities) add(group, version string, groupMinimum, versionPriority int32) {
	p.version[schema.GroupVersion{Group: group, Version: version}] = versionPriority
	name := version + "." + group
	current, seen := p.group[group]
	switch {
	case !seen || groupMinimum > current:
		p.group[group], p.firstService[group] = groupMinimum, name
	case groupMinimum == current && name < p.firstService[group]:
		p.firstService[group] = name
	}
}

// groupBefore orders groups as kube-aggregator lists them: its own first,
// then by priority, ties by the name tie[...] gives (or their own).
func (p *priorities) groupBefore(a, b string, tie map[string]string) bool {
	if own, otherOwn := a == apiregistrationv1.GroupName, b == apiregistrationv1.GroupName; own != otherOwn {
		return own
	}
	if p.group[a] != p.group[b] {
		return p.group[a] > p.group[b]
	}
	if tie != nil {
		return tie[a] < tie[b]
	}
	return a < b
}

// versionBefore orders a group's versions by priority, ties by kube's
// version order (v2 before v1 before v1beta1).
func (p *priorities) versionBefore(group, a, b string) bool {
	pa, pb := p.version[schema.GroupVersion{Group: group, Version: a}], p.version[schema.GroupVersion{Group: group, Version: b}]
	if pa != pb {
		return pa > pb
	}
	return version.CompareKubeAwareVersionStrings(a, b) > 0
}

func hasVersion(versions []metav1.GroupVersionForDiscovery, version string) bool {
	for _, v := range versions {
		if v.Version == version {
			return true
		}
	}
	return false
}

// mergeAggregated adds the aggregated groups' discovery (remote, of the
// APIServices services) to kapi's, ordered as kube's aggregated discovery
// orders them: apiregistration.k8s.io first (kube ranks it above any
// APIService), then groups by their highest priority, then by name; a
// group's versions by version priority.
func mergeAggregated(local, remote []apidiscoveryv2.APIGroupDiscovery, services [][]*apiregistrationv1.APIService) []apidiscoveryv2.APIGroupDiscovery {
	order := newPriorities(services)
	index := map[string]int{}
	for i, g := range local {
		index[g.Name] = i
		for _, v := range g.Versions {
			order.addLocal(g.Name, v.Version)
		}
	}
	for _, g := range remote {
		i, ok := index[g.Name]
		if !ok {
			local = append(local, g)
			continue
		}
		for _, v := range g.Versions {
			if !hasAggregatedVersion(local[i].Versions, v.Version) {
				local[i].Versions = append(local[i].Versions, v)
			}
		}
	}
	for _, g := range local {
		sort.SliceStable(g.Versions, func(a, b int) bool { return order.versionBefore(g.Name, g.Versions[a].Version, g.Versions[b].Version) })
	}
	sort.SliceStable(local, func(i, j int) bool { return order.groupBefore(local[i].Name, local[j].Name, nil) })
	return local
}

func hasAggregatedVersion(versions []apidiscoveryv2.APIVersionDiscovery, version string) bool {
	for _, v := range versions {
		if v.Version == version {
			return true
		}
	}
	return false
}

// remoteDiscovery fetches and caches the discovery documents of the
// aggregated group-versions, as kube-aggregator's discovery manager does.
type remoteDiscovery struct {
	a     *Aggregator
	mu    sync.Mutex
	cache map[string]fetched // by APIService name
}

type fetched struct {
	resourceVersion string
	at              time.Time
	version         apidiscoveryv2.APIVersionDiscovery
}

// discoveryTTL is how long a fetched document is reused while its
// APIService does not change.
const discoveryTTL = 30 * time.Second

func newRemoteDiscovery(a *Aggregator) *remoteDiscovery {
	return &remoteDiscovery{a: a, cache: map[string]fetched{}}
}

// groups returns the aggregated discovery of the remote group-versions. A
// version whose server does not answer is marked stale, with what was
// last fetched (no resources if nothing ever was), as kube-aggregator
// lists it: clients then report that group-version as failed.
func (d *remoteDiscovery) groups(ctx context.Context, remote [][]*apiregistrationv1.APIService) []apidiscoveryv2.APIGroupDiscovery {
	var out []apidiscoveryv2.APIGroupDiscovery
	for _, versions := range remote {
		g := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: versions[0].Spec.Group}}
		for _, svc := range versions {
			g.Versions = append(g.Versions, d.version(ctx, svc))
		}
		out = append(out, g)
	}
	return out
}

func (d *remoteDiscovery) version(ctx context.Context, svc *apiregistrationv1.APIService) apidiscoveryv2.APIVersionDiscovery {
	d.mu.Lock()
	entry, ok := d.cache[svc.Name]
	d.mu.Unlock()
	if ok && entry.resourceVersion == svc.ResourceVersion && time.Since(entry.at) < discoveryTTL {
		return entry.version
	}
	list, err := d.fetch(ctx, svc)
	switch {
	case err == nil:
		entry.version = toAggregated(svc, list)
	case entry.version.Version == "": // never fetched
		entry.version = apidiscoveryv2.APIVersionDiscovery{Version: svc.Spec.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessStale}
	default:
		entry.version.Freshness = apidiscoveryv2.DiscoveryFreshnessStale
	}
	entry.resourceVersion, entry.at = svc.ResourceVersion, time.Now()
	d.mu.Lock()
	d.cache[svc.Name] = entry
	d.mu.Unlock()
	return entry.version
}

// fetch reads /apis/GROUP/VERSION from svc's server as the aggregator
// itself.
func (d *remoteDiscovery) fetch(ctx context.Context, svc *apiregistrationv1.APIService) (*metav1.APIResourceList, error) {
	list := &metav1.APIResourceList{}
	return list, d.a.getJSON(ctx, svc, "/apis/"+svc.Spec.Group+"/"+svc.Spec.Version, list)
}

// getJSON reads path from svc's server as kube-aggregator reads what it
// aggregates (as system:kube-aggregator), decoding the JSON into out.
func (a *Aggregator) getJSON(ctx context.Context, svc *apiregistrationv1.APIService, path string, out interface{}) error {
	if !apiregistrationv1helper.IsAPIServiceConditionTrue(svc, apiregistrationv1.Available) {
		return fmt.Errorf("%s is not available", svc.Name)
	}
	endpoint, err := a.resolver.ResolveEndpoint(svc.Spec.Service.Namespace, svc.Spec.Service.Name, port(svc))
	if err != nil {
		return err
	}
	rt, err := a.transport(svc)
	if err != nil {
		return err
	}
	rt = transport.NewAuthProxyRoundTripper("system:kube-aggregator", "", []string{"system:masters"}, nil, rt)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	u := url.URL{Scheme: "https", Host: endpoint.Host, Path: path}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", u.String(), resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// toAggregated turns a group-version's legacy discovery into its
// aggregated form.
func toAggregated(svc *apiregistrationv1.APIService, list *metav1.APIResourceList) apidiscoveryv2.APIVersionDiscovery {
	out := apidiscoveryv2.APIVersionDiscovery{Version: svc.Spec.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
	kind := func(r metav1.APIResource) *metav1.GroupVersionKind {
		gvk := &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
		if gvk.Version == "" {
			gvk.Group, gvk.Version = svc.Spec.Group, svc.Spec.Version
		}
		return gvk
	}
	parents := map[string]int{}
	for _, r := range list.APIResources {
		if strings.Contains(r.Name, "/") {
			continue
		}
		scope := apidiscoveryv2.ScopeCluster
		if r.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		parents[r.Name] = len(out.Resources)
		out.Resources = append(out.Resources, apidiscoveryv2.APIResourceDiscovery{
			Resource: r.Name, ResponseKind: kind(r), Scope: scope, SingularResource: r.SingularName,
			Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories,
		})
	}
	for _, r := range list.APIResources {
		parent, sub, ok := strings.Cut(r.Name, "/")
		i, known := parents[parent]
		if !ok || !known {
			continue
		}
		out.Resources[i].Subresources = append(out.Resources[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource: sub, ResponseKind: kind(r), Verbs: r.Verbs,
		})
	}
	return out
}

// recorded is a response of the local handler, kept to be rewritten.
type recorded struct {
	code   int
	header http.Header
	body   []byte
}

func record(h http.Handler, r *http.Request) *recorded {
	rec := &recorder{header: http.Header{}, code: http.StatusOK}
	h.ServeHTTP(rec, r)
	return &recorded{code: rec.code, header: rec.header, body: rec.body.Bytes()}
}

// rewrite decodes the body into the type edit takes, edits and re-encodes it.
func rewrite[T any](doc *recorded, edit func(*T)) error {
	var v T
	if err := json.Unmarshal(doc.body, &v); err != nil {
		return fmt.Errorf("decoding kapi's discovery: %w", err)
	}
	edit(&v)
	body, err := json.Marshal(&v)
	doc.body = append(body, '\n')
	return err
}

func (doc *recorded) replay(w http.ResponseWriter) {
	for k, v := range doc.header {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(doc.code)
	w.Write(doc.body)
}

// recorder is an http.ResponseWriter that keeps the response.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(code int)        { r.code = code }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
