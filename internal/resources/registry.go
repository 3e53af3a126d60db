package resources

import (
	"sort"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
)

// Registry is the set of served resources, indexed for request routing and
// ordered for discovery.
type Registry struct {
	byGVR  map[schema.GroupVersionResource]*Info
	groups []GroupVersions
}

// GroupVersions is one API group with its served versions, preferred first.
type GroupVersions struct {
	Group    string
	Versions []VersionResources
}

// VersionResources is one group-version's resources in discovery order.
type VersionResources struct {
	Version   string
	Resources []*Info
}

// groupPriority orders groups in discovery as kube-apiserver does (higher
// first); groups of equal priority sort by name.
var groupPriority = map[string]int{
	"":                             18000,
	"apiregistration.k8s.io":       17900, // the aggregator lists its own group first under /apis
	"apps":                         17800,
	"events.k8s.io":                17750,
	"authentication.k8s.io":        17700,
	"authorization.k8s.io":         17600,
	"autoscaling":                  17500,
	"batch":                        17400,
	"certificates.k8s.io":          17300,
	"networking.k8s.io":            17200,
	"policy":                       17100,
	"rbac.authorization.k8s.io":    17000,
	"storage.k8s.io":               16800,
	"admissionregistration.k8s.io": 16700,
	"apiextensions.k8s.io":         16700,
	"scheduling.k8s.io":            16600,
	"coordination.k8s.io":          16500,
	"node.k8s.io":                  16300,
	"discovery.k8s.io":             16200,
	"resource.k8s.io":              16200,
	"flowcontrol.apiserver.k8s.io": 16100,
	"storagemigration.k8s.io":      15800,
}

// versionPriority is kube-apiserver's priority of a built-in version within
// its group where it is not the usual 15.
var versionPriority = map[schema.GroupVersion]int32{
	{Version: "v1"}:                                        1,
	{Group: "autoscaling", Version: "v2"}:                  30,
	{Group: "resource.k8s.io", Version: "v1"}:              21,
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}: 21,
}

// The priorities of the group-versions of custom resources, as
// kube-apiserver's CRD registration gives them.
const (
	customGroupPriority   = 1000
	customVersionPriority = 100
)

// IsBuiltinGroupVersion reports whether a group is one of kapi's own.
func IsBuiltinGroupVersion(group, _ string) bool {
	_, ok := groupPriority[group]
	return ok
}

// APIServicePriority is the groupPriorityMinimum and versionPriority of a
// served group-version's APIService, as kube-apiserver registers them.
func APIServicePriority(group, ver string) (groupMinimum, versionPriority32 int32) {
	g, ok := groupPriority[group]
	if !ok {
		return customGroupPriority, customVersionPriority
	}
	v, ok := versionPriority[schema.GroupVersion{Group: group, Version: ver}]
	if !ok {
		v = 15
	}
	return int32(g), v
}

// NewBuiltin returns the registry of kapi's built-in resources.
func NewBuiltin() *Registry {
	infos := make([]*Info, len(builtinResources))
	for i := range builtinResources {
		info := builtinResources[i] // each registry owns its copies
		info.Subresources = append([]SubresourceInfo(nil), info.Subresources...)
		applyBehaviour(&info)
		infos[i] = &info
	}
	return New(infos)
}

// New indexes infos.
func New(infos []*Info) *Registry {
	r := &Registry{byGVR: map[schema.GroupVersionResource]*Info{}}
	byGroup := map[string]map[string][]*Info{}
	for _, info := range infos {
		r.byGVR[info.GroupVersionResource()] = info
		if byGroup[info.Group] == nil {
			byGroup[info.Group] = map[string][]*Info{}
		}
		byGroup[info.Group][info.Version] = append(byGroup[info.Group][info.Version], info)
	}
	for group, versions := range byGroup {
		gv := GroupVersions{Group: group}
		for version, list := range versions {
			sort.Slice(list, func(i, j int) bool { return list[i].Resource < list[j].Resource })
			gv.Versions = append(gv.Versions, VersionResources{Version: version, Resources: list})
		}
		sort.Slice(gv.Versions, func(i, j int) bool {
			_, pi := APIServicePriority(group, gv.Versions[i].Version)
			_, pj := APIServicePriority(group, gv.Versions[j].Version)
			if pi != pj {
				return pi > pj
			}
			return version.CompareKubeAwareVersionStrings(gv.Versions[i].Version, gv.Versions[j].Version) > 0
		})
		r.groups = append(r.groups, gv)
	}
	sort.Slice(r.groups, func(i, j int) bool {
		pi, _ := APIServicePriority(r.groups[i].Group, "")
		pj, _ := APIServicePriority(r.groups[j].Group, "")
		if pi != pj {
			return pi > pj
		}
		return r.groups[i].Group < r.groups[j].Group
	})
	return r
}

// Lookup finds a served resource.
func (r *Registry) Lookup(group, version, resource string) *Info {
	return r.byGVR[schema.GroupVersionResource{Group: group, Version: version, Resource: resource}]
}

// Groups lists every group in discovery order; the core group is first.
func (r *Registry) Groups() []GroupVersions { return r.groups }

// Group finds one group.
func (r *Registry) Group(name string) *GroupVersions {
	for i := range r.groups {
		if r.groups[i].Group == name {
			return &r.groups[i]
		}
	}
	return nil
}

// Resources lists one group-version's resources, or nil if it is not served.
func (r *Registry) Resources(group, version string) []*Info {
	if g := r.Group(group); g != nil {
		for _, v := range g.Versions {
			if v.Version == version {
				return v.Resources
			}
		}
	}
	return nil
}

// returnsDeletedObject lists the resources whose DELETE answers with the
// object, as their kube-apiserver storage is configured.
var returnsDeletedObject = map[schema.GroupResource]bool{
	{Resource: "pods"}: true, {Resource: "services"}: true, {Resource: "serviceaccounts"}: true, {Resource: "namespaces"}: true,
	{Resource: "persistentvolumes"}: true, {Resource: "persistentvolumeclaims"}: true, {Resource: "resourcequotas"}: true,
	{Resource: "podtemplates"}:                            true,
	{Group: "storage.k8s.io", Resource: "storageclasses"}: true, {Group: "storage.k8s.io", Resource: "csidrivers"}: true,
	{Group: "storage.k8s.io", Resource: "csinodes"}: true, {Group: "storage.k8s.io", Resource: "volumeattachments"}: true,
	{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}: true,
	{Group: "resource.k8s.io", Resource: "deviceclasses"}:          true, {Group: "resource.k8s.io", Resource: "resourceclaims"}: true,
	{Group: "resource.k8s.io", Resource: "resourceclaimtemplates"}: true, {Group: "resource.k8s.io", Resource: "resourceslices"}: true,
	{Group: "resource.k8s.io", Resource: "resourcepoolstatusrequests"}:     true,
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}: true,
}

// nameValidators lists the resources whose names are not DNS subdomains.
var nameValidators = map[schema.GroupResource]func(string, bool) []string{
	{Resource: "namespaces"}:                                              apivalidation.NameIsDNSLabel,
	{Resource: "services"}:                                                apivalidation.NameIsDNS1035Label,
	{Group: "rbac.authorization.k8s.io", Resource: "roles"}:               path.ValidatePathSegmentName,
	{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}:        path.ValidatePathSegmentName,
	{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}:        path.ValidatePathSegmentName,
	{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}: path.ValidatePathSegmentName,
}

// statusPrintsNoTable lists the resources whose status kube-apiserver
// serves without a table convertor, so that a Table of it is a 406.
var statusPrintsNoTable = map[schema.GroupResource]bool{
	{Group: "resource.k8s.io", Resource: "resourceclaims"}: true, {Group: "resource.k8s.io", Resource: "devicetaintrules"}: true,
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}: true,
	{Group: "apiregistration.k8s.io", Resource: "apiservices"}:             true,
}

// PrintsTable tells whether kube-apiserver answers a Table of a resource's
// sub-resource ("" for the resource itself): the resource, its status
// (but for a few) and its scale; not its other sub-resources (a pod's log,
// ephemeral containers, resize), which have no table convertor.
func PrintsTable(gr schema.GroupResource, subresource string) bool {
	switch subresource {
	case "", "scale":
		return true
	case "status":
		return !statusPrintsNoTable[gr]
	}
	return false
}

// deleteDocumentedAsStatus lists the resources whose DELETE answers with
// the object though kube-apiserver's OpenAPI documents a Status: their
// storage wraps the generic one and does not say it returns the object.
var deleteDocumentedAsStatus = map[schema.GroupResource]bool{
	{Resource: "namespaces"}: true, {Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}: true,
}

func applyBehaviour(info *Info) {
	info.ReturnsDeletedObject = returnsDeletedObject[info.GroupResource()]
	info.DeleteDocumentedAsStatus = deleteDocumentedAsStatus[info.GroupResource()]
	info.ValidateName = nameValidators[info.GroupResource()]
	if info.ValidateName == nil {
		info.ValidateName = apivalidation.NameIsDNSSubdomain
	}
}
