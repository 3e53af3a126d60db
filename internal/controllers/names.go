package controllers

import (
	"fmt"
	"slices"
	"strings"
)

// The controllers kapi runs, by kube-controller-manager's names.
const (
	NamespaceController                    = "namespace-controller"
	ServiceAccountController               = "serviceaccount-controller"
	ServiceAccountTokenController          = "serviceaccount-token-controller"
	LegacySATokenCleanerController         = "legacy-serviceaccount-token-cleaner-controller"
	RootCACertificatePublisherController   = "root-ca-certificate-publisher-controller"
	GarbageCollector                       = "garbage-collector-controller"
	ReplicaSetController                   = "replicaset-controller"
	ReplicationControllerController        = "replicationcontroller-controller"
	DeploymentController                   = "deployment-controller"
	StatefulSetController                  = "statefulset-controller"
	DaemonSetController                    = "daemonset-controller"
	JobController                          = "job-controller"
	CronJobController                      = "cronjob-controller"
	TTLAfterFinishedController             = "ttl-after-finished-controller"
	EndpointSliceController                = "endpointslice-controller"
	EndpointsController                    = "endpoints-controller"
	EndpointSliceMirroringController       = "endpointslice-mirroring-controller"
	ServiceCIDRController                  = "service-cidr-controller"
	ResourceQuotaController                = "resourcequota-controller"
	PolicyStatusController                 = "validatingadmissionpolicy-status-controller"
	DisruptionController                   = "disruption-controller"
	ClusterRoleAggregationController       = "clusterrole-aggregation-controller"
	PodGarbageCollector                    = "pod-garbage-collector-controller"
	PersistentVolumeBinderController       = "persistentvolume-binder-controller"
	PVCProtectionController                = "persistentvolumeclaim-protection-controller"
	PVProtectionController                 = "persistentvolume-protection-controller"
	CSRSigningController                   = "certificatesigningrequest-signing-controller"
	CSRApprovingController                 = "certificatesigningrequest-approving-controller"
	CSRCleanerController                   = "certificatesigningrequest-cleaner-controller"
	NodeLifecycleController                = "node-lifecycle-controller"
	TaintEvictionController                = "taint-eviction-controller"
	EphemeralVolumeController              = "ephemeral-volume-controller"
	VACProtectionController                = "volumeattributesclass-protection-controller"
	TTLController                          = "ttl-controller"
	ResourceClaimController                = "resourceclaim-controller"
	DeviceTaintEvictionController          = "device-taint-eviction-controller"
	PodCertificateRequestCleanerController = "podcertificaterequest-cleaner-controller"
	HorizontalPodAutoscalerController      = "horizontal-pod-autoscaler-controller"
	StorageVersionMigratorController       = "storage-version-migrator-controller"

	// Beyond kube-controller-manager's: kube-scheduler, and the kubelets
	// of the simulated nodes.
	Scheduler      = "kube-scheduler"
	SimulatedNodes = "simulated-nodes"
)

// All lists the controllers kapi can run.
var All = []string{
	NamespaceController, ServiceAccountController, ServiceAccountTokenController, LegacySATokenCleanerController, RootCACertificatePublisherController, GarbageCollector,
	CSRSigningController, CSRApprovingController, CSRCleanerController, ReplicaSetController, ReplicationControllerController, DeploymentController, StatefulSetController,
	DaemonSetController, JobController, CronJobController, TTLAfterFinishedController,
	EndpointSliceController, EndpointsController, EndpointSliceMirroringController, ServiceCIDRController, ResourceQuotaController, PolicyStatusController, DisruptionController,
	ClusterRoleAggregationController, PodGarbageCollector, PersistentVolumeBinderController, PVCProtectionController, PVProtectionController,
	NodeLifecycleController, TaintEvictionController, EphemeralVolumeController, VACProtectionController, TTLController,
	ResourceClaimController, DeviceTaintEvictionController, PodCertificateRequestCleanerController, HorizontalPodAutoscalerController,
	StorageVersionMigratorController,
	Scheduler, SimulatedNodes,
}

// serviceAccounts are the kube-system service accounts the controllers act
// as, as kube-controller-manager's controllers do with
// --use-service-account-credentials: Kubernetes' bootstrap policy binds
// each to its system:controller: role.
var serviceAccounts = map[string]string{
	NamespaceController:                    "namespace-controller",
	ServiceAccountController:               "service-account-controller",
	LegacySATokenCleanerController:         "legacy-service-account-token-cleaner",
	RootCACertificatePublisherController:   "root-ca-cert-publisher",
	GarbageCollector:                       "generic-garbage-collector",
	ReplicaSetController:                   "replicaset-controller",
	ReplicationControllerController:        "replication-controller",
	DeploymentController:                   "deployment-controller",
	StatefulSetController:                  "statefulset-controller",
	DaemonSetController:                    "daemon-set-controller",
	JobController:                          "job-controller",
	CronJobController:                      "cronjob-controller",
	TTLAfterFinishedController:             "ttl-after-finished-controller",
	EndpointSliceController:                "endpointslice-controller",
	EndpointsController:                    "endpoint-controller",
	EndpointSliceMirroringController:       "endpointslicemirroring-controller",
	ServiceCIDRController:                  "service-cidrs-controller",
	ResourceQuotaController:                "resourcequota-controller",
	PolicyStatusController:                 "validatingadmissionpolicy-status-controller",
	DisruptionController:                   "disruption-controller",
	ClusterRoleAggregationController:       "clusterrole-aggregation-controller",
	PodGarbageCollector:                    "pod-garbage-collector",
	PersistentVolumeBinderController:       "persistent-volume-binder",
	PVCProtectionController:                "pvc-protection-controller",
	PVProtectionController:                 "pv-protection-controller",
	CSRSigningController:                   "certificate-controller",
	CSRApprovingController:                 "certificate-controller",
	CSRCleanerController:                   "certificate-controller",
	NodeLifecycleController:                "node-controller",
	TaintEvictionController:                "node-controller",
	EphemeralVolumeController:              "ephemeral-volume-controller",
	VACProtectionController:                "volumeattributesclass-protection-controller",
	TTLController:                          "ttl-controller",
	ResourceClaimController:                "resource-claim-controller",
	DeviceTaintEvictionController:          "device-taint-eviction-controller",
	PodCertificateRequestCleanerController: "podcertificaterequestcleaner",
	HorizontalPodAutoscalerController:      "horizontal-pod-autoscaler",
	StorageVersionMigratorController:       "storage-version-migrator-controller",
}

// ServiceAccount is the name of the kube-system service account a
// controller acts as.
func ServiceAccount(controller string) string { return serviceAccounts[controller] }

// Selection says which controllers run, as kube-controller-manager's
// --controllers flag does: "*" for every one, "name" to enable one,
// "-name" to disable one ("-*" every one); later entries win.
type Selection []string

// ParseSelection reads a comma-separated --controllers value, refusing
// names kapi does not know.
func ParseSelection(value string) (Selection, error) {
	var sel Selection
	for _, item := range strings.Split(value, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name := strings.TrimPrefix(item, "-")
		if name != "*" && !slices.Contains(All, name) {
			return nil, fmt.Errorf("unknown controller %q: known are %s", name, strings.Join(All, ", "))
		}
		sel = append(sel, item)
	}
	return sel, nil
}

// ManagesControllers reports whether any of kube-controller-manager's
// controllers is selected.
func (s Selection) ManagesControllers() bool {
	if s.Enabled(ServiceAccountTokenController) { // it has no service account of its own
		return true
	}
	for name := range serviceAccounts {
		if s.Enabled(name) {
			return true
		}
	}
	return false
}

// Enabled reports whether the controller named runs; an empty selection
// runs every controller.
func (s Selection) Enabled(name string) bool {
	enabled := len(s) == 0
	for _, item := range s {
		switch item {
		case "*", name:
			enabled = true
		case "-*", "-" + name:
			enabled = false
		}
	}
	return enabled
}
