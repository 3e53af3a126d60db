package controllers

import (
	"context"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/certificates/cleaner"
	"k8s.io/kubernetes/pkg/controller/cronjob"
	"k8s.io/kubernetes/pkg/controller/daemon"
	"k8s.io/kubernetes/pkg/controller/deployment"
	"k8s.io/kubernetes/pkg/controller/devicetainteviction"
	endpointcontroller "k8s.io/kubernetes/pkg/controller/endpoint"
	endpointslicecontroller "k8s.io/kubernetes/pkg/controller/endpointslice"
	endpointslicemirroring "k8s.io/kubernetes/pkg/controller/endpointslicemirroring"
	"k8s.io/kubernetes/pkg/controller/job"
	"k8s.io/kubernetes/pkg/controller/nodelifecycle"
	"k8s.io/kubernetes/pkg/controller/podgc"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/pkg/controller/replication"
	"k8s.io/kubernetes/pkg/controller/resourceclaim"
	"k8s.io/kubernetes/pkg/controller/servicecidrs"
	"k8s.io/kubernetes/pkg/controller/statefulset"
	"k8s.io/kubernetes/pkg/controller/tainteviction"
	"k8s.io/kubernetes/pkg/controller/ttl"
	"k8s.io/kubernetes/pkg/controller/ttlafterfinished"
	"k8s.io/kubernetes/pkg/controller/volume/ephemeral"
	"k8s.io/kubernetes/pkg/controller/volume/persistentvolume"
	"k8s.io/kubernetes/pkg/controller/volume/pvcprotection"
	"k8s.io/kubernetes/pkg/controller/volume/pvprotection"
	"k8s.io/kubernetes/pkg/controller/volume/vacprotection"
	"k8s.io/utils/clock"
)

// The workers of each controller are kube-controller-manager's defaults
// (its --concurrent-*-syncs flags).
const (
	replicaSetWorkers    = 5
	replicationWorkers   = 5
	deploymentWorkers    = 5
	statefulSetWorkers   = 5
	daemonSetWorkers     = 2
	jobWorkers           = 5
	cronJobWorkers       = 5
	endpointSliceWorkers = 5
	endpointsWorkers     = 5
	mirroringWorkers     = 5
	serviceCIDRWorkers   = 5
	ttlWorkers           = 5
	nodeTTLWorkers       = 5
	ephemeralWorkers     = 5
	claimWorkers         = 50
	deviceTaintWorkers   = 8
	// podCertificateRequestMaxAge and podCertificateRequestCleanPeriod
	// are kube-controller-manager's: how old a PodCertificateRequest gets
	// before it is deleted, and how often they are looked at.
	podCertificateRequestMaxAge      = 15 * time.Minute
	podCertificateRequestCleanPeriod = 5 * time.Minute
	// terminatedPodThreshold is kube-controller-manager's
	// --terminated-pod-gc-threshold default.
	terminatedPodThreshold = 12500
	// volumeSyncPeriod is its --pvclaimbinder-sync-period default.
	volumeSyncPeriod = 15 * time.Second
	// maxEndpointsPerSlice is kube-controller-manager's default.
	maxEndpointsPerSlice = 100
	// maxMirroredEndpoints is its --mirroring-max-endpoints-per-subset
	// default.
	maxMirroredEndpoints = 1000
	// The node lifecycle controller's defaults: how often it looks at the
	// nodes, how long a node's kubelet may be silent (from its start, and
	// once it has been heard) before the node is taken as unreachable, and
	// how fast the pods of unreachable nodes are evicted.
	nodeMonitorPeriod         = 5 * time.Second
	nodeStartupGracePeriod    = 60 * time.Second
	nodeMonitorGracePeriod    = 50 * time.Second
	nodeEvictionRate          = 0.1
	secondaryNodeEvictionRate = 0.01
	largeClusterSizeThreshold = 50
	unhealthyZoneThreshold    = 0.55
)

// workload is one of kube-controller-manager's workload and service
// controllers: its name and how to start it.
type workload struct {
	name  string
	start func(ctx context.Context, client kubernetes.Interface, factory informers.SharedInformerFactory) (func(), error)
}

// workloads are the controllers that act on workloads and services, each
// made as kube-controller-manager makes it. Pods they create stay Pending
// until the scheduler binds them to a node whose kubelet runs them.
var workloads = []workload{
	{ReplicaSetController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c := replicaset.NewReplicaSetController(ctx, f.Apps().V1().ReplicaSets(), f.Core().V1().Pods(), client, replicaset.BurstReplicas)
		return func() { c.Run(ctx, replicaSetWorkers) }, nil
	}},
	{ReplicationControllerController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c := replication.NewReplicationManager(ctx, f.Core().V1().Pods(), f.Core().V1().ReplicationControllers(), client, replication.BurstReplicas)
		return func() { c.Run(ctx, replicationWorkers) }, nil
	}},
	{DeploymentController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c, err := deployment.NewDeploymentController(ctx, f.Apps().V1().Deployments(), f.Apps().V1().ReplicaSets(), f.Core().V1().Pods(), client)
		return func() { c.Run(ctx, deploymentWorkers) }, err
	}},
	{StatefulSetController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c := statefulset.NewStatefulSetController(ctx, f.Core().V1().Pods(), f.Apps().V1().StatefulSets(),
			f.Core().V1().PersistentVolumeClaims(), f.Apps().V1().ControllerRevisions(), client)
		return func() { c.Run(ctx, statefulSetWorkers) }, nil
	}},
	{DaemonSetController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c, err := daemon.NewDaemonSetsController(ctx, f.Apps().V1().DaemonSets(), f.Apps().V1().ControllerRevisions(),
			f.Core().V1().Pods(), f.Core().V1().Nodes(), client, flowcontrol.NewBackOff(time.Second, 15*time.Minute))
		return func() { c.Run(ctx, daemonSetWorkers) }, err
	}},
	{JobController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		// No Workload or PodGroup informers: the WorkloadWithJob gate is off.
		c, err := job.NewController(ctx, client, f.Core().V1().Pods(), f.Batch().V1().Jobs(), nil, nil)
		return func() { c.Run(ctx, jobWorkers) }, err
	}},
	{CronJobController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c, err := cronjob.NewControllerV2(ctx, f.Batch().V1().Jobs(), f.Batch().V1().CronJobs(), client)
		return func() { c.Run(ctx, cronJobWorkers) }, err
	}},
	{TTLAfterFinishedController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c := ttlafterfinished.New(ctx, f.Batch().V1().Jobs(), client)
		return func() { c.Run(ctx, ttlWorkers) }, nil
	}},
	{EndpointSliceController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c := endpointslicecontroller.NewController(ctx, f.Core().V1().Pods(), f.Core().V1().Services(), f.Core().V1().Nodes(),
			typelessSlices{f.Discovery().V1().EndpointSlices()}, maxEndpointsPerSlice, client, 0)
		return func() { c.Run(ctx, endpointSliceWorkers) }, nil
	}},
	{EndpointSliceMirroringController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c := endpointslicemirroring.NewController(ctx, f.Core().V1().Endpoints(), f.Discovery().V1().EndpointSlices(), f.Core().V1().Services(),
			maxMirroredEndpoints, client, 0)
		return func() { c.Run(ctx, mirroringWorkers) }, nil
	}},
	{ServiceCIDRController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c := servicecidrs.NewController(ctx, f.Networking().V1().ServiceCIDRs(), f.Networking().V1().IPAddresses(), client)
		return func() { c.Run(ctx, serviceCIDRWorkers) }, nil
	}},
	{NodeLifecycleController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c, err := nodelifecycle.NewNodeLifecycleController(ctx, f.Coordination().V1().Leases(), f.Core().V1().Pods(), f.Core().V1().Nodes(),
			f.Apps().V1().DaemonSets(), client, nodeMonitorPeriod, nodeStartupGracePeriod, nodeMonitorGracePeriod,
			nodeEvictionRate, secondaryNodeEvictionRate, largeClusterSizeThreshold, unhealthyZoneThreshold)
		if err != nil {
			return nil, err
		}
		return func() { c.Run(ctx) }, nil
	}},
	{TaintEvictionController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c, err := tainteviction.New(ctx, client, f.Core().V1().Pods(), f.Core().V1().Nodes(), TaintEvictionController)
		if err != nil {
			return nil, err
		}
		return func() { c.Run(ctx) }, nil
	}},
	{PodGarbageCollector, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c := podgc.NewPodGC(ctx, client, f.Core().V1().Pods(), f.Core().V1().Nodes(), terminatedPodThreshold)
		return func() { c.Run(ctx) }, nil
	}},
	{PersistentVolumeBinderController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		// No volume plugins: kapi attaches no storage; volumes come from
		// external provisioners, such as the simulated nodes'.
		c, err := persistentvolume.NewController(ctx, persistentvolume.ControllerParameters{
			KubeClient: client, SyncPeriod: volumeSyncPeriod,
			VolumeInformer: f.Core().V1().PersistentVolumes(), ClaimInformer: f.Core().V1().PersistentVolumeClaims(),
			ClassInformer: f.Storage().V1().StorageClasses(), PodInformer: f.Core().V1().Pods(), NodeInformer: f.Core().V1().Nodes(),
			EnableDynamicProvisioning: true,
		})
		if err != nil {
			return nil, err
		}
		return func() { c.Run(ctx) }, nil
	}},
	{PVCProtectionController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c, err := pvcprotection.NewPVCProtectionController(klog.FromContext(ctx), f.Core().V1().PersistentVolumeClaims(), f.Core().V1().Pods(), client)
		if err != nil {
			return nil, err
		}
		return func() { c.Run(ctx, 1) }, nil
	}},
	{PVProtectionController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c, err := pvprotection.NewPVProtectionController(klog.FromContext(ctx), f.Core().V1().PersistentVolumes(), client)
		if err != nil {
			return nil, err
		}
		return func() { c.Run(ctx, 1) }, nil
	}},
	{EndpointsController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c := endpointcontroller.NewEndpointController(ctx, f.Core().V1().Pods(), f.Core().V1().Services(), f.Core().V1().Endpoints(), client, 0)
		return func() { c.Run(ctx, endpointsWorkers) }, nil
	}},
	{EphemeralVolumeController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		// A pod's generic ephemeral volumes get their claims.
		c, err := ephemeral.NewController(ctx, client, f.Core().V1().Pods(), f.Core().V1().PersistentVolumeClaims())
		if err != nil {
			return nil, err
		}
		return func() { c.Run(ctx, ephemeralWorkers) }, nil
	}},
	{VACProtectionController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c, err := vacprotection.NewVACProtectionController(klog.FromContext(ctx), client,
			f.Core().V1().PersistentVolumeClaims(), f.Core().V1().PersistentVolumes(), f.Storage().V1().VolumeAttributesClasses())
		if err != nil {
			return nil, err
		}
		return func() { c.Run(ctx, 1) }, nil
	}},
	{TTLController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		// Nodes are annotated with how long kubelets may cache objects.
		c := ttl.NewTTLController(ctx, f.Core().V1().Nodes(), client)
		return func() { c.Run(ctx, nodeTTLWorkers) }, nil
	}},
	{ResourceClaimController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		// A pod's claim templates become its ResourceClaims, and claims
		// reserved for pods that are gone are released.
		c, err := resourceclaim.NewController(klog.FromContext(ctx), client, f.Core().V1().Pods(),
			f.Scheduling().V1beta1().PodGroups(), f.Resource().V1().ResourceClaims(), f.Resource().V1().ResourceClaimTemplates())
		if err != nil {
			return nil, err
		}
		return func() { c.Run(ctx, claimWorkers) }, nil
	}},
	{DeviceTaintEvictionController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c := devicetainteviction.New(client, f.Core().V1().Pods(), f.Resource().V1().ResourceClaims(), f.Resource().V1().ResourceSlices(),
			f.Resource().V1().DeviceTaintRules(), f.Resource().V1().DeviceClasses(), DeviceTaintEvictionController)
		return func() {
			if err := c.Run(ctx, deviceTaintWorkers); err != nil {
				klog.FromContext(ctx).Error(err, "Device taint processing leading to Pod eviction failed and is now paused")
			}
		}, nil
	}},
	{PodCertificateRequestCleanerController, func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (func(), error) {
		c := cleaner.NewPCRCleanerController(client, f.Certificates().V1().PodCertificateRequests(), clock.RealClock{},
			podCertificateRequestMaxAge, podCertificateRequestCleanPeriod)
		return func() { c.Run(ctx, 1) }, nil
	}},
}
