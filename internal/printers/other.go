package printers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	discoveryv1beta1 "k8s.io/api/discovery/v1beta1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	networkingv1beta1 "k8s.io/api/networking/v1beta1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

const (
	// isDefaultStorageClassAnnotation marks the default StorageClass.
	isDefaultStorageClassAnnotation = "storageclass.kubernetes.io/is-default-class"
	// betaIsDefaultStorageClassAnnotation is its deprecated beta form.
	betaIsDefaultStorageClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
)

func addOther(add addFunc) {
	add("autoscaling", horizontalPodAutoscalerPrinter(), "horizontalpodautoscalers")
	add("policy", podDisruptionBudgetPrinter(), "poddisruptionbudgets")

	add("networking.k8s.io", ingressPrinter(), "ingresses")
	add("networking.k8s.io", ingressClassPrinter(), "ingressclasses")
	add("networking.k8s.io", networkPolicyPrinter(), "networkpolicies")
	add("networking.k8s.io", serviceCIDRPrinter(), "servicecidrs")
	add("networking.k8s.io", ipAddressPrinter(), "ipaddresses")

	// roles and clusterroles use the default printer, as in kube-apiserver.
	add("rbac.authorization.k8s.io", roleBindingPrinter("roleBinding", func(o *rbacv1.RoleBinding) (string, rbacv1.RoleRef, []rbacv1.Subject, metav1.Time) {
		return o.Name, o.RoleRef, o.Subjects, o.CreationTimestamp
	}, rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"]), "rolebindings")
	add("rbac.authorization.k8s.io", roleBindingPrinter("clusterRoleBinding", func(o *rbacv1.ClusterRoleBinding) (string, rbacv1.RoleRef, []rbacv1.Subject, metav1.Time) {
		return o.Name, o.RoleRef, o.Subjects, o.CreationTimestamp
	}, rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"]), "clusterrolebindings")

	add("storage.k8s.io", storageClassPrinter(), "storageclasses")
	add("storage.k8s.io", volumeAttributesClassPrinter(), "volumeattributesclasses")
	add("storage.k8s.io", volumeAttachmentPrinter(), "volumeattachments")
	add("storage.k8s.io", csiNodePrinter(), "csinodes")
	add("storage.k8s.io", csiDriverPrinter(), "csidrivers")
	add("storage.k8s.io", csiStorageCapacityPrinter(), "csistoragecapacities")

	add("scheduling.k8s.io", priorityClassPrinter(), "priorityclasses")
	add("coordination.k8s.io", leasePrinter(), "leases")
	add("discovery.k8s.io", endpointSlicePrinter(), "endpointslices")
	add("node.k8s.io", runtimeClassPrinter(), "runtimeclasses")

	add("certificates.k8s.io", certificateSigningRequestPrinter(), "certificatesigningrequests")
	add("certificates.k8s.io", clusterTrustBundlePrinter(), "clustertrustbundles")
	add("certificates.k8s.io", podCertificateRequestPrinter(), "podcertificaterequests")

	const admission = "admissionregistration.k8s.io"
	add(admission, webhookConfigurationPrinter(func(o *admissionregistrationv1.MutatingWebhookConfiguration) (string, int, metav1.Time) {
		return o.Name, len(o.Webhooks), o.CreationTimestamp
	}), "mutatingwebhookconfigurations")
	add(admission, webhookConfigurationPrinter(func(o *admissionregistrationv1.ValidatingWebhookConfiguration) (string, int, metav1.Time) {
		return o.Name, len(o.Webhooks), o.CreationTimestamp
	}), "validatingwebhookconfigurations")
	add(admission, admissionPolicyPrinter("Validations", "Validations indicates the number of validation rules defined in this configuration",
		func(o *admissionregistrationv1.ValidatingAdmissionPolicy) (string, int, *admissionregistrationv1.ParamKind, metav1.Time) {
			return o.Name, len(o.Spec.Validations), o.Spec.ParamKind, o.CreationTimestamp
		}), "validatingadmissionpolicies")
	add(admission, admissionPolicyPrinter("Mutations", "Mutation indicates the number of mutations rules defined in this configuration",
		func(o *admissionregistrationv1.MutatingAdmissionPolicy) (string, int, *admissionregistrationv1.ParamKind, metav1.Time) {
			return o.Name, len(o.Spec.Mutations), o.Spec.ParamKind, o.CreationTimestamp
		}), "mutatingadmissionpolicies")
	add(admission, admissionPolicyBindingPrinter(func(o *admissionregistrationv1.ValidatingAdmissionPolicyBinding) (string, string, *admissionregistrationv1.ParamRef, metav1.Time) {
		return o.Name, o.Spec.PolicyName, o.Spec.ParamRef, o.CreationTimestamp
	}), "validatingadmissionpolicybindings")
	add(admission, admissionPolicyBindingPrinter(func(o *admissionregistrationv1.MutatingAdmissionPolicyBinding) (string, string, *admissionregistrationv1.ParamRef, metav1.Time) {
		return o.Name, o.Spec.PolicyName, o.Spec.ParamRef, o.CreationTimestamp
	}), "mutatingadmissionpolicybindings")

	add("flowcontrol.apiserver.k8s.io", flowSchemaPrinter(), "flowschemas")
	add("flowcontrol.apiserver.k8s.io", priorityLevelConfigurationPrinter(), "prioritylevelconfigurations")

	add("resource.k8s.io", nameAgePrinter[resourcev1.DeviceClass](), "deviceclasses")
	add("resource.k8s.io", resourceClaimPrinter(), "resourceclaims")
	add("resource.k8s.io", nameAgePrinter[resourcev1.ResourceClaimTemplate](), "resourceclaimtemplates")
	add("resource.k8s.io", resourceSlicePrinter(), "resourceslices")
	// customresourcedefinitions use the default printer, as in kube-apiserver.
}

// nameAgePrinter prints the NAME and AGE of objects of type T.
func nameAgePrinter[T any, PT interface {
	typedPtr[T]
	metav1.Object
}]() *Printer {
	return typed(cols(nameColumn(), ageColumn()), func(obj PT, now time.Time) []interface{} {
		return []interface{}{obj.GetName(), since(obj.GetCreationTimestamp(), now)}
	})
}

// --- autoscaling ---

func horizontalPodAutoscalerPrinter() *Printer {
	// kube-apiserver takes these descriptions from autoscaling/v2beta1,
	// which k8s.io/api no longer has; autoscaling/v2 is the closest.
	specDoc := autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()
	columns := cols(
		nameColumn(),
		column("Reference", "string", specDoc["scaleTargetRef"]),
		column("Targets", "string", specDoc["metrics"]),
		column("MinPods", "string", specDoc["minReplicas"]),
		column("MaxPods", "string", specDoc["maxReplicas"]),
		column("Replicas", "string", autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"]),
		ageColumn(),
	)
	return &Printer{
		Columns: columns,
		Row: func(obj runtime.Object, now time.Time) []interface{} {
			if h, ok := as[autoscalingv2.HorizontalPodAutoscaler](obj); ok {
				return printHPA(h, now)
			}
			if h, ok := as[autoscalingv1.HorizontalPodAutoscaler](obj); ok {
				return printHPA(hpaV2(h), now)
			}
			return fallbackRow(columns, obj, now)
		},
	}
}

// hpaV2 converts an autoscaling/v1 HPA to autoscaling/v2 as far as the
// printer needs: its CPU utilization target and current value.
func hpaV2(in *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	out := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: in.ObjectMeta,
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{
				Kind: in.Spec.ScaleTargetRef.Kind, Name: in.Spec.ScaleTargetRef.Name, APIVersion: in.Spec.ScaleTargetRef.APIVersion,
			},
			MinReplicas: in.Spec.MinReplicas,
			MaxReplicas: in.Spec.MaxReplicas,
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			CurrentReplicas: in.Status.CurrentReplicas,
			DesiredReplicas: in.Status.DesiredReplicas,
		},
	}
	if p := in.Spec.TargetCPUUtilizationPercentage; p != nil {
		target := *p
		out.Spec.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name:   corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &target},
			},
		}}
	}
	if p := in.Status.CurrentCPUUtilizationPercentage; p != nil {
		current := *p
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{
				Name:    corev1.ResourceCPU,
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: &current},
			},
		}}
	}
	return out
}

func printHPA(obj *autoscalingv2.HorizontalPodAutoscaler, now time.Time) []interface{} {
	reference := obj.Spec.ScaleTargetRef.Kind + "/" + obj.Spec.ScaleTargetRef.Name
	minPods := "<unset>"
	if obj.Spec.MinReplicas != nil {
		minPods = strconv.Itoa(int(*obj.Spec.MinReplicas))
	}
	return []interface{}{
		obj.Name, reference, formatHPAMetrics(obj.Spec.Metrics, obj.Status.CurrentMetrics), minPods,
		int64(obj.Spec.MaxReplicas), int64(obj.Status.CurrentReplicas), since(obj.CreationTimestamp, now),
	}
}

// formatHPAMetrics prints up to two "current/target" metrics.
func formatHPAMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	const max = 2
	status := func(i int) *autoscalingv2.MetricStatus {
		if i < len(statuses) {
			return &statuses[i]
		}
		return nil
	}
	percent := func(p *int32) string { return fmt.Sprintf("%d%%", *p) }
	list := make([]string, 0, len(specs))
	for i, spec := range specs {
		st := status(i)
		current := "<unknown>"
		switch {
		case spec.Type == autoscalingv2.ExternalMetricSourceType && spec.External != nil:
			if spec.External.Target.AverageValue != nil {
				if st != nil && st.External != nil && st.External.Current.AverageValue != nil {
					current = st.External.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", current, spec.External.Target.AverageValue.String()))
			} else {
				if st != nil && st.External != nil {
					current = st.External.Current.Value.String()
				}
				list = append(list, fmt.Sprintf("%s/%s", current, spec.External.Target.Value.String()))
			}
		case spec.Type == autoscalingv2.PodsMetricSourceType && spec.Pods != nil:
			if st != nil && st.Pods != nil {
				current = st.Pods.Current.AverageValue.String()
			}
			list = append(list, fmt.Sprintf("%s/%s", current, spec.Pods.Target.AverageValue.String()))
		case spec.Type == autoscalingv2.ObjectMetricSourceType && spec.Object != nil:
			if spec.Object.Target.AverageValue != nil {
				if st != nil && st.Object != nil && st.Object.Current.AverageValue != nil {
					current = st.Object.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", current, spec.Object.Target.AverageValue.String()))
			} else {
				if st != nil && st.Object != nil {
					current = st.Object.Current.Value.String()
				}
				list = append(list, fmt.Sprintf("%s/%s", current, spec.Object.Target.Value.String()))
			}
		case spec.Type == autoscalingv2.ResourceMetricSourceType && spec.Resource != nil:
			if spec.Resource.Target.AverageValue != nil {
				if st != nil && st.Resource != nil {
					current = st.Resource.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", spec.Resource.Name, current, spec.Resource.Target.AverageValue.String()))
			} else {
				if st != nil && st.Resource != nil && st.Resource.Current.AverageUtilization != nil {
					current = percent(st.Resource.Current.AverageUtilization)
				}
				target := "<auto>"
				if spec.Resource.Target.AverageUtilization != nil {
					target = percent(spec.Resource.Target.AverageUtilization)
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", spec.Resource.Name, current, target))
			}
		case spec.Type == autoscalingv2.ContainerResourceMetricSourceType && spec.ContainerResource != nil:
			if spec.ContainerResource.Target.AverageValue != nil {
				if st != nil && st.ContainerResource != nil {
					current = st.ContainerResource.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", spec.ContainerResource.Name, current, spec.ContainerResource.Target.AverageValue.String()))
			} else {
				if st != nil && st.ContainerResource != nil && st.ContainerResource.Current.AverageUtilization != nil {
					current = percent(st.ContainerResource.Current.AverageUtilization)
				}
				target := "<auto>"
				if spec.ContainerResource.Target.AverageUtilization != nil {
					target = percent(spec.ContainerResource.Target.AverageUtilization)
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", spec.ContainerResource.Name, current, target))
			}
		default:
			list = append(list, "<unknown type>")
		}
	}
	if count := len(list); count > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:max], ", "), count-max)
	}
	return strings.Join(list, ", ")
}

// --- policy ---

func podDisruptionBudgetPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Min Available", "string", "The minimum number of pods that must be available."),
		column("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
		column("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
		ageColumn(),
	), func(obj *policyv1.PodDisruptionBudget, now time.Time) []interface{} {
		minAvailable, maxUnavailable := "N/A", "N/A"
		if obj.Spec.MinAvailable != nil {
			minAvailable = obj.Spec.MinAvailable.String()
		}
		if obj.Spec.MaxUnavailable != nil {
			maxUnavailable = obj.Spec.MaxUnavailable.String()
		}
		return []interface{}{obj.Name, minAvailable, maxUnavailable, int64(obj.Status.DisruptionsAllowed), since(obj.CreationTimestamp, now)}
	})
}

// --- networking ---

func ingressPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Class", "string", "The name of the IngressClass resource that should be used for additional configuration"),
		column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
		column("Address", "string", "Address is a list containing ingress points for the load-balancer"),
		column("Ports", "string", "Ports of TLS configurations that open"),
		ageColumn(),
	), func(obj *networkingv1.Ingress, now time.Time) []interface{} {
		className := "<none>"
		if obj.Spec.IngressClassName != nil {
			className = *obj.Spec.IngressClassName
		}
		ips := make([]string, len(obj.Status.LoadBalancer.Ingress))
		hosts := make([]string, len(obj.Status.LoadBalancer.Ingress))
		for i, in := range obj.Status.LoadBalancer.Ingress {
			ips[i], hosts[i] = in.IP, in.Hostname
		}
		ports := "80"
		if len(obj.Spec.TLS) != 0 {
			ports = "80, 443"
		}
		return []interface{}{
			obj.Name, className, ingressHosts(obj.Spec.Rules), loadBalancerAddresses(ips, hosts, true), ports,
			since(obj.CreationTimestamp, now),
		}
	})
}

// ingressHosts lists up to three rule hosts, "*" when there are none.
func ingressHosts(rules []networkingv1.IngressRule) string {
	const max = 3
	var list []string
	more := false
	for _, rule := range rules {
		if len(list) == max {
			more = true
		}
		if !more && rule.Host != "" {
			list = append(list, rule.Host)
		}
	}
	if len(list) == 0 {
		return "*"
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, len(rules)-max)
	}
	return ret
}

func ingressClassPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Controller", "string", "Controller that is responsible for handling this class"),
		column("Parameters", "string", "A reference to a resource with additional parameters"),
		ageColumn(),
	), func(obj *networkingv1.IngressClass, now time.Time) []interface{} {
		parameters := "<none>"
		if p := obj.Spec.Parameters; p != nil {
			parameters = p.Kind
			if p.APIGroup != nil {
				parameters += "." + *p.APIGroup
			}
			parameters += "/" + p.Name
		}
		return []interface{}{obj.Name, obj.Spec.Controller, parameters, since(obj.CreationTimestamp, now)}
	})
}

func networkPolicyPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Pod-Selector", "string", extensionsv1beta1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]),
		ageColumn(),
	), func(obj *networkingv1.NetworkPolicy, now time.Time) []interface{} {
		return []interface{}{obj.Name, metav1.FormatLabelSelector(&obj.Spec.PodSelector), since(obj.CreationTimestamp, now)}
	})
}

func serviceCIDRPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("CIDRs", "string", networkingv1beta1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]),
		ageColumn(),
	), func(obj *networkingv1.ServiceCIDR, now time.Time) []interface{} {
		return []interface{}{obj.Name, strings.Join(obj.Spec.CIDRs, ","), since(obj.CreationTimestamp, now)}
	})
}

// ipAddressPrinter prints NAME and PARENTREF. Like kube-apiserver, it adds
// an age cell the columns do not declare (kubectl ignores extra cells).
func ipAddressPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("ParentRef", "string", networkingv1beta1.IPAddressSpec{}.SwaggerDoc()["parentRef"]),
	), func(obj *networkingv1.IPAddress, now time.Time) []interface{} {
		parent := "<none>"
		if ref := obj.Spec.ParentRef; ref != nil {
			parent = strings.ToLower(schema.GroupResource{Group: ref.Group, Resource: ref.Resource}.String())
			if ref.Namespace != "" {
				parent += "/" + ref.Namespace
			}
			parent += "/" + ref.Name
		}
		return []interface{}{obj.Name, parent, since(obj.CreationTimestamp, now)}
	})
}

// --- rbac ---

// roleBindingPrinter prints role bindings and cluster role bindings; kind
// names the resource in the subject column descriptions.
func roleBindingPrinter[T any, PT typedPtr[T]](kind string, fields func(PT) (string, rbacv1.RoleRef, []rbacv1.Subject, metav1.Time), roleRefDoc string) *Printer {
	return typed(cols(
		nameColumn(),
		column("Role", "string", roleRefDoc),
		ageColumn(),
		wide("Users", "string", "Users in the "+kind),
		wide("Groups", "string", "Groups in the "+kind),
		wide("ServiceAccounts", "string", "ServiceAccounts in the "+kind),
	), func(obj PT, now time.Time) []interface{} {
		name, roleRef, subjects, created := fields(obj)
		var users, groups, sas []string
		for _, s := range subjects {
			switch s.Kind {
			case rbacv1.ServiceAccountKind:
				sas = append(sas, s.Namespace+"/"+s.Name)
			case rbacv1.UserKind:
				users = append(users, s.Name)
			case rbacv1.GroupKind:
				groups = append(groups, s.Name)
			}
		}
		return []interface{}{
			name, roleRef.Kind + "/" + roleRef.Name, since(created, now),
			strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", "),
		}
	})
}

// --- storage ---

func storageClassPrinter() *Printer {
	doc := storagev1.StorageClass{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("Provisioner", "string", doc["provisioner"]),
		column("ReclaimPolicy", "string", doc["reclaimPolicy"]),
		column("VolumeBindingMode", "string", doc["volumeBindingMode"]),
		column("AllowVolumeExpansion", "string", doc["allowVolumeExpansion"]),
		ageColumn(),
	), func(obj *storagev1.StorageClass, now time.Time) []interface{} {
		name := obj.Name
		if obj.Annotations[isDefaultStorageClassAnnotation] == "true" || obj.Annotations[betaIsDefaultStorageClassAnnotation] == "true" {
			name += " (default)"
		}
		reclaimPolicy := string(corev1.PersistentVolumeReclaimDelete)
		if obj.ReclaimPolicy != nil {
			reclaimPolicy = string(*obj.ReclaimPolicy)
		}
		bindingMode := string(storagev1.VolumeBindingImmediate)
		if obj.VolumeBindingMode != nil {
			bindingMode = string(*obj.VolumeBindingMode)
		}
		return []interface{}{
			name, obj.Provisioner, reclaimPolicy, bindingMode, deref(obj.AllowVolumeExpansion), since(obj.CreationTimestamp, now),
		}
	})
}

func volumeAttributesClassPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("DriverName", "string", storagev1.VolumeAttributesClass{}.SwaggerDoc()["driverName"]),
		ageColumn(),
	), func(obj *storagev1.VolumeAttributesClass, now time.Time) []interface{} {
		return []interface{}{obj.Name, obj.DriverName, since(obj.CreationTimestamp, now)}
	})
}

func volumeAttachmentPrinter() *Printer {
	specDoc := storagev1.VolumeAttachmentSpec{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		metav1.TableColumnDefinition{Name: "Attacher", Type: "string", Format: "name", Description: specDoc["attacher"]},
		column("PV", "string", storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]),
		column("Node", "string", specDoc["nodeName"]),
		column("Attached", "boolean", storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]),
		ageColumn(),
	), func(obj *storagev1.VolumeAttachment, now time.Time) []interface{} {
		return []interface{}{
			obj.Name, obj.Spec.Attacher, deref(obj.Spec.Source.PersistentVolumeName), obj.Spec.NodeName,
			obj.Status.Attached, since(obj.CreationTimestamp, now),
		}
	})
}

func csiNodePrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node"),
		ageColumn(),
	), func(obj *storagev1.CSINode, now time.Time) []interface{} {
		return []interface{}{obj.Name, int64(len(obj.Spec.Drivers)), since(obj.CreationTimestamp, now)}
	})
}

func csiDriverPrinter() *Printer {
	doc := storagev1.CSIDriverSpec{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("AttachRequired", "boolean", doc["attachRequired"]),
		column("PodInfoOnMount", "boolean", doc["podInfoOnMount"]),
		column("StorageCapacity", "boolean", doc["storageCapacity"]),
		column("TokenRequests", "string", doc["tokenRequests"]),
		column("RequiresRepublish", "boolean", doc["requiresRepublish"]),
		column("Modes", "string", doc["volumeLifecycleModes"]),
		ageColumn(),
	), func(obj *storagev1.CSIDriver, now time.Time) []interface{} {
		attachRequired := true
		if obj.Spec.AttachRequired != nil {
			attachRequired = *obj.Spec.AttachRequired
		}
		modes := make([]string, 0, len(obj.Spec.VolumeLifecycleModes))
		for _, m := range obj.Spec.VolumeLifecycleModes {
			modes = append(modes, string(m))
		}
		modesCell := strings.Join(modes, ",")
		if modesCell == "" {
			modesCell = "<none>"
		}
		tokenRequests := "<unset>"
		if obj.Spec.TokenRequests != nil {
			audiences := make([]string, 0, len(obj.Spec.TokenRequests))
			for _, t := range obj.Spec.TokenRequests {
				audiences = append(audiences, t.Audience)
			}
			tokenRequests = strings.Join(audiences, ",")
		}
		return []interface{}{
			obj.Name, attachRequired, deref(obj.Spec.PodInfoOnMount), deref(obj.Spec.StorageCapacity),
			tokenRequests, deref(obj.Spec.RequiresRepublish), modesCell, since(obj.CreationTimestamp, now),
		}
	})
}

func csiStorageCapacityPrinter() *Printer {
	doc := storagev1.CSIStorageCapacity{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("StorageClassName", "string", doc["storageClassName"]),
		column("Capacity", "string", doc["capacity"]),
	), func(obj *storagev1.CSIStorageCapacity, _ time.Time) []interface{} {
		capacity := "<unset>"
		if obj.Capacity != nil {
			capacity = obj.Capacity.String()
		}
		return []interface{}{obj.Name, obj.StorageClassName, capacity}
	})
}

// --- scheduling, coordination, discovery, node ---

func priorityClassPrinter() *Printer {
	doc := schedulingv1.PriorityClass{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("Value", "integer", doc["value"]),
		column("Global-Default", "boolean", doc["globalDefault"]),
		ageColumn(),
		// Not a priority 1 column in kube-apiserver either.
		column("PreemptionPolicy", "string", doc["preemptionPolicy"]),
	), func(obj *schedulingv1.PriorityClass, now time.Time) []interface{} {
		preemptionPolicy := ""
		if obj.PreemptionPolicy != nil {
			preemptionPolicy = string(*obj.PreemptionPolicy)
		}
		return []interface{}{obj.Name, int64(obj.Value), obj.GlobalDefault, since(obj.CreationTimestamp, now), preemptionPolicy}
	})
}

func leasePrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Holder", "string", coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]),
		ageColumn(),
	), func(obj *coordinationv1.Lease, now time.Time) []interface{} {
		return []interface{}{obj.Name, deref(obj.Spec.HolderIdentity), since(obj.CreationTimestamp, now)}
	})
}

func endpointSlicePrinter() *Printer {
	doc := discoveryv1beta1.EndpointSlice{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("AddressType", "string", doc["addressType"]),
		column("Ports", "string", doc["ports"]),
		column("Endpoints", "string", doc["endpoints"]),
		ageColumn(),
	), func(obj *discoveryv1.EndpointSlice, now time.Time) []interface{} {
		const max = 3
		var ports []string
		for _, p := range obj.Ports {
			if len(ports) == max {
				break
			}
			switch {
			case p.Port != nil:
				ports = append(ports, strconv.Itoa(int(*p.Port)))
			case p.Name != nil:
				ports = append(ports, *p.Name)
			default:
				ports = append(ports, "*")
			}
		}
		var addresses []string
		addressCount := 0
		for _, e := range obj.Endpoints {
			for _, a := range e.Addresses {
				if len(addresses) < max {
					addresses = append(addresses, a)
				}
				addressCount++
			}
		}
		return []interface{}{
			obj.Name, string(obj.AddressType), listWithMore(ports, len(obj.Ports), max),
			listWithMore(addresses, addressCount, max), since(obj.CreationTimestamp, now),
		}
	})
}

// listWithMore joins the first max of count items, noting how many more
// there are, or prints "<unset>" for none.
func listWithMore(list []string, count, max int) string {
	ret := strings.Join(list, ",")
	if count > max {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	if ret == "" {
		return "<unset>"
	}
	return ret
}

func runtimeClassPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		// kube-apiserver looks the description up in ObjectMeta's docs,
		// which have none for "handler".
		column("Handler", "string", objectMetaDoc["handler"]),
		ageColumn(),
	), func(obj *nodev1.RuntimeClass, now time.Time) []interface{} {
		return []interface{}{obj.Name, obj.Handler, since(obj.CreationTimestamp, now)}
	})
}

// --- certificates ---

func certificateSigningRequestPrinter() *Printer {
	specDoc := certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		ageColumn(),
		column("SignerName", "string", specDoc["signerName"]),
		column("Requestor", "string", specDoc["request"]),
		column("RequestedDuration", "string", specDoc["expirationSeconds"]),
		column("Condition", "string", certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]),
	), func(obj *certificatesv1.CertificateSigningRequest, now time.Time) []interface{} {
		signerName := "<none>"
		if obj.Spec.SignerName != "" {
			signerName = obj.Spec.SignerName
		}
		requestedDuration := "<none>"
		if obj.Spec.ExpirationSeconds != nil {
			requestedDuration = duration.HumanDuration(time.Duration(*obj.Spec.ExpirationSeconds) * time.Second)
		}
		return []interface{}{obj.Name, since(obj.CreationTimestamp, now), signerName, obj.Spec.Username, requestedDuration, csrCondition(obj)}
	})
}

// csrCondition summarizes a CSR's conditions: Denied, Approved or Pending,
// then ",Failed" and ",Issued" as they apply.
func csrCondition(csr *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	var status string
	switch {
	case denied:
		status = "Denied"
	case approved:
		status = "Approved"
	default:
		status = "Pending"
	}
	if failed {
		status += ",Failed"
	}
	if len(csr.Status.Certificate) > 0 {
		status += ",Issued"
	}
	return status
}

func clusterTrustBundlePrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("SignerName", "string", certificatesv1beta1.ClusterTrustBundleSpec{}.SwaggerDoc()["signerName"]),
	), func(obj *certificatesv1.ClusterTrustBundle, _ time.Time) []interface{} {
		return []interface{}{obj.Name, orNone(obj.Spec.SignerName)}
	})
}

func podCertificateRequestPrinter() *Printer {
	// kube-apiserver took these from certificates/v1alpha1, which no
	// longer has PodCertificateRequest; v1beta1 is the closest.
	doc := certificatesv1beta1.PodCertificateRequestSpec{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("PodName", "string", doc["podName"]),
		column("ServiceAccountName", "string", doc["serviceAccountName"]),
		column("NodeName", "string", doc["nodeName"]),
		column("SignerName", "string", doc["signerName"]),
		column("State", "string", "Is the request Pending, Issued, Denied, or Failed?"),
	), func(obj *certificatesv1.PodCertificateRequest, _ time.Time) []interface{} {
		// Issued, Denied and Failed are mutually exclusive.
		state := "Pending"
		for _, c := range obj.Status.Conditions {
			switch c.Type {
			case "Issued", "Denied", "Failed":
				state = c.Type
			}
		}
		return []interface{}{obj.Name, obj.Spec.PodName, obj.Spec.ServiceAccountName, string(obj.Spec.NodeName), obj.Spec.SignerName, state}
	})
}

// --- admissionregistration ---

func webhookConfigurationPrinter[T any, PT typedPtr[T]](fields func(PT) (string, int, metav1.Time)) *Printer {
	return typed(cols(
		nameColumn(),
		column("Webhooks", "integer", "Webhooks indicates the number of webhooks registered in this configuration"),
		ageColumn(),
	), func(obj PT, now time.Time) []interface{} {
		name, webhooks, created := fields(obj)
		return []interface{}{name, int64(webhooks), since(created, now)}
	})
}

func admissionPolicyPrinter[T any, PT typedPtr[T]](countColumn, countDescription string, fields func(PT) (string, int, *admissionregistrationv1.ParamKind, metav1.Time)) *Printer {
	return typed(cols(
		nameColumn(),
		column(countColumn, "integer", countDescription),
		column("ParamKind", "string", "ParamKind specifies the kind of resources used to parameterize this policy"),
		ageColumn(),
	), func(obj PT, now time.Time) []interface{} {
		name, count, paramKind, created := fields(obj)
		kind := "<unset>"
		if paramKind != nil {
			kind = paramKind.APIVersion + "/" + paramKind.Kind
		}
		return []interface{}{name, int64(count), kind, since(created, now)}
	})
}

func admissionPolicyBindingPrinter[T any, PT typedPtr[T]](fields func(PT) (string, string, *admissionregistrationv1.ParamRef, metav1.Time)) *Printer {
	return typed(cols(
		nameColumn(),
		column("PolicyName", "string", "PolicyName indicates the policy definition which the policy binding binded to"),
		column("ParamRef", "string", "ParamRef indicates the param resource which sets the configration param"),
		ageColumn(),
	), func(obj PT, now time.Time) []interface{} {
		name, policyName, ref, created := fields(obj)
		param := "<unset>"
		if ref != nil {
			switch {
			case ref.Name != "" && ref.Namespace != "":
				param = ref.Namespace + "/" + ref.Name
			case ref.Name != "":
				// the scope of the param is unknown here
				param = "*/" + ref.Name
			case ref.Selector != nil:
				param = ref.Selector.String()
			}
		}
		return []interface{}{name, policyName, param, since(created, now)}
	})
}

// --- flowcontrol ---

func flowSchemaPrinter() *Printer {
	specDoc := flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("PriorityLevel", "string", flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]),
		column("MatchingPrecedence", "string", specDoc["matchingPrecedence"]),
		column("DistinguisherMethod", "string", specDoc["distinguisherMethod"]),
		ageColumn(),
		column("MissingPL", "string", "references a broken or non-existent PriorityLevelConfiguration"),
	), func(obj *flowcontrolv1.FlowSchema, now time.Time) []interface{} {
		distinguisher := "<none>"
		if obj.Spec.DistinguisherMethod != nil {
			distinguisher = string(obj.Spec.DistinguisherMethod.Type)
		}
		missingPL := "?"
		for _, c := range obj.Status.Conditions {
			if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
				missingPL = string(c.Status)
				break
			}
		}
		return []interface{}{
			obj.Name, obj.Spec.PriorityLevelConfiguration.Name, int64(obj.Spec.MatchingPrecedence), distinguisher,
			since(obj.CreationTimestamp, now), missingPL,
		}
	})
}

func priorityLevelConfigurationPrinter() *Printer {
	queuingDoc := flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("Type", "string", flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]),
		column("NominalConcurrencyShares", "string", flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]),
		column("Queues", "string", queuingDoc["queues"]),
		column("HandSize", "string", queuingDoc["handSize"]),
		column("QueueLengthLimit", "string", queuingDoc["queueLengthLimit"]),
		ageColumn(),
	), func(obj *flowcontrolv1.PriorityLevelConfiguration, now time.Time) []interface{} {
		var ncs, queues, handSize, queueLengthLimit interface{} = "<none>", "<none>", "<none>", "<none>"
		if l := obj.Spec.Limited; l != nil {
			ncs = deref(l.NominalConcurrencyShares)
			if q := l.LimitResponse.Queuing; q != nil {
				queues, handSize, queueLengthLimit = q.Queues, q.HandSize, q.QueueLengthLimit
			}
		}
		return []interface{}{obj.Name, string(obj.Spec.Type), ncs, queues, handSize, queueLengthLimit, since(obj.CreationTimestamp, now)}
	})
}

// --- resource.k8s.io ---

func resourceClaimPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("State", "string", "A summary of the current state (allocated, pending, reserved, etc.)."),
		ageColumn(),
	), func(obj *resourcev1.ResourceClaim, now time.Time) []interface{} {
		var states []string
		if obj.DeletionTimestamp != nil {
			states = append(states, "deleted")
		}
		if obj.Status.Allocation == nil {
			if obj.DeletionTimestamp == nil {
				states = append(states, "pending")
			}
		} else {
			states = append(states, "allocated")
			if len(obj.Status.ReservedFor) > 0 {
				states = append(states, "reserved")
			}
		}
		return []interface{}{obj.Name, strings.Join(states, ","), since(obj.CreationTimestamp, now)}
	})
}

func resourceSlicePrinter() *Printer {
	specDoc := resourcev1.ResourceSliceSpec{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("Node", "string", specDoc["nodeName"]),
		column("Driver", "string", specDoc["driver"]),
		column("Pool", "string", resourcev1.ResourcePool{}.SwaggerDoc()["name"]),
		ageColumn(),
	), func(obj *resourcev1.ResourceSlice, now time.Time) []interface{} {
		return []interface{}{obj.Name, deref(obj.Spec.NodeName), obj.Spec.Driver, obj.Spec.Pool.Name, since(obj.CreationTimestamp, now)}
	})
}
