package resources

import "k8s.io/apimachinery/pkg/runtime/schema"

// Verb sets, in the (alphabetical) order discovery lists them.
var (
	// verbsAll is the verb set of an ordinary stored resource.
	verbsAll = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	// verbsNoCollection is verbsAll without deletecollection (namespaces).
	verbsNoCollection = []string{"create", "delete", "get", "list", "patch", "update", "watch"}
	// verbsStatus is the verb set of status-like sub-resources.
	verbsStatus = []string{"get", "patch", "update"}
	// verbsCreate is the verb set of create-only resources and sub-resources.
	verbsCreate = []string{"create"}
	// verbsGetList is the verb set of read-only listable resources (componentstatuses).
	verbsGetList = []string{"get", "list"}
	// verbsConnect is the verb set of attach, exec and portforward.
	verbsConnect = []string{"create", "get"}
	// verbsProxy is the verb set of the proxy sub-resources.
	verbsProxy = []string{"create", "delete", "get", "patch", "update"}
	// verbsGet is the verb set of get-only sub-resources (pods/log).
	verbsGet = []string{"get"}
	// verbsUpdate is the verb set of update-only sub-resources (namespaces/finalize).
	verbsUpdate = []string{"update"}
)

// statusSubresource returns the served status sub-resource every status-bearing
// resource has.
func statusSubresource() SubresourceInfo {
	return SubresourceInfo{Name: "status", Verbs: verbsStatus, Served: true}
}

// scaleSubresource returns the autoscaling/v1 Scale sub-resource.
func scaleSubresource() SubresourceInfo {
	return SubresourceInfo{Name: "scale", Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: verbsStatus, Served: true}
}

// builtinResources lists the resources of the GA built-in group-versions, with the names, scope, verbs and sub-resources kube-apiserver reports in discovery.
var builtinResources = []Info{
	// core v1 (legacy group "", served under /api/v1)
	{Group: "", Version: "v1", Resource: "bindings", Singular: "binding", Kind: "Binding", Namespaced: true, Verbs: verbsCreate},
	{Group: "", Version: "v1", Resource: "componentstatuses", Singular: "componentstatus", Kind: "ComponentStatus", ShortNames: []string{"cs"}, Verbs: verbsGetList},
	{Group: "", Version: "v1", Resource: "configmaps", Singular: "configmap", Kind: "ConfigMap", Namespaced: true, ShortNames: []string{"cm"}, Verbs: verbsAll},
	{Group: "", Version: "v1", Resource: "endpoints", Singular: "endpoints", Kind: "Endpoints", Namespaced: true, ShortNames: []string{"ep"}, Verbs: verbsAll},
	{Group: "", Version: "v1", Resource: "events", Singular: "event", Kind: "Event", Namespaced: true, ShortNames: []string{"ev"}, Verbs: verbsAll},
	{Group: "", Version: "v1", Resource: "limitranges", Singular: "limitrange", Kind: "LimitRange", Namespaced: true, ShortNames: []string{"limits"}, Verbs: verbsAll},
	{Group: "", Version: "v1", Resource: "namespaces", Singular: "namespace", Kind: "Namespace", ShortNames: []string{"ns"}, Verbs: verbsNoCollection,
		Subresources: []SubresourceInfo{
			{Name: "finalize", Kind: "Namespace", Verbs: verbsUpdate, Served: true},
			statusSubresource(),
		}},
	{Group: "", Version: "v1", Resource: "nodes", Singular: "node", Kind: "Node", ShortNames: []string{"no"}, Verbs: verbsAll,
		Subresources: []SubresourceInfo{
			{Name: "proxy", Kind: "NodeProxyOptions", Verbs: verbsProxy, Served: true},
			statusSubresource(),
		}},
	{Group: "", Version: "v1", Resource: "persistentvolumeclaims", Singular: "persistentvolumeclaim", Kind: "PersistentVolumeClaim", Namespaced: true, ShortNames: []string{"pvc"}, Verbs: verbsAll,
		Subresources: []SubresourceInfo{statusSubresource()}},
	{Group: "", Version: "v1", Resource: "persistentvolumes", Singular: "persistentvolume", Kind: "PersistentVolume", ShortNames: []string{"pv"}, Verbs: verbsAll,
		Subresources: []SubresourceInfo{statusSubresource()}},
	{Group: "", Version: "v1", Resource: "pods", Singular: "pod", Kind: "Pod", Namespaced: true, ShortNames: []string{"po"}, Categories: []string{"all"}, Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{
			{Name: "attach", Kind: "PodAttachOptions", Verbs: verbsConnect, Served: true},
			{Name: "binding", Kind: "Binding", Verbs: verbsCreate, Served: true, KeepsSystemFields: true},
			{Name: "ephemeralcontainers", Kind: "Pod", Verbs: verbsStatus, Served: true},
			{Name: "eviction", Group: "policy", Version: "v1", Kind: "Eviction", Verbs: verbsCreate, Served: true,
				Accepts: []schema.GroupVersion{{Group: "policy", Version: "v1beta1"}}},
			{Name: "exec", Kind: "PodExecOptions", Verbs: verbsConnect, Served: true},
			{Name: "log", Kind: "Pod", Verbs: verbsGet, Served: true},
			{Name: "portforward", Kind: "PodPortForwardOptions", Verbs: verbsConnect, Served: true},
			{Name: "proxy", Kind: "PodProxyOptions", Verbs: verbsProxy, Served: true},
			{Name: "resize", Kind: "Pod", Verbs: verbsStatus, Served: true},
			statusSubresource(),
		}},
	{Group: "", Version: "v1", Resource: "podtemplates", Singular: "podtemplate", Kind: "PodTemplate", Namespaced: true, Verbs: verbsAll, Generation: true},
	{Group: "", Version: "v1", Resource: "replicationcontrollers", Singular: "replicationcontroller", Kind: "ReplicationController", Namespaced: true, ShortNames: []string{"rc"}, Categories: []string{"all"}, Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{scaleSubresource(), statusSubresource()}},
	{Group: "", Version: "v1", Resource: "resourcequotas", Singular: "resourcequota", Kind: "ResourceQuota", Namespaced: true, ShortNames: []string{"quota"}, Verbs: verbsAll,
		Subresources: []SubresourceInfo{statusSubresource()}},
	{Group: "", Version: "v1", Resource: "secrets", Singular: "secret", Kind: "Secret", Namespaced: true, Verbs: verbsAll},
	{Group: "", Version: "v1", Resource: "serviceaccounts", Singular: "serviceaccount", Kind: "ServiceAccount", Namespaced: true, ShortNames: []string{"sa"}, Verbs: verbsAll,
		Subresources: []SubresourceInfo{
			{Name: "token", Group: "authentication.k8s.io", Version: "v1", Kind: "TokenRequest", Verbs: verbsCreate, Served: true, KeepsSystemFields: true},
		}},
	{Group: "", Version: "v1", Resource: "services", Singular: "service", Kind: "Service", Namespaced: true, ShortNames: []string{"svc"}, Categories: []string{"all"}, Verbs: verbsAll,
		Subresources: []SubresourceInfo{
			{Name: "proxy", Kind: "ServiceProxyOptions", Verbs: verbsProxy, Served: true},
			statusSubresource(),
		}},

	// apps/v1
	{Group: "apps", Version: "v1", Resource: "controllerrevisions", Singular: "controllerrevision", Kind: "ControllerRevision", Namespaced: true, Verbs: verbsAll},
	{Group: "apps", Version: "v1", Resource: "daemonsets", Singular: "daemonset", Kind: "DaemonSet", Namespaced: true, ShortNames: []string{"ds"}, Categories: []string{"all"}, Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{statusSubresource()}},
	{Group: "apps", Version: "v1", Resource: "deployments", Singular: "deployment", Kind: "Deployment", Namespaced: true, ShortNames: []string{"deploy"}, Categories: []string{"all"}, Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{scaleSubresource(), statusSubresource()}},
	{Group: "apps", Version: "v1", Resource: "replicasets", Singular: "replicaset", Kind: "ReplicaSet", Namespaced: true, ShortNames: []string{"rs"}, Categories: []string{"all"}, Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{scaleSubresource(), statusSubresource()}},
	{Group: "apps", Version: "v1", Resource: "statefulsets", Singular: "statefulset", Kind: "StatefulSet", Namespaced: true, ShortNames: []string{"sts"}, Categories: []string{"all"}, Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{scaleSubresource(), statusSubresource()}},

	// batch/v1
	{Group: "batch", Version: "v1", Resource: "cronjobs", Singular: "cronjob", Kind: "CronJob", Namespaced: true, ShortNames: []string{"cj"}, Categories: []string{"all"}, Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{statusSubresource()}},
	{Group: "batch", Version: "v1", Resource: "jobs", Singular: "job", Kind: "Job", Namespaced: true, Categories: []string{"all"}, Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{statusSubresource()}},

	// autoscaling/v1
	{Group: "autoscaling", Version: "v1", Resource: "horizontalpodautoscalers", Singular: "horizontalpodautoscaler", Kind: "HorizontalPodAutoscaler", Namespaced: true, ShortNames: []string{"hpa"}, Categories: []string{"all"}, Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{statusSubresource()}},

	// autoscaling/v2
	{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers", Singular: "horizontalpodautoscaler", Kind: "HorizontalPodAutoscaler", Namespaced: true, ShortNames: []string{"hpa"}, Categories: []string{"all"}, Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{statusSubresource()}},

	// policy/v1
	{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets", Singular: "poddisruptionbudget", Kind: "PodDisruptionBudget", Namespaced: true, ShortNames: []string{"pdb"}, Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{statusSubresource()}},

	// rbac.authorization.k8s.io/v1
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings", Singular: "clusterrolebinding", Kind: "ClusterRoleBinding", Verbs: verbsAll},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles", Singular: "clusterrole", Kind: "ClusterRole", Verbs: verbsAll},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings", Singular: "rolebinding", Kind: "RoleBinding", Namespaced: true, Verbs: verbsAll},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles", Singular: "role", Kind: "Role", Namespaced: true, Verbs: verbsAll},

	// coordination.k8s.io/v1
	{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Singular: "lease", Kind: "Lease", Namespaced: true, Verbs: verbsAll},

	// events.k8s.io/v1
	{Group: "events.k8s.io", Version: "v1", Resource: "events", Singular: "event", Kind: "Event", Namespaced: true, ShortNames: []string{"ev"}, Verbs: verbsAll},

	// networking.k8s.io/v1
	{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses", Singular: "ingressclass", Kind: "IngressClass", Verbs: verbsAll, Generation: true},
	{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses", Singular: "ingress", Kind: "Ingress", Namespaced: true, ShortNames: []string{"ing"}, Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{statusSubresource()}},
	{Group: "networking.k8s.io", Version: "v1", Resource: "ipaddresses", Singular: "ipaddress", Kind: "IPAddress", ShortNames: []string{"ip"}, Verbs: verbsAll},
	{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies", Singular: "networkpolicy", Kind: "NetworkPolicy", Namespaced: true, ShortNames: []string{"netpol"}, Verbs: verbsAll, Generation: true},
	{Group: "networking.k8s.io", Version: "v1", Resource: "servicecidrs", Singular: "servicecidr", Kind: "ServiceCIDR", Verbs: verbsAll,
		Subresources: []SubresourceInfo{statusSubresource()}},

	// storage.k8s.io/v1
	{Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers", Singular: "csidriver", Kind: "CSIDriver", Verbs: verbsAll, Generation: true},
	{Group: "storage.k8s.io", Version: "v1", Resource: "csinodes", Singular: "csinode", Kind: "CSINode", Verbs: verbsAll,
		Subresources: []SubresourceInfo{statusSubresource()}},
	{Group: "storage.k8s.io", Version: "v1", Resource: "csistoragecapacities", Singular: "csistoragecapacity", Kind: "CSIStorageCapacity", Namespaced: true, Verbs: verbsAll},
	{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses", Singular: "storageclass", Kind: "StorageClass", ShortNames: []string{"sc"}, Verbs: verbsAll},
	{Group: "storage.k8s.io", Version: "v1", Resource: "volumeattachments", Singular: "volumeattachment", Kind: "VolumeAttachment", Verbs: verbsAll,
		Subresources: []SubresourceInfo{statusSubresource()}},
	{Group: "storage.k8s.io", Version: "v1", Resource: "volumeattributesclasses", Singular: "volumeattributesclass", Kind: "VolumeAttributesClass", ShortNames: []string{"vac"}, Verbs: verbsAll},

	// scheduling.k8s.io/v1
	{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses", Singular: "priorityclass", Kind: "PriorityClass", ShortNames: []string{"pc"}, Verbs: verbsAll, Generation: true},

	// discovery.k8s.io/v1
	{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices", Singular: "endpointslice", Kind: "EndpointSlice", Namespaced: true, Verbs: verbsAll, Generation: true},

	// node.k8s.io/v1
	{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses", Singular: "runtimeclass", Kind: "RuntimeClass", Verbs: verbsAll},

	// certificates.k8s.io/v1
	{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests", Singular: "certificatesigningrequest", Kind: "CertificateSigningRequest", ShortNames: []string{"csr"}, Verbs: verbsAll,
		Subresources: []SubresourceInfo{
			{Name: "approval", Verbs: verbsStatus, Served: true},
			statusSubresource(),
		}},
	{Group: "certificates.k8s.io", Version: "v1", Resource: "clustertrustbundles", Singular: "clustertrustbundle", Kind: "ClusterTrustBundle", Verbs: verbsAll},
	{Group: "certificates.k8s.io", Version: "v1", Resource: "podcertificaterequests", Singular: "podcertificaterequest", Kind: "PodCertificateRequest", Namespaced: true, Verbs: verbsAll,
		Subresources: []SubresourceInfo{statusSubresource()}},

	// admissionregistration.k8s.io/v1
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicies", Singular: "mutatingadmissionpolicy", Kind: "MutatingAdmissionPolicy", Categories: []string{"api-extensions"}, Verbs: verbsAll, Generation: true},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicybindings", Singular: "mutatingadmissionpolicybinding", Kind: "MutatingAdmissionPolicyBinding", Categories: []string{"api-extensions"}, Verbs: verbsAll, Generation: true},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations", Singular: "mutatingwebhookconfiguration", Kind: "MutatingWebhookConfiguration", Categories: []string{"api-extensions"}, Verbs: verbsAll, Generation: true},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies", Singular: "validatingadmissionpolicy", Kind: "ValidatingAdmissionPolicy", Categories: []string{"api-extensions"}, Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{statusSubresource()}},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings", Singular: "validatingadmissionpolicybinding", Kind: "ValidatingAdmissionPolicyBinding", Categories: []string{"api-extensions"}, Verbs: verbsAll, Generation: true},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations", Singular: "validatingwebhookconfiguration", Kind: "ValidatingWebhookConfiguration", Categories: []string{"api-extensions"}, Verbs: verbsAll, Generation: true},

	// apiextensions.k8s.io/v1
	{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions", Singular: "customresourcedefinition", Kind: "CustomResourceDefinition", ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"}, Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{statusSubresource()}},

	// authentication.k8s.io/v1 and authorization.k8s.io/v1: reviews,
	// answered and never stored.
	{Group: "authentication.k8s.io", Version: "v1", Resource: "selfsubjectreviews", Singular: "selfsubjectreview", Kind: "SelfSubjectReview", Verbs: verbsCreate},
	{Group: "authentication.k8s.io", Version: "v1", Resource: "tokenreviews", Singular: "tokenreview", Kind: "TokenReview", Verbs: verbsCreate},
	{Group: "authorization.k8s.io", Version: "v1", Resource: "localsubjectaccessreviews", Singular: "localsubjectaccessreview", Kind: "LocalSubjectAccessReview", Namespaced: true, Verbs: verbsCreate},
	{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectaccessreviews", Singular: "selfsubjectaccessreview", Kind: "SelfSubjectAccessReview", Verbs: verbsCreate},
	{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectrulesreviews", Singular: "selfsubjectrulesreview", Kind: "SelfSubjectRulesReview", Verbs: verbsCreate},
	{Group: "authorization.k8s.io", Version: "v1", Resource: "subjectaccessreviews", Singular: "subjectaccessreview", Kind: "SubjectAccessReview", Verbs: verbsCreate},

	// apiregistration.k8s.io/v1
	{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices", Singular: "apiservice", Kind: "APIService", Categories: []string{"api-extensions"}, Verbs: verbsAll,
		Subresources: []SubresourceInfo{statusSubresource()}},

	// resource.k8s.io/v1 (dynamic resource allocation)
	{Group: "resource.k8s.io", Version: "v1", Resource: "deviceclasses", Singular: "deviceclass", Kind: "DeviceClass", Verbs: verbsAll, Generation: true},
	{Group: "resource.k8s.io", Version: "v1", Resource: "devicetaintrules", Singular: "devicetaintrule", Kind: "DeviceTaintRule", Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{statusSubresource()}},
	{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims", Singular: "resourceclaim", Kind: "ResourceClaim", Namespaced: true, Verbs: verbsAll,
		Subresources: []SubresourceInfo{statusSubresource()}},
	{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaimtemplates", Singular: "resourceclaimtemplate", Kind: "ResourceClaimTemplate", Namespaced: true, Verbs: verbsAll},
	{Group: "resource.k8s.io", Version: "v1", Resource: "resourceslices", Singular: "resourceslice", Kind: "ResourceSlice", Verbs: verbsAll, Generation: true},

	// storagemigration.k8s.io/v1
	{Group: "storagemigration.k8s.io", Version: "v1", Resource: "storageversionmigrations", Singular: "storageversionmigration", Kind: "StorageVersionMigration", Verbs: verbsAll,
		Subresources: []SubresourceInfo{statusSubresource()}},

	// flowcontrol.apiserver.k8s.io/v1
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas", Singular: "flowschema", Kind: "FlowSchema", Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{statusSubresource()}},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "prioritylevelconfigurations", Singular: "prioritylevelconfiguration", Kind: "PriorityLevelConfiguration", Verbs: verbsAll, Generation: true,
		Subresources: []SubresourceInfo{statusSubresource()}},
}
