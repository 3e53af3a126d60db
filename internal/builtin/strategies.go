package builtin

import (
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kube-aggregator/pkg/registry/apiservice"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	// The install packages put each group's internal types, conversions
	// and defaults into legacyscheme, which the strategies work with.
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/certificates/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/events/install"
	_ "k8s.io/kubernetes/pkg/apis/flowcontrol/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	_ "k8s.io/kubernetes/pkg/apis/storagemigration/install"

	"k8s.io/utils/clock"

	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingwebhookconfiguration"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingwebhookconfiguration"
	"k8s.io/kubernetes/pkg/registry/apps/controllerrevision"
	"k8s.io/kubernetes/pkg/registry/apps/daemonset"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/apps/replicaset"
	"k8s.io/kubernetes/pkg/registry/apps/statefulset"
	"k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler"
	"k8s.io/kubernetes/pkg/registry/batch/cronjob"
	"k8s.io/kubernetes/pkg/registry/batch/job"
	"k8s.io/kubernetes/pkg/registry/certificates/certificates"
	"k8s.io/kubernetes/pkg/registry/certificates/clustertrustbundle"
	"k8s.io/kubernetes/pkg/registry/certificates/podcertificaterequest"
	"k8s.io/kubernetes/pkg/registry/coordination/lease"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	"k8s.io/kubernetes/pkg/registry/core/endpoint"
	"k8s.io/kubernetes/pkg/registry/core/event"
	"k8s.io/kubernetes/pkg/registry/core/limitrange"
	"k8s.io/kubernetes/pkg/registry/core/namespace"
	"k8s.io/kubernetes/pkg/registry/core/node"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolume"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/registry/core/podtemplate"
	"k8s.io/kubernetes/pkg/registry/core/replicationcontroller"
	"k8s.io/kubernetes/pkg/registry/core/resourcequota"
	"k8s.io/kubernetes/pkg/registry/core/secret"
	"k8s.io/kubernetes/pkg/registry/core/service"
	"k8s.io/kubernetes/pkg/registry/core/serviceaccount"
	"k8s.io/kubernetes/pkg/registry/discovery/endpointslice"
	"k8s.io/kubernetes/pkg/registry/flowcontrol/flowschema"
	"k8s.io/kubernetes/pkg/registry/flowcontrol/prioritylevelconfiguration"
	"k8s.io/kubernetes/pkg/registry/networking/ingress"
	"k8s.io/kubernetes/pkg/registry/networking/ingressclass"
	"k8s.io/kubernetes/pkg/registry/networking/ipaddress"
	"k8s.io/kubernetes/pkg/registry/networking/networkpolicy"
	"k8s.io/kubernetes/pkg/registry/networking/servicecidr"
	"k8s.io/kubernetes/pkg/registry/node/runtimeclass"
	"k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrole"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding"
	"k8s.io/kubernetes/pkg/registry/rbac/role"
	"k8s.io/kubernetes/pkg/registry/rbac/rolebinding"
	"k8s.io/kubernetes/pkg/registry/resource/deviceclass"
	"k8s.io/kubernetes/pkg/registry/resource/devicetaintrule"
	"k8s.io/kubernetes/pkg/registry/resource/resourceslice"
	"k8s.io/kubernetes/pkg/registry/scheduling/priorityclass"
	"k8s.io/kubernetes/pkg/registry/storage/csidriver"
	"k8s.io/kubernetes/pkg/registry/storage/csinode"
	"k8s.io/kubernetes/pkg/registry/storage/csistoragecapacity"
	"k8s.io/kubernetes/pkg/registry/storage/storageclass"
	"k8s.io/kubernetes/pkg/registry/storage/volumeattachment"
	"k8s.io/kubernetes/pkg/registry/storage/volumeattributesclass"
	"k8s.io/kubernetes/pkg/registry/storagemigration/storagemigration"

	"github.com/kapi-dev/kapi/internal/pipeline"
)

// status is the sub-resource map of a type whose status has its own
// strategy.
func status(s rest.RESTUpdateStrategy) map[string]rest.RESTUpdateStrategy {
	return map[string]rest.RESTUpdateStrategy{"status": s}
}

// withActions marks sub-resources of s as written by the type's action.
func withActions(s *kubeStrategy, subresources ...string) *kubeStrategy {
	s.byAction = map[string]bool{}
	for _, sub := range subresources {
		s.byAction[sub] = true
	}
	return s
}

// strategies are the kube registry strategies of the built-in types, by
// group-resource (resourceclaims and resourceclaimtemplates are in dra.go,
// the admission policy bindings in policies.go). Types not listed keep
// kapi's generic strategy: componentstatuses and bindings.
//
// Strategies that check what the requester may do (read an admission
// policy's parameter kind, sign a pod certificate) ask the server's
// authorizer, as kube-apiserver's do, resolving kinds to resources in p's
// registry.
func strategies(p *pipeline.Pipeline, az authorizer.UnconditionalAuthorizer) map[schema.GroupResource]*kubeStrategy {
	core := func(r string) schema.GroupResource { return schema.GroupResource{Resource: r} }
	gr := func(g, r string) schema.GroupResource { return schema.GroupResource{Group: g, Resource: r} }
	pcr := podcertificaterequest.NewStrategy()
	vap := validatingadmissionpolicy.NewStrategy(az, kindResolver{p: p})
	return map[schema.GroupResource]*kubeStrategy{
		core("configmaps"):             strategy(configmap.Strategy, nil),
		core("endpoints"):              strategy(endpoint.Strategy, nil),
		core("serviceaccounts"):        strategy(serviceaccount.Strategy, nil),
		core("events"):                 strategy(event.Strategy, nil),
		core("limitranges"):            strategy(limitrange.Strategy, nil),
		core("namespaces"):             strategy(namespace.Strategy, map[string]rest.RESTUpdateStrategy{"status": namespace.StatusStrategy, "finalize": namespace.FinalizeStrategy}),
		core("nodes"):                  roundTripping(strategy(node.Strategy, status(node.StatusStrategy))),
		core("persistentvolumes"):      strategy(persistentvolume.Strategy, status(persistentvolume.StatusStrategy)),
		core("persistentvolumeclaims"): strategy(persistentvolumeclaim.Strategy, status(persistentvolumeclaim.StatusStrategy)),
		core("pods"): withActions(strategy(pod.Strategy, map[string]rest.RESTUpdateStrategy{
			"status": pod.StatusStrategy, "resize": pod.ResizeStrategy, "ephemeralcontainers": pod.EphemeralContainersStrategy,
		}), "binding"),
		core("podtemplates"):           strategy(podtemplate.Strategy, nil),
		core("replicationcontrollers"): strategy(replicationcontroller.Strategy, status(replicationcontroller.StatusStrategy)),
		core("resourcequotas"):         strategy(resourcequota.Strategy, status(resourcequota.StatusStrategy)),
		core("secrets"):                roundTripping(strategy(secret.Strategy, nil)),
		core("services"):               strategy(service.Strategy, status(service.StatusStrategy)),

		gr("apps", "controllerrevisions"): strategy(controllerrevision.Strategy, nil),
		gr("apps", "daemonsets"):          roundTripping(strategy(daemonset.Strategy, status(daemonset.StatusStrategy))),
		gr("apps", "deployments"):         strategy(deployment.Strategy, status(deployment.StatusStrategy)),
		gr("apps", "replicasets"):         strategy(replicaset.Strategy, status(replicaset.StatusStrategy)),
		gr("apps", "statefulsets"):        roundTripping(strategy(statefulset.Strategy, status(statefulset.StatusStrategy))),

		gr("autoscaling", "horizontalpodautoscalers"): roundTripping(strategy(horizontalpodautoscaler.Strategy, status(horizontalpodautoscaler.StatusStrategy))),
		gr("batch", "cronjobs"):                       strategy(cronjob.Strategy, status(cronjob.StatusStrategy)),
		gr("batch", "jobs"):                           strategy(job.Strategy, status(job.StatusStrategy)),
		gr("policy", "poddisruptionbudgets"):          strategy(poddisruptionbudget.Strategy, status(poddisruptionbudget.StatusStrategy)),

		gr("rbac.authorization.k8s.io", "clusterroles"):        strategy(clusterrole.Strategy, nil),
		gr("rbac.authorization.k8s.io", "clusterrolebindings"): strategy(clusterrolebinding.Strategy, nil),
		gr("rbac.authorization.k8s.io", "roles"):               strategy(role.Strategy, nil),
		gr("rbac.authorization.k8s.io", "rolebindings"):        strategy(rolebinding.Strategy, nil),

		gr("coordination.k8s.io", "leases"): strategy(lease.Strategy, nil),
		gr("events.k8s.io", "events"):       strategy(event.Strategy, nil),

		gr("networking.k8s.io", "ingressclasses"):  strategy(ingressclass.Strategy, nil),
		gr("networking.k8s.io", "ingresses"):       strategy(ingress.Strategy, status(ingress.StatusStrategy)),
		gr("networking.k8s.io", "ipaddresses"):     strategy(ipaddress.Strategy, nil),
		gr("networking.k8s.io", "networkpolicies"): strategy(networkpolicy.Strategy, nil),
		gr("networking.k8s.io", "servicecidrs"):    strategy(servicecidr.Strategy, status(servicecidr.StatusStrategy)),

		gr("storage.k8s.io", "csidrivers"):              strategy(csidriver.Strategy, nil),
		gr("storage.k8s.io", "csinodes"):                strategy(csinode.Strategy, status(csinode.StatusStrategy)),
		gr("storage.k8s.io", "csistoragecapacities"):    strategy(csistoragecapacity.Strategy, nil),
		gr("storage.k8s.io", "storageclasses"):          strategy(storageclass.Strategy, nil),
		gr("storage.k8s.io", "volumeattachments"):       strategy(volumeattachment.Strategy, status(volumeattachment.StatusStrategy)),
		gr("storage.k8s.io", "volumeattributesclasses"): strategy(volumeattributesclass.Strategy, nil),

		gr("scheduling.k8s.io", "priorityclasses"): strategy(priorityclass.Strategy, nil),
		gr("node.k8s.io", "runtimeclasses"):        strategy(runtimeclass.Strategy, nil),

		gr("certificates.k8s.io", "certificatesigningrequests"): strategy(certificates.Strategy, map[string]rest.RESTUpdateStrategy{"status": certificates.StatusStrategy, "approval": certificates.ApprovalStrategy}),
		gr("certificates.k8s.io", "clustertrustbundles"):        strategy(clustertrustbundle.Strategy, nil),
		gr("certificates.k8s.io", "podcertificaterequests"):     strategy(pcr, status(podcertificaterequest.NewStatusStrategy(pcr, az, clock.RealClock{}))),

		gr("admissionregistration.k8s.io", "mutatingwebhookconfigurations"):   strategy(mutatingwebhookconfiguration.Strategy, nil),
		gr("admissionregistration.k8s.io", "validatingwebhookconfigurations"): strategy(validatingwebhookconfiguration.Strategy, nil),
		gr("admissionregistration.k8s.io", "validatingadmissionpolicies"):     strategy(vap, status(validatingadmissionpolicy.NewStatusStrategy(vap))),
		gr("admissionregistration.k8s.io", "mutatingadmissionpolicies"):       strategy(mutatingadmissionpolicy.NewStrategy(az, kindResolver{p: p}), nil),
		gr("discovery.k8s.io", "endpointslices"):                              strategy(endpointslice.Strategy, nil),

		gr("resource.k8s.io", "deviceclasses"):    strategy(deviceclass.Strategy, nil),
		gr("resource.k8s.io", "devicetaintrules"): strategy(devicetaintrule.Strategy, status(devicetaintrule.StatusStrategy)),
		gr("resource.k8s.io", "resourceslices"):   strategy(resourceslice.Strategy, nil),

		gr("storagemigration.k8s.io", "storageversionmigrations"): strategy(storagemigration.Strategy, status(storagemigration.StatusStrategy)),

		gr("apiextensions.k8s.io", "customresourcedefinitions"): strategy(customresourcedefinition.NewStrategy(legacyscheme.Scheme), status(customresourcedefinition.NewStatusStrategy(legacyscheme.Scheme))),
		gr("apiregistration.k8s.io", "apiservices"):             strategy(apiservice.NewStrategy(legacyscheme.Scheme), status(apiservice.NewStatusStrategy(legacyscheme.Scheme))),

		gr("flowcontrol.apiserver.k8s.io", "flowschemas"):                 strategy(flowschema.Strategy, status(flowschema.StatusStrategy)),
		gr("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): strategy(prioritylevelconfiguration.Strategy, status(prioritylevelconfiguration.StatusStrategy)),
	}
}
