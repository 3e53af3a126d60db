package printers

import (
	"bytes"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	// nodeUnreachablePodReason is the pod status reason set when the node
	// of a pod is lost (k8s.io/kubernetes/pkg/util/node).
	nodeUnreachablePodReason = "NodeLost"
	// labelNodeRolePrefix is the prefix of node-role.kubernetes.io/<role> labels.
	labelNodeRolePrefix = "node-role.kubernetes.io/"
	// nodeLabelRole is the kubernetes.io/role=<role> label.
	nodeLabelRole = "kubernetes.io/role"
	// betaStorageClassAnnotation is the deprecated storage class annotation of
	// PVs and PVCs, which wins over the spec field.
	betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"
)

func addCore(add addFunc) {
	add("", podPrinter(), "pods")
	add("", podTemplatePrinter(), "podtemplates")
	add("", replicationControllerPrinter(), "replicationcontrollers")
	add("", servicePrinter(), "services")
	add("", endpointsPrinter(), "endpoints")
	add("", nodePrinter(), "nodes")
	events := eventPrinter()
	add("", events, "events")
	add("events.k8s.io", events, "events")
	add("", namespacePrinter(), "namespaces")
	add("", secretPrinter(), "secrets")
	add("", serviceAccountPrinter(), "serviceaccounts")
	add("", persistentVolumePrinter(), "persistentvolumes")
	add("", persistentVolumeClaimPrinter(), "persistentvolumeclaims")
	add("", componentStatusPrinter(), "componentstatuses")
	add("", configMapPrinter(), "configmaps")
	add("", resourceQuotaPrinter(), "resourcequotas")
	// limitranges use the default printer, as in kube-apiserver.
}

// --- pods ---

func podPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
		column("Status", "string", "The aggregate status of the containers in this pod."),
		column("Restarts", "string", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
		ageColumn(),
		wide("IP", "string", corev1.PodStatus{}.SwaggerDoc()["podIP"]),
		wide("Node", "string", corev1.PodSpec{}.SwaggerDoc()["nodeName"]),
		wide("Nominated Node", "string", corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]),
		wide("Readiness Gates", "string", corev1.PodSpec{}.SwaggerDoc()["readinessGates"]),
	), printPod)
}

// isRestartableInitContainer tells a sidecar (restartPolicy: Always) init
// container; c may be nil.
func isRestartableInitContainer(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func printPod(pod *corev1.Pod, now time.Time) []interface{} {
	restarts := 0
	sidecarRestarts := 0
	totalContainers := len(pod.Spec.Containers)
	readyContainers := 0
	var lastRestart, lastSidecarRestart metav1.Time

	phase := pod.Status.Phase
	reason := string(phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	initContainers := make(map[string]*corev1.Container, len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		initContainers[c.Name] = c
		if isRestartableInitContainer(c) {
			totalContainers++
		}
	}

	initializing := false
	for i := range pod.Status.InitContainerStatuses {
		cs := pod.Status.InitContainerStatuses[i]
		restarts += int(cs.RestartCount)
		if t := cs.LastTerminationState.Terminated; t != nil && lastRestart.Before(&t.FinishedAt) {
			lastRestart = t.FinishedAt
		}
		sidecar := isRestartableInitContainer(initContainers[cs.Name])
		if sidecar {
			sidecarRestarts += int(cs.RestartCount)
			if t := cs.LastTerminationState.Terminated; t != nil && lastSidecarRestart.Before(&t.FinishedAt) {
				lastSidecarRestart = t.FinishedAt
			}
		}
		switch {
		case cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0:
			continue
		case sidecar && cs.Started != nil && *cs.Started:
			if cs.Ready {
				readyContainers++
			}
			continue
		case cs.State.Terminated != nil:
			// initialization failed
			t := cs.State.Terminated
			switch {
			case t.Reason != "":
				reason = "Init:" + t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
			initializing = true
		case cs.State.Waiting != nil && cs.State.Waiting.Reason != "" && cs.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + cs.State.Waiting.Reason
			initializing = true
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
			initializing = true
		}
		break
	}

	if !initializing || podConditionTrue(pod.Status.Conditions, corev1.PodInitialized) {
		restarts = sidecarRestarts
		lastRestart = lastSidecarRestart
		hasRunning := false
		errorReason := ""
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			cs := pod.Status.ContainerStatuses[i]
			restarts += int(cs.RestartCount)
			if t := cs.LastTerminationState.Terminated; t != nil && lastRestart.Before(&t.FinishedAt) {
				lastRestart = t.FinishedAt
			}
			switch {
			case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
				reason = cs.State.Waiting.Reason
			case cs.State.Terminated != nil:
				t := cs.State.Terminated
				switch {
				case t.Reason != "":
					reason = t.Reason
				case t.Signal != 0:
					reason = fmt.Sprintf("Signal:%d", t.Signal)
				default:
					reason = fmt.Sprintf("ExitCode:%d", t.ExitCode)
				}
				if t.ExitCode != 0 {
					errorReason = reason
				}
			case cs.Ready && cs.State.Running != nil:
				hasRunning = true
				readyContainers++
			}
		}
		// A pod whose last container completed is still Running (or
		// NotReady) while another container runs.
		if reason == "Completed" {
			switch {
			case hasRunning && podConditionTrue(pod.Status.Conditions, corev1.PodReady):
				reason = "Running"
			case errorReason != "":
				reason = errorReason
			case hasRunning:
				reason = "NotReady"
			}
		}
	}

	if pod.DeletionTimestamp != nil && pod.Status.Reason == nodeUnreachablePodReason {
		reason = "Unknown"
	} else if pod.DeletionTimestamp != nil && phase != corev1.PodSucceeded && phase != corev1.PodFailed {
		reason = "Terminating"
	}

	restartsCell := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsCell = fmt.Sprintf("%d (%s ago)", restarts, since(lastRestart, now))
	}

	podIP := pod.Status.PodIP
	if podIP == "" && len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	readinessGates := "<none>"
	if len(pod.Spec.ReadinessGates) > 0 {
		trueConditions := 0
		for _, gate := range pod.Spec.ReadinessGates {
			for _, c := range pod.Status.Conditions {
				if c.Type == gate.ConditionType {
					if c.Status == corev1.ConditionTrue {
						trueConditions++
					}
					break
				}
			}
		}
		readinessGates = fmt.Sprintf("%d/%d", trueConditions, len(pod.Spec.ReadinessGates))
	}

	return []interface{}{
		pod.Name,
		fmt.Sprintf("%d/%d", readyContainers, totalContainers),
		reason,
		restartsCell,
		since(pod.CreationTimestamp, now),
		orNone(podIP),
		orNone(pod.Spec.NodeName),
		orNone(pod.Status.NominatedNodeName),
		readinessGates,
	}
}

// podConditionTrue tells whether the first condition of type t is True.
func podConditionTrue(conditions []corev1.PodCondition, t corev1.PodConditionType) bool {
	for _, c := range conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// orNone is s, or "<none>" when empty.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// containerCells lays out the names and the images of containers on one
// line each (kube's layoutContainerCells).
func containerCells(containers []corev1.Container) (names, images string) {
	var n, i bytes.Buffer
	for idx, c := range containers {
		if idx > 0 {
			n.WriteString(",")
			i.WriteString(",")
		}
		n.WriteString(c.Name)
		i.WriteString(c.Image)
	}
	return n.String(), i.String()
}

// --- podtemplates ---

func podTemplatePrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Containers", "string", containersDescription),
		column("Images", "string", imagesDescription),
		column("Pod Labels", "string", "The labels for the pod template."),
	), func(obj *corev1.PodTemplate, _ time.Time) []interface{} {
		names, images := containerCells(obj.Template.Spec.Containers)
		return []interface{}{obj.Name, names, images, labels.FormatLabels(obj.Template.Labels)}
	})
}

// --- replicationcontrollers ---

func replicationControllerPrinter() *Printer {
	columns := replicaColumns(corev1.ReplicationControllerSpec{}.SwaggerDoc(), corev1.ReplicationControllerStatus{}.SwaggerDoc())
	return typed(columns, func(obj *corev1.ReplicationController, now time.Time) []interface{} {
		var containers []corev1.Container
		if obj.Spec.Template != nil {
			containers = obj.Spec.Template.Spec.Containers
		}
		names, images := containerCells(containers)
		return []interface{}{
			obj.Name, int64(deref(obj.Spec.Replicas)), int64(obj.Status.Replicas), int64(obj.Status.ReadyReplicas),
			since(obj.CreationTimestamp, now), names, images, labels.FormatLabels(obj.Spec.Selector),
		}
	})
}

// replicaColumns are the columns of the controllers that keep a number of
// pods running (ReplicaSets, ReplicationControllers), described by their
// spec's and status's docs.
func replicaColumns(specDoc, statusDoc map[string]string) []metav1.TableColumnDefinition {
	return cols(
		nameColumn(),
		column("Desired", "integer", specDoc["replicas"]),
		column("Current", "integer", statusDoc["replicas"]),
		column("Ready", "integer", statusDoc["readyReplicas"]),
		ageColumn(),
		wide("Containers", "string", containersDescription),
		wide("Images", "string", imagesDescription),
		wide("Selector", "string", specDoc["selector"]),
	)
}

// deref is *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// --- services ---

const loadBalancerWidth = 16

func servicePrinter() *Printer {
	doc := corev1.ServiceSpec{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("Type", "string", doc["type"]),
		column("Cluster-IP", "string", doc["clusterIP"]),
		column("External-IP", "string", doc["externalIPs"]),
		column("Port(s)", "string", doc["ports"]),
		ageColumn(),
		wide("Selector", "string", doc["selector"]),
	), func(obj *corev1.Service, now time.Time) []interface{} {
		clusterIP := "<none>"
		if len(obj.Spec.ClusterIPs) > 0 {
			clusterIP = obj.Spec.ClusterIPs[0]
		} else if obj.Spec.ClusterIP != "" {
			clusterIP = obj.Spec.ClusterIP
		}
		ports := servicePorts(obj.Spec.Ports)
		if ports == "" {
			ports = "<none>"
		}
		return []interface{}{
			obj.Name, string(obj.Spec.Type), clusterIP, serviceExternalIP(obj, true), ports,
			since(obj.CreationTimestamp, now), labels.FormatLabels(obj.Spec.Selector),
		}
	})
}

// loadBalancerAddresses joins the sorted, distinct IPs (or else hostnames)
// of load-balancer ingress points, clipped unless wide.
func loadBalancerAddresses(ips, hostnames []string, wide bool) string {
	set := map[string]bool{}
	for i := range ips {
		if ips[i] != "" {
			set[ips[i]] = true
		} else if hostnames[i] != "" {
			set[hostnames[i]] = true
		}
	}
	list := make([]string, 0, len(set))
	for s := range set {
		list = append(list, s)
	}
	sort.Strings(list)
	r := strings.Join(list, ",")
	if !wide && len(r) > loadBalancerWidth {
		r = r[0:(loadBalancerWidth-3)] + "..."
	}
	return r
}

func serviceLoadBalancer(s corev1.LoadBalancerStatus, wide bool) string {
	ips := make([]string, len(s.Ingress))
	hosts := make([]string, len(s.Ingress))
	for i, in := range s.Ingress {
		ips[i], hosts[i] = in.IP, in.Hostname
	}
	return loadBalancerAddresses(ips, hosts, wide)
}

// serviceExternalIP is the External-IP cell of a service (kube's
// getServiceExternalIP). kube-apiserver prints rows wide, so wide is true.
func serviceExternalIP(svc *corev1.Service, wide bool) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		lbIPs := serviceLoadBalancer(svc.Status.LoadBalancer, wide)
		if len(svc.Spec.ExternalIPs) > 0 {
			var results []string
			if lbIPs != "" {
				results = append(results, strings.Split(lbIPs, ",")...)
			}
			results = append(results, svc.Spec.ExternalIPs...)
			return strings.Join(results, ",")
		}
		if lbIPs != "" {
			return lbIPs
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

// servicePorts formats ports as "80/TCP" or, with a node port, "80:30080/TCP".
func servicePorts(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, p := range ports {
		if p.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		} else {
			pieces[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}

// --- endpoints ---

func endpointsPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Endpoints", "string", corev1.Endpoints{}.SwaggerDoc()["subsets"]),
		ageColumn(),
	), func(obj *corev1.Endpoints, now time.Time) []interface{} {
		return []interface{}{obj.Name, formatEndpoints(obj), since(obj.CreationTimestamp, now)}
	})
}

// formatEndpoints lists up to three address:port pairs of all ports.
func formatEndpoints(endpoints *corev1.Endpoints) string {
	if len(endpoints.Subsets) == 0 {
		return "<none>"
	}
	const max = 3
	var list []string
	more := false
	count := 0
	for _, ss := range endpoints.Subsets {
		if len(ss.Ports) == 0 {
			// headless services may have no ports
			count += len(ss.Addresses)
			for _, addr := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, addr.IP)
			}
			continue
		}
		for _, port := range ss.Ports {
			count += len(ss.Addresses)
			for _, addr := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, net.JoinHostPort(addr.IP, strconv.Itoa(int(port.Port))))
			}
		}
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	return ret
}

// --- nodes ---

func nodePrinter() *Printer {
	infoDoc := corev1.NodeSystemInfo{}.SwaggerDoc()
	statusDoc := corev1.NodeStatus{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("Status", "string", "The status of the node"),
		column("Roles", "string", "The roles of the node"),
		ageColumn(),
		column("Version", "string", infoDoc["kubeletVersion"]),
		wide("Internal-IP", "string", statusDoc["addresses"]),
		wide("External-IP", "string", statusDoc["addresses"]),
		wide("OS-Image", "string", infoDoc["osImage"]),
		wide("Kernel-Version", "string", infoDoc["kernelVersion"]),
		wide("Container-Runtime", "string", infoDoc["containerRuntimeVersion"]),
	), printNode)
}

func printNode(obj *corev1.Node, now time.Time) []interface{} {
	var status []string
	// Only the Ready condition is reported; the last one of that type wins.
	var ready *corev1.NodeCondition
	for i := range obj.Status.Conditions {
		if obj.Status.Conditions[i].Type == corev1.NodeReady {
			ready = &obj.Status.Conditions[i]
		}
	}
	if ready != nil {
		if ready.Status == corev1.ConditionTrue {
			status = append(status, string(ready.Type))
		} else {
			status = append(status, "Not"+string(ready.Type))
		}
	}
	if len(status) == 0 {
		status = append(status, "Unknown")
	}
	if obj.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}

	roles := strings.Join(nodeRoles(obj), ",")
	if roles == "" {
		roles = "<none>"
	}
	info := obj.Status.NodeInfo
	return []interface{}{
		obj.Name, strings.Join(status, ","), roles, since(obj.CreationTimestamp, now), info.KubeletVersion,
		nodeAddress(obj, corev1.NodeInternalIP), nodeAddress(obj, corev1.NodeExternalIP),
		orUnknown(info.OSImage), orUnknown(info.KernelVersion), orUnknown(info.ContainerRuntimeVersion),
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

// nodeAddress is the first address of type t, or "<none>".
func nodeAddress(node *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range node.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

// nodeRoles returns the sorted roles of a node, from node-role.kubernetes.io/<role>
// labels and the kubernetes.io/role=<role> label.
func nodeRoles(node *corev1.Node) []string {
	set := map[string]bool{}
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, labelNodeRolePrefix):
			if role := strings.TrimPrefix(k, labelNodeRolePrefix); role != "" {
				set[role] = true
			}
		case k == nodeLabelRole && v != "":
			set[v] = true
		}
	}
	roles := make([]string, 0, len(set))
	for r := range set {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	return roles
}

// --- events (core/v1 and events.k8s.io/v1) ---

func eventPrinter() *Printer {
	doc := corev1.Event{}.SwaggerDoc()
	columns := cols(
		column("Last Seen", "string", doc["lastTimestamp"]),
		column("Type", "string", doc["type"]),
		column("Reason", "string", doc["reason"]),
		column("Object", "string", doc["involvedObject"]),
		wide("Subobject", "string", corev1.Event{}.InvolvedObject.SwaggerDoc()["fieldPath"]),
		wide("Source", "string", doc["source"]),
		column("Message", "string", doc["message"]),
		wide("First Seen", "string", doc["firstTimestamp"]),
		wide("Count", "string", doc["count"]),
		metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Priority: 1, Description: objectMetaDoc["name"]},
	)
	return &Printer{
		Columns: columns,
		Row: func(obj runtime.Object, now time.Time) []interface{} {
			if e, ok := as[corev1.Event](obj); ok {
				return printEvent(e, now)
			}
			if e, ok := as[eventsv1.Event](obj); ok {
				return printEvent(coreEvent(e), now)
			}
			return fallbackRow(columns, obj, now)
		},
	}
}

// coreEvent is an events.k8s.io/v1 Event as a core/v1 Event (the fields the
// printer reads).
func coreEvent(e *eventsv1.Event) *corev1.Event {
	out := &corev1.Event{
		ObjectMeta:          e.ObjectMeta,
		InvolvedObject:      e.Regarding,
		Reason:              e.Reason,
		Message:             e.Note,
		Source:              e.DeprecatedSource,
		FirstTimestamp:      e.DeprecatedFirstTimestamp,
		LastTimestamp:       e.DeprecatedLastTimestamp,
		Count:               e.DeprecatedCount,
		Type:                e.Type,
		EventTime:           e.EventTime,
		Action:              e.Action,
		Related:             e.Related,
		ReportingController: e.ReportingController,
		ReportingInstance:   e.ReportingInstance,
	}
	if e.Series != nil {
		out.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

func printEvent(obj *corev1.Event, now time.Time) []interface{} {
	firstTimestamp := since(obj.FirstTimestamp, now)
	if obj.FirstTimestamp.IsZero() {
		firstTimestamp = microSince(obj.EventTime, now)
	}
	lastTimestamp := since(obj.LastTimestamp, now)
	if obj.LastTimestamp.IsZero() {
		lastTimestamp = firstTimestamp
	}
	count := obj.Count
	if obj.Series != nil {
		lastTimestamp = microSince(obj.Series.LastObservedTime, now)
		count = obj.Series.Count
	} else if count == 0 {
		// singleton events of the new API have no count
		count = 1
	}
	target := strings.ToLower(obj.InvolvedObject.Kind)
	if obj.InvolvedObject.Name != "" {
		target += "/" + obj.InvolvedObject.Name
	}
	return []interface{}{
		lastTimestamp,
		obj.Type,
		obj.Reason,
		target,
		obj.InvolvedObject.FieldPath,
		eventSource(obj.Source, obj.ReportingController, obj.ReportingInstance),
		strings.TrimSpace(obj.Message),
		firstTimestamp,
		int64(count),
		obj.Name,
	}
}

// eventSource is "component, host", taking the reporting controller and
// instance when the source fields are empty, and leaving out an empty host.
func eventSource(es corev1.EventSource, reportingController, reportingInstance string) string {
	component, instance := es.Component, es.Host
	if component == "" {
		component = reportingController
	}
	if instance == "" {
		instance = reportingInstance
	}
	if instance == "" {
		return component
	}
	return component + ", " + instance
}

// --- namespaces, secrets, serviceaccounts, configmaps ---

func namespacePrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Status", "string", "The status of the namespace"),
		ageColumn(),
	), func(obj *corev1.Namespace, now time.Time) []interface{} {
		return []interface{}{obj.Name, string(obj.Status.Phase), since(obj.CreationTimestamp, now)}
	})
}

func secretPrinter() *Printer {
	doc := corev1.Secret{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("Type", "string", doc["type"]),
		column("Data", "string", doc["data"]),
		ageColumn(),
	), func(obj *corev1.Secret, now time.Time) []interface{} {
		return []interface{}{obj.Name, string(obj.Type), int64(len(obj.Data)), since(obj.CreationTimestamp, now)}
	})
}

// serviceAccountPrinter prints NAME and AGE: kube-apiserver dropped the
// SECRETS column when token secrets stopped being generated.
func serviceAccountPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		ageColumn(),
	), func(obj *corev1.ServiceAccount, now time.Time) []interface{} {
		return []interface{}{obj.Name, since(obj.CreationTimestamp, now)}
	})
}

func configMapPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Data", "string", corev1.ConfigMap{}.SwaggerDoc()["data"]),
		ageColumn(),
	), func(obj *corev1.ConfigMap, now time.Time) []interface{} {
		return []interface{}{obj.Name, int64(len(obj.Data) + len(obj.BinaryData)), since(obj.CreationTimestamp, now)}
	})
}

// --- persistent volumes and claims ---

// accessModes formats access modes as kube does: RWO,ROX,RWX,RWOP, in that
// order, without duplicates.
func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	has := map[corev1.PersistentVolumeAccessMode]bool{}
	for _, m := range modes {
		has[m] = true
	}
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{
		{corev1.ReadWriteOnce, "RWO"},
		{corev1.ReadOnlyMany, "ROX"},
		{corev1.ReadWriteMany, "RWX"},
		{corev1.ReadWriteOncePod, "RWOP"},
	} {
		if has[m.mode] {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

func persistentVolumePrinter() *Printer {
	specDoc := corev1.PersistentVolumeSpec{}.SwaggerDoc()
	statusDoc := corev1.PersistentVolumeStatus{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("Capacity", "string", specDoc["capacity"]),
		column("Access Modes", "string", specDoc["accessModes"]),
		column("Reclaim Policy", "string", specDoc["persistentVolumeReclaimPolicy"]),
		column("Status", "string", statusDoc["phase"]),
		column("Claim", "string", specDoc["claimRef"]),
		column("StorageClass", "string", "StorageClass of the pv"),
		column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
		column("Reason", "string", statusDoc["reason"]),
		ageColumn(),
		wide("VolumeMode", "string", specDoc["volumeMode"]),
	), func(obj *corev1.PersistentVolume, now time.Time) []interface{} {
		claim := ""
		if ref := obj.Spec.ClaimRef; ref != nil {
			claim = ref.Namespace + "/" + ref.Name
		}
		size := obj.Spec.Capacity[corev1.ResourceStorage]
		phase := string(obj.Status.Phase)
		if obj.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		class, ok := obj.Annotations[betaStorageClassAnnotation]
		if !ok {
			class = obj.Spec.StorageClassName
		}
		volumeMode := "<unset>"
		if obj.Spec.VolumeMode != nil {
			volumeMode = string(*obj.Spec.VolumeMode)
		}
		vac := "<unset>"
		if obj.Spec.VolumeAttributesClassName != nil {
			vac = *obj.Spec.VolumeAttributesClassName
		}
		return []interface{}{
			obj.Name, size.String(), accessModes(obj.Spec.AccessModes), string(obj.Spec.PersistentVolumeReclaimPolicy),
			phase, claim, class, vac, obj.Status.Reason, since(obj.CreationTimestamp, now), volumeMode,
		}
	})
}

func persistentVolumeClaimPrinter() *Printer {
	specDoc := corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()
	statusDoc := corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("Status", "string", statusDoc["phase"]),
		column("Volume", "string", specDoc["volumeName"]),
		column("Capacity", "string", statusDoc["capacity"]),
		column("Access Modes", "string", statusDoc["accessModes"]),
		column("StorageClass", "string", "StorageClass of the pvc"),
		column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
		ageColumn(),
		wide("VolumeMode", "string", specDoc["volumeMode"]),
	), func(obj *corev1.PersistentVolumeClaim, now time.Time) []interface{} {
		phase := string(obj.Status.Phase)
		if obj.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		capacity, modes := "", ""
		if obj.Spec.VolumeName != "" {
			modes = accessModes(obj.Status.AccessModes)
			storage := obj.Status.Capacity[corev1.ResourceStorage]
			capacity = storage.String()
		}
		class, ok := obj.Annotations[betaStorageClassAnnotation]
		if !ok {
			class = deref(obj.Spec.StorageClassName)
		}
		vac := "<unset>"
		if obj.Spec.VolumeAttributesClassName != nil {
			vac = *obj.Spec.VolumeAttributesClassName
		}
		volumeMode := "<unset>"
		if obj.Spec.VolumeMode != nil {
			volumeMode = string(*obj.Spec.VolumeMode)
		}
		return []interface{}{
			obj.Name, phase, obj.Spec.VolumeName, capacity, modes, class, vac,
			since(obj.CreationTimestamp, now), volumeMode,
		}
	})
}

// --- componentstatuses ---

func componentStatusPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Status", "string", "Status of the component conditions"),
		column("Message", "string", "Message of the component conditions"),
		column("Error", "string", "Error of the component conditions"),
	), func(obj *corev1.ComponentStatus, _ time.Time) []interface{} {
		status, message, errText := "Unknown", "", ""
		for _, c := range obj.Conditions {
			if c.Type == corev1.ComponentHealthy {
				if c.Status == corev1.ConditionTrue {
					status = "Healthy"
				} else {
					status = "Unhealthy"
				}
				message, errText = c.Message, c.Error
				break
			}
		}
		return []interface{}{obj.Name, status, message, errText}
	})
}

// --- resourcequotas ---

func resourceQuotaPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume."),
		column("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
		ageColumn(),
	), func(obj *corev1.ResourceQuota, now time.Time) []interface{} {
		names := make([]string, 0, len(obj.Status.Hard))
		for name := range obj.Status.Hard {
			names = append(names, string(name))
		}
		sort.Strings(names)
		var requests, limits bytes.Buffer
		for _, name := range names {
			w := &requests
			if pieces := strings.Split(name, "."); len(pieces) > 1 && pieces[0] == "limits" {
				w = &limits
			}
			used := obj.Status.Used[corev1.ResourceName(name)]
			hard := obj.Status.Hard[corev1.ResourceName(name)]
			fmt.Fprintf(w, "%s: %s/%s, ", name, used.String(), hard.String())
		}
		return []interface{}{
			obj.Name, strings.TrimSuffix(requests.String(), ", "), strings.TrimSuffix(limits.String(), ", "),
			since(obj.CreationTimestamp, now),
		}
	})
}
