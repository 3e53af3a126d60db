package openapi

// Facts about kube's API types that their Go form does not carry at run
// time: kube's generator reads them from comment markers (+listType,
// +listMapKey, +mapType, +structType, +default, +union, +optional). They
// are kept here, keyed by definition name (and ".field" for fields), and
// checked against kube's own server-side apply schema (the one client-go's
// apply configurations embed) by TestSemanticsMatchKube.

// typeDescriptions are the descriptions of the types with neither a
// generated SwaggerDoc nor a definition kube's published generated code
// gives (kubeDefinitions).
var typeDescriptions = map[string]string{
	// Our own wording: this type's documentation is not available at run
	// time, and the text of kube's is not ours to copy.
	"io.k8s.apimachinery.pkg.util.intstr.IntOrString": "A value that is either a 32-bit integer or a string.",
}

// markerDefaults are the +default values of fields, beyond the zero values
// every non-omitempty scalar and every struct value gets.
var markerDefaults = map[string]interface{}{
	"io.k8s.api.certificates.v1.PodCertificateRequestSpec.maxExpirationSeconds": 86400,
	"io.k8s.api.core.v1.AzureDiskVolumeSource.cachingMode":                      "ReadWrite",
	"io.k8s.api.core.v1.AzureDiskVolumeSource.fsType":                           "ext4",
	"io.k8s.api.core.v1.AzureDiskVolumeSource.kind":                             "Shared",
	"io.k8s.api.core.v1.AzureDiskVolumeSource.readOnly":                         false,
	"io.k8s.api.core.v1.ContainerPort.protocol":                                 "TCP",
	"io.k8s.api.core.v1.FileKeySelector.optional":                               false,
	"io.k8s.api.core.v1.GRPCAction.service":                                     "",
	"io.k8s.api.core.v1.ISCSIPersistentVolumeSource.iscsiInterface":             "default",
	"io.k8s.api.core.v1.ISCSIVolumeSource.iscsiInterface":                       "default",
	"io.k8s.api.core.v1.LocalObjectReference.name":                              "",
	"io.k8s.api.core.v1.RBDPersistentVolumeSource.keyring":                      "/etc/ceph/keyring",
	"io.k8s.api.core.v1.RBDPersistentVolumeSource.pool":                         "rbd",
	"io.k8s.api.core.v1.RBDPersistentVolumeSource.user":                         "admin",
	"io.k8s.api.core.v1.RBDVolumeSource.keyring":                                "/etc/ceph/keyring",
	"io.k8s.api.core.v1.RBDVolumeSource.pool":                                   "rbd",
	"io.k8s.api.core.v1.RBDVolumeSource.user":                                   "admin",
	"io.k8s.api.core.v1.ReplicationControllerSpec.minReadySeconds":              0,
	"io.k8s.api.core.v1.ReplicationControllerSpec.replicas":                     1,
	"io.k8s.api.core.v1.ScaleIOPersistentVolumeSource.fsType":                   "xfs",
	"io.k8s.api.core.v1.ScaleIOPersistentVolumeSource.storageMode":              "ThinProvisioned",
	"io.k8s.api.core.v1.ScaleIOVolumeSource.fsType":                             "xfs",
	"io.k8s.api.core.v1.ScaleIOVolumeSource.storageMode":                        "ThinProvisioned",
	"io.k8s.api.resource.v1.DeviceToleration.operator":                          "Equal",
	"io.k8s.api.core.v1.ServicePort.protocol":                                   "TCP",
}

// requiredOverrides are the fields whose +optional or +required marker
// disagrees with their json tag (required = no omitempty or omitzero).
var requiredOverrides = map[string]bool{
	"io.k8s.api.events.v1.Event.metadata":                                                                    false,
	"io.k8s.api.authentication.v1.TokenReviewSpec.token":                                                     true,
	"io.k8s.api.authentication.v1.TokenRequest.spec":                                                         false,
	"io.k8s.api.authentication.v1.TokenRequestSpec.audiences":                                                false,
	"io.k8s.api.authentication.v1.TokenRequestSpec.expirationSeconds":                                        false,
	"io.k8s.api.authentication.v1.TokenRequestSpec.boundObjectRef":                                           false,
	"io.k8s.api.authentication.v1.TokenRequestStatus.token":                                                  false,
	"io.k8s.api.authentication.v1.TokenRequestStatus.expirationTimestamp":                                    false,
	"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus.conditions":     false,
	"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus.acceptedNames":  false,
	"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus.storedVersions": false,
	"io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding.spec":                              true,
	"io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec.policyName":                    true,
	"io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec.validationActions":             true,
	"io.k8s.api.apps.v1.ControllerRevision.revision":                                                         false,
	"io.k8s.api.apps.v1.DaemonSet.spec":                                                                      true,
	"io.k8s.api.apps.v1.DaemonSetCondition.status":                                                           false,
	"io.k8s.api.apps.v1.DaemonSetCondition.type":                                                             false,
	"io.k8s.api.apps.v1.Deployment.spec":                                                                     true,
	"io.k8s.api.apps.v1.DeploymentCondition.status":                                                          false,
	"io.k8s.api.apps.v1.DeploymentCondition.type":                                                            false,
	"io.k8s.api.apps.v1.ReplicaSet.spec":                                                                     true,
	"io.k8s.api.apps.v1.ReplicaSetCondition.status":                                                          false,
	"io.k8s.api.apps.v1.ReplicaSetCondition.type":                                                            false,
	"io.k8s.api.apps.v1.StatefulSet.spec":                                                                    true,
	"io.k8s.api.apps.v1.StatefulSetCondition.status":                                                         false,
	"io.k8s.api.apps.v1.StatefulSetCondition.type":                                                           false,
	"io.k8s.api.apps.v1.StatefulSetOrdinals.start":                                                           false,
	"io.k8s.api.apps.v1.StatefulSetSpec.serviceName":                                                         false,
	"io.k8s.api.apps.v1.StatefulSetStatus.availableReplicas":                                                 false,
	"io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler.spec":                                                 true,
	"io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler.spec":                                                 true,
	"io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus.currentMetrics":                                 false,
	"io.k8s.api.batch.v1.CronJob.spec":                                                                       true,
	"io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern.status":                                      false,
	"io.k8s.api.core.v1.AzureFilePersistentVolumeSource.secretNamespace":                                     false,
	"io.k8s.api.core.v1.ContainerImage.names":                                                                false,
	"io.k8s.api.core.v1.ContainerRestartRule.action":                                                         true,
	"io.k8s.api.core.v1.ContainerRestartRuleOnExitCodes.operator":                                            true,
	"io.k8s.api.core.v1.Event.reportingComponent":                                                            false,
	"io.k8s.api.core.v1.Event.reportingInstance":                                                             false,
	"io.k8s.api.core.v1.GRPCAction.service":                                                                  false,
	"io.k8s.api.core.v1.ImageVolumeStatus.imageRef":                                                          true,
	"io.k8s.api.core.v1.NodeRuntimeHandler.name":                                                             false,
	"io.k8s.api.core.v1.PodCertificateProjection.keyType":                                                    true,
	"io.k8s.api.core.v1.PodCertificateProjection.signerName":                                                 true,
	"io.k8s.api.core.v1.ProjectedVolumeSource.sources":                                                       false,
	"io.k8s.api.core.v1.TypedLocalObjectReference.apiGroup":                                                  false,
	"io.k8s.api.core.v1.TypedObjectReference.apiGroup":                                                       false,
	"io.k8s.api.discovery.v1.EndpointSlice.endpoints":                                                        false,
	"io.k8s.api.discovery.v1.EndpointSlice.ports":                                                            false,
	"io.k8s.api.flowcontrol.v1.FlowSchema.spec":                                                              true,
	"io.k8s.api.flowcontrol.v1.FlowSchemaCondition.type":                                                     true,
	"io.k8s.api.flowcontrol.v1.FlowSchemaSpec.matchingPrecedence":                                            false,
	"io.k8s.api.flowcontrol.v1.LimitedPriorityLevelConfiguration.limitResponse":                              true,
	"io.k8s.api.flowcontrol.v1.LimitedPriorityLevelConfiguration.nominalConcurrencyShares":                   false,
	"io.k8s.api.flowcontrol.v1.PriorityLevelConfiguration.spec":                                              true,
	"io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationCondition.type":                                     true,
	"io.k8s.api.flowcontrol.v1.QueuingConfiguration.handSize":                                                false,
	"io.k8s.api.flowcontrol.v1.QueuingConfiguration.queueLengthLimit":                                        false,
	"io.k8s.api.flowcontrol.v1.QueuingConfiguration.queues":                                                  false,
	"io.k8s.api.flowcontrol.v1.ResourcePolicyRule.namespaces":                                                false,
	"io.k8s.api.networking.v1.IPAddress.spec":                                                                true,
	"io.k8s.api.networking.v1.IPAddressSpec.parentRef":                                                       true,
	"io.k8s.api.networking.v1.IngressClassParametersReference.scope":                                         false,
	"io.k8s.api.networking.v1.NetworkPolicySpec.podSelector":                                                 false,
	"io.k8s.api.networking.v1.ParentReference.name":                                                          true,
	"io.k8s.api.networking.v1.ParentReference.resource":                                                      true,
	"io.k8s.api.policy.v1.PodDisruptionBudgetStatus.currentHealthy":                                          false,
	"io.k8s.api.policy.v1.PodDisruptionBudgetStatus.desiredHealthy":                                          false,
	"io.k8s.api.policy.v1.PodDisruptionBudgetStatus.disruptionsAllowed":                                      false,
	"io.k8s.api.policy.v1.PodDisruptionBudgetStatus.expectedPods":                                            false,
	"io.k8s.api.rbac.v1.ClusterRole.rules":                                                                   false,
	"io.k8s.api.rbac.v1.Role.rules":                                                                          false,
	"io.k8s.api.rbac.v1.RoleRef.apiGroup":                                                                    false,
	"io.k8s.api.resource.v1.AllocatedDeviceStatus.conditions":                                                false,
	"io.k8s.api.resource.v1.CapacityRequestPolicy.default":                                                   false,
	"io.k8s.api.resource.v1.CapacityRequestPolicyRange.min":                                                  true,
	"io.k8s.api.resource.v1.CounterSet.counters":                                                             true,
	"io.k8s.api.resource.v1.DeviceClaim.requests":                                                            false,
	"io.k8s.api.resource.v1.DeviceClass.spec":                                                                false,
	"io.k8s.api.resource.v1.DeviceCounterConsumption.counters":                                               true,
	"io.k8s.api.resource.v1.DeviceTaintRuleSpec.taint":                                                       true,
	"io.k8s.api.resource.v1.ResourceClaim.spec":                                                              false,
	"io.k8s.api.resource.v1.ResourceClaimSpec.devices":                                                       false,
	"io.k8s.api.resource.v1.ResourceClaimTemplate.spec":                                                      false,
	"io.k8s.api.resource.v1.ResourceClaimTemplateSpec.spec":                                                  false,
	"io.k8s.api.scheduling.v1.PriorityClass.value":                                                           false,
	"io.k8s.api.storage.v1.CSINodeDriver.topologyKeys":                                                       false,
}

// listTypes are the lists whose +listType (and +listMapKey) markers say
// something other than their patch strategy implies.
var listTypes = map[string]listType{
	"io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec.validationActions":         {Type: "set"},
	"io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyStatus.conditions":                     {Type: "map", Keys: []string{"type"}},
	"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus.conditions": {Type: "map", Keys: []string{"type"}},
	"io.k8s.api.batch.v1.JobStatus.conditions":                                                           {Type: "atomic"},
	"io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement.values":                                  {Type: "set"},
	"io.k8s.api.batch.v1.UncountedTerminatedPods.failed":                                                 {Type: "set"},
	"io.k8s.api.batch.v1.UncountedTerminatedPods.succeeded":                                              {Type: "set"},
	"io.k8s.api.certificates.v1.CertificateSigningRequestStatus.conditions":                              {Type: "map", Keys: []string{"type"}},
	"io.k8s.api.core.v1.Container.ports":                                                                 {Type: "map", Keys: []string{"containerPort", "protocol"}},
	"io.k8s.api.core.v1.ContainerRestartRuleOnExitCodes.values":                                          {Type: "set"},
	"io.k8s.api.core.v1.EphemeralContainerCommon.ports":                                                  {Type: "map", Keys: []string{"containerPort", "protocol"}},
	"io.k8s.api.core.v1.NodeAllocatableResourceClaimStatus.containers":                                   {Type: "set"},
	"io.k8s.api.core.v1.NodePodPreemptionPolicy.disableResizePreemption":                                 {Type: "set"},
	"io.k8s.api.core.v1.PodSpec.topologySpreadConstraints":                                               {Type: "map", Keys: []string{"topologyKey", "whenUnsatisfiable"}},
	"io.k8s.api.core.v1.PodStatus.hostIPs":                                                               {Type: "atomic"},
	"io.k8s.api.core.v1.PodStatus.volumeHealth":                                                          {Type: "map", Keys: []string{"name"}},
	"io.k8s.api.core.v1.PodVolumeHealth.healthConditions":                                                {Type: "map", Keys: []string{"status", "reason"}},
	"io.k8s.api.core.v1.ResourceRequirements.claims":                                                     {Type: "map", Keys: []string{"name"}},
	"io.k8s.api.core.v1.ResourceStatus.resources":                                                        {Type: "map", Keys: []string{"resourceID"}},
	"io.k8s.api.core.v1.ServiceSpec.ports":                                                               {Type: "map", Keys: []string{"port", "protocol"}},
	"io.k8s.api.core.v1.VolumeHealthStatus.healthConditions":                                             {Type: "map", Keys: []string{"status", "reason"}},
	"io.k8s.api.core.v1.VolumeMount.bindMountOptions":                                                    {Type: "set"},
	"io.k8s.api.discovery.v1.Endpoint.addresses":                                                         {Type: "set"},
	"io.k8s.api.flowcontrol.v1.NonResourcePolicyRule.nonResourceURLs":                                    {Type: "set"},
	"io.k8s.api.flowcontrol.v1.NonResourcePolicyRule.verbs":                                              {Type: "set"},
	"io.k8s.api.flowcontrol.v1.ResourcePolicyRule.apiGroups":                                             {Type: "set"},
	"io.k8s.api.flowcontrol.v1.ResourcePolicyRule.namespaces":                                            {Type: "set"},
	"io.k8s.api.flowcontrol.v1.ResourcePolicyRule.resources":                                             {Type: "set"},
	"io.k8s.api.flowcontrol.v1.ResourcePolicyRule.verbs":                                                 {Type: "set"},
	"io.k8s.api.resource.v1.AllocatedDeviceStatus.conditions":                                            {Type: "map", Keys: []string{"type"}},
	"io.k8s.api.resource.v1.DeviceRequestAllocationResult.skipNodeOperations":                            {Type: "set"},
	"io.k8s.api.resource.v1.ResourceClaimStatus.devices":                                                 {Type: "map", Keys: []string{"driver", "device", "pool", "shareID"}},
	"io.k8s.api.resource.v1.ResourceSliceSpec.skipNodeOperations":                                        {Type: "set"},
	"io.k8s.api.storage.v1.CSIDriverSpec.volumeLifecycleModes":                                           {Type: "set"},
}

// mapTypes are the fields marked +mapType (maps) or +structType (struct
// values whose type says otherwise).
var mapTypes = map[string]string{
	"io.k8s.api.core.v1.PersistentVolumeClaimStatus.allocatedResourceStatuses": "granular",
	"io.k8s.api.core.v1.PersistentVolumeSpec.claimRef":                         "granular",
	"io.k8s.api.core.v1.PodSpec.nodeSelector":                                  "atomic",
	"io.k8s.api.core.v1.ReplicationControllerSpec.selector":                    "atomic",
	"io.k8s.api.core.v1.ServiceSpec.selector":                                  "atomic",
	"io.k8s.api.node.v1.Scheduling.nodeSelector":                               "atomic",
}

// structTypes are the struct types marked +structType.
var structTypes = map[string]string{
	"io.k8s.api.admissionregistration.v1.MatchResources":          "atomic",
	"io.k8s.api.admissionregistration.v1.NamedRuleWithOperations": "atomic",
	"io.k8s.api.admissionregistration.v1.ParamKind":               "atomic",
	"io.k8s.api.admissionregistration.v1.ParamRef":                "atomic",
	"io.k8s.api.admissionregistration.v1.Variable":                "atomic",
	"io.k8s.api.autoscaling.v1.CrossVersionObjectReference":       "atomic",
	"io.k8s.api.core.v1.ConfigMapKeySelector":                     "atomic",
	"io.k8s.api.core.v1.EndpointAddress":                          "atomic",
	"io.k8s.api.core.v1.EndpointPort":                             "atomic",
	"io.k8s.api.core.v1.EvictionResponder":                        "atomic",
	"io.k8s.api.core.v1.FileKeySelector":                          "atomic",
	"io.k8s.api.core.v1.LocalObjectReference":                     "atomic",
	"io.k8s.api.core.v1.NodeSelector":                             "atomic",
	"io.k8s.api.core.v1.NodeSelectorTerm":                         "atomic",
	"io.k8s.api.core.v1.ObjectFieldSelector":                      "atomic",
	"io.k8s.api.core.v1.ObjectReference":                          "atomic",
	"io.k8s.api.core.v1.ResourceFieldSelector":                    "atomic",
	"io.k8s.api.core.v1.ScopeSelector":                            "atomic",
	"io.k8s.api.core.v1.SecretKeySelector":                        "atomic",
	"io.k8s.api.core.v1.SecretReference":                          "atomic",
	"io.k8s.api.core.v1.TopologySelectorTerm":                     "atomic",
	"io.k8s.api.core.v1.TypedLocalObjectReference":                "atomic",
	"io.k8s.api.discovery.v1.EndpointPort":                        "atomic",
	"io.k8s.api.networking.v1.ServiceBackendPort":                 "atomic",
	"io.k8s.api.rbac.v1.RoleRef":                                  "atomic",
	"io.k8s.api.rbac.v1.Subject":                                  "atomic",
	"io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector":          "atomic",
	"io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference":         "atomic",
}

// unions are the struct types marked +union, in kube's extension form.
var unions = map[string][]interface{}{
	"io.k8s.api.core.v1.AppArmorProfile":                              union("type", "localhostProfile", "LocalhostProfile"),
	"io.k8s.api.core.v1.PodSchedulingGroup":                           union("", "podGroupName", "PodGroupName"),
	"io.k8s.api.core.v1.SeccompProfile":                               union("type", "localhostProfile", "LocalhostProfile"),
	"io.k8s.api.flowcontrol.v1.LimitResponse":                         union("type", "queuing", "Queuing"),
	"io.k8s.api.scheduling.v1alpha3.WorkloadPodGroupDisruptionMode":   union("", "all", "All", "single", "Single"),
	"io.k8s.api.scheduling.v1alpha3.WorkloadPodGroupSchedulingPolicy": union("", "basic", "Basic", "gang", "Gang"),
	"io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationSpec":        union("type", "exempt", "Exempt", "limited", "Limited"),
	"io.k8s.api.flowcontrol.v1.Subject":                               union("kind", "group", "Group", "serviceAccount", "ServiceAccount", "user", "User"),
}

// union is one x-kubernetes-unions entry: the discriminator field (if any)
// and pairs of member field and the discriminator value naming it.
func union(discriminator string, fieldValues ...string) []interface{} {
	members := map[string]interface{}{}
	for i := 0; i+1 < len(fieldValues); i += 2 {
		members[fieldValues[i]] = fieldValues[i+1]
	}
	u := map[string]interface{}{"fields-to-discriminateBy": members}
	if discriminator != "" {
		u["discriminator"] = discriminator
	}
	return []interface{}{u}
}
