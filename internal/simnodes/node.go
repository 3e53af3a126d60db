package simnodes

import (
	"context"
	"fmt"
	"runtime"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	"k8s.io/component-helpers/apimachinery/lease"
	"k8s.io/component-helpers/nodedeclaredfeatures"
	kubeletapis "k8s.io/kubelet/pkg/apis"
	"k8s.io/utils/clock"
)

// What a kubelet does about its Lease and status, by its defaults: the
// Lease lasts 40 s and is renewed every 10 s; the status is posted again
// every 5 minutes when nothing changes.
const (
	leaseDuration    = 40
	leaseRenew       = 10 * time.Second
	statusReport     = 5 * time.Minute
	kubeletPort      = 10250
	maxPodsPerNode   = 110
	nodeNamePrefix   = "node-"
	containerRuntime = "containerd://2.1.0"
)

// defaultCapacity is what a simulated node offers when it does not say.
var defaultCapacity = corev1.ResourceList{
	corev1.ResourceCPU:              resource.MustParse("8"),
	corev1.ResourceMemory:           resource.MustParse("32Gi"),
	corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	corev1.ResourcePods:             *resource.NewQuantity(maxPodsPerNode, resource.DecimalSI),
}

// createNodes registers node-1 to node-n, as n kubelets starting would,
// and, when there are any, the default StorageClass of their volumes.
func (s *simulator) createNodes(ctx context.Context, n int) error {
	if n > 0 {
		_, err := s.client.StorageV1().StorageClasses().Create(ctx, StandardClass, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the StorageClass %s: %w", StandardClass.Name, err)
		}
	}
	for i := 1; i <= n; i++ {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:   fmt.Sprintf("%s%d", nodeNamePrefix, i),
			Labels: map[string]string{Label: "true"},
		}}
		_, err := s.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering %s: %w", node.Name, err)
		}
	}
	return nil
}

// syncNode keeps a simulated node registered as a kubelet keeps its own:
// labels, pod CIDR, addresses, capacity and Ready conditions, and its
// heartbeat Lease.
func (s *simulator) syncNode(ctx context.Context, name string) error {
	node, err := s.nodes.Get(name)
	if apierrors.IsNotFound(err) || (err == nil && !simulated(node)) {
		s.stopHeartbeat(name)
		return nil
	}
	if err != nil {
		return err
	}
	if wanted := s.withSpec(node); wanted != nil {
		_, err := s.client.CoreV1().Nodes().Update(ctx, wanted, metav1.UpdateOptions{})
		return err // the update brings the node back for its status
	}
	if !s.heartbeating(name) {
		s.events.kubeletStarted(node) // its kubelet starts as this server does
	}
	if wanted, transitions := s.withStatus(node); wanted != nil {
		if _, err := s.client.CoreV1().Nodes().UpdateStatus(ctx, wanted, metav1.UpdateOptions{}); err != nil {
			return err
		}
		s.events.nodeStatus(node, transitions)
	}
	s.startHeartbeat(ctx, node)
	s.nodeQueue.AddAfter(name, statusReport)
	return nil
}

// withSpec returns the node with the labels and annotations a kubelet
// registers and a pod CIDR (which node IPAM would give it), or nil when
// it has them.
func (s *simulator) withSpec(node *corev1.Node) *corev1.Node {
	wanted := node.DeepCopy()
	setDefault(&wanted.Labels, corev1.LabelHostname, node.Name)
	setDefault(&wanted.Labels, corev1.LabelOSStable, "linux")
	setDefault(&wanted.Labels, corev1.LabelArchStable, runtime.GOARCH)
	// The beta labels a kubelet still sets beside the stable ones.
	setDefault(&wanted.Labels, kubeletapis.LabelOS, "linux")
	setDefault(&wanted.Labels, kubeletapis.LabelArch, runtime.GOARCH)
	setDefault(&wanted.Annotations, "volumes.kubernetes.io/controller-managed-attach-detach", "true")
	setDefault(&wanted.Annotations, "node.alpha.kubernetes.io/ttl", "0")
	if wanted.Spec.PodCIDR == "" {
		cidr, err := s.ips.nodeCIDR(s.nodes)
		if err != nil {
			s.logger.Warn("simulated nodes: allocating a pod CIDR failed", "node", node.Name, "err", err)
		} else {
			wanted.Spec.PodCIDR, wanted.Spec.PodCIDRs = cidr, []string{cidr}
		}
	}
	if changed(node, wanted) {
		return wanted
	}
	return nil
}

// withStatus returns the node with the status its kubelet posts, or nil
// when the node has it and it was posted within statusReport, and the
// kubelet's events of the conditions it changes.
func (s *simulator) withStatus(node *corev1.Node) (*corev1.Node, []string) {
	wanted := node.DeepCopy()
	status := &wanted.Status
	if status.Capacity == nil {
		status.Capacity = defaultCapacity.DeepCopy()
	}
	if status.Allocatable == nil {
		status.Allocatable = status.Capacity.DeepCopy()
	}
	if ip := nodeIP(node.Spec.PodCIDR); ip != "" && len(status.Addresses) == 0 {
		status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: node.Name}}
	}
	status.DaemonEndpoints.KubeletEndpoint.Port = kubeletPort
	status.NodeInfo = corev1.NodeSystemInfo{
		MachineID: string(node.UID), SystemUUID: string(node.UID), BootID: string(node.UID),
		KernelVersion: "simulated", OSImage: "kapi simulated node", ContainerRuntimeVersion: containerRuntime,
		KubeletVersion: s.version, OperatingSystem: "linux", Architecture: runtime.GOARCH,
	}
	status.DeclaredFeatures = s.declaredFeatures
	now := metav1.Now()
	fresh := true
	var transitions []string
	for _, want := range nodeConditions {
		posted, event := setNodeCondition(status, want, now)
		fresh = posted && fresh
		if event != "" {
			transitions = append(transitions, event)
		}
	}
	if fresh && !changed(node, wanted) {
		return nil, nil
	}
	return wanted, transitions
}

// declaredFeatures are the features a kubelet of version declares on its
// node, with the server's feature gates (kube's own discovery): kube's
// admission and scheduler, which kapi runs, refuse pods that need one a
// node does not declare.
func declaredFeatures(kubeletVersion string) ([]string, error) {
	v, err := version.Parse(kubeletVersion)
	if err != nil {
		return nil, fmt.Errorf("the kubelet version %q: %w", kubeletVersion, err)
	}
	return nodedeclaredfeatures.DefaultFramework.DiscoverNodeFeatures(&nodedeclaredfeatures.NodeConfiguration{
		FeatureGates: featureGates{utilfeature.DefaultFeatureGate}, Version: v,
	}), nil
}

// featureGates reads the server's feature gates by name.
type featureGates struct{ featuregate.FeatureGate }

func (g featureGates) Enabled(name string) bool {
	return g.FeatureGate.Enabled(featuregate.Feature(name))
}

// nodeConditions are a healthy kubelet's, with its reasons and messages;
// conditionEvents are the events it records as each comes to be, but for
// Ready, recorded when it changes.
var nodeConditions = []corev1.NodeCondition{
	{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
	{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
	{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
	{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
}

var conditionEvents = map[corev1.NodeConditionType]string{
	corev1.NodeMemoryPressure: "NodeHasSufficientMemory",
	corev1.NodeDiskPressure:   "NodeHasNoDiskPressure",
	corev1.NodePIDPressure:    "NodeHasSufficientPID",
	corev1.NodeReady:          "NodeReady",
}

// setNodeCondition sets want in status, keeping its transition time when
// the status does not change. It reports whether the condition was
// already there and posted within statusReport, and the event the
// kubelet records of the change, if any.
func setNodeCondition(status *corev1.NodeStatus, want corev1.NodeCondition, now metav1.Time) (posted bool, event string) {
	for i := range status.Conditions {
		have := &status.Conditions[i]
		if have.Type != want.Type {
			continue
		}
		if have.Status == want.Status && have.Reason == want.Reason && now.Sub(have.LastHeartbeatTime.Time) < statusReport-time.Second {
			return true, ""
		}
		if have.Status != want.Status {
			have.LastTransitionTime = now
			event = conditionEvents[want.Type]
		}
		have.Status, have.Reason, have.Message, have.LastHeartbeatTime = want.Status, want.Reason, want.Message, now
		return false, event
	}
	want.LastHeartbeatTime, want.LastTransitionTime = now, now
	status.Conditions = append(status.Conditions, want)
	if want.Type != corev1.NodeReady {
		event = conditionEvents[want.Type]
	}
	return false, event
}

// startHeartbeat keeps the node's Lease in kube-node-lease renewed, with
// Kubernetes' lease controller as the kubelet does, owned by the node.
func (s *simulator) startHeartbeat(ctx context.Context, node *corev1.Node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, running := s.heartbeats[node.Name]; running {
		return
	}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}
	heartbeat := lease.NewController(clock.RealClock{}, s.client, node.Name, leaseDuration, nil, leaseRenew,
		node.Name, corev1.NamespaceNodeLease, func(l *coordinationv1.Lease) error {
			if len(l.OwnerReferences) == 0 {
				l.OwnerReferences = []metav1.OwnerReference{owner}
			}
			return nil
		})
	ctx, stop := context.WithCancel(ctx)
	s.heartbeats[node.Name] = stop
	s.beating.Add(1)
	go func() {
		defer s.beating.Done()
		heartbeat.Run(ctx)
	}()
}

// heartbeating reports whether the node's Lease is being kept.
func (s *simulator) heartbeating(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, running := s.heartbeats[name]
	return running
}

func (s *simulator) stopHeartbeat(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stop, running := s.heartbeats[name]; running {
		stop()
		delete(s.heartbeats, name)
	}
}

func setDefault(m *map[string]string, key, value string) {
	if *m == nil {
		*m = map[string]string{}
	}
	if _, ok := (*m)[key]; !ok {
		(*m)[key] = value
	}
}
