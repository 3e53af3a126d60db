// Package simnodes simulates nodes: it keeps the nodes labelled as
// simulated Ready, with their heartbeat Leases in kube-node-lease as a
// kubelet keeps them, and plays the kubelet for the pods bound to them:
// they become Running with pod IPs, ready conditions and container
// statuses without any container being run (once the ConfigMaps, Secrets
// and claims they mount or read exist), Job pods finish, and deleted
// pods go once their (imaginary) containers have stopped. With the
// scheduler (package scheduler) and the workload controllers, a Deployment
// becomes Available, a Job Complete and a Service gets endpoints on a
// machine without a cluster.
//
// It acts only on nodes with the label Label, so real or hand-made nodes
// beside them are left alone.
package simnodes

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Label marks a node as simulated: kapi keeps it Ready and runs its pods.
const Label = "kapi.dev/simulated"

// Config is what the simulation needs.
type Config struct {
	// Client acts as the nodes' kubelets.
	Client kubernetes.Interface
	// Informers is the shared informer factory (nodes and pods); the
	// caller starts it after Run has registered its handlers.
	Informers informers.SharedInformerFactory
	// Nodes is how many simulated nodes to create on start (node-1 to
	// node-N); existing ones are kept.
	Nodes  int
	Logger *slog.Logger
	// KubeletVersion is the version the nodes report.
	KubeletVersion string
}

// workers is how many pods and nodes are synced at once, as many as the
// workload controllers' workers.
const workers = 5

// Run registers the simulation's handlers on the informers and returns
// the function that runs it until ctx ends.
func Run(ctx context.Context, cfg Config) (func(), error) {
	features, err := declaredFeatures(cfg.KubeletVersion)
	if err != nil {
		cfg.Logger.Warn("simulated nodes declare no features", "err", err)
	}
	s := &simulator{
		declaredFeatures: features,
		client:           cfg.Client,
		logger:           cfg.Logger,
		version:          cfg.KubeletVersion,
		nodes:            cfg.Informers.Core().V1().Nodes().Lister(),
		pods:             cfg.Informers.Core().V1().Pods().Lister(),
		podQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "simulated-kubelet"}),
		nodeQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "simulated-nodes"}),
		volumeQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "simulated-volumes"}),
		claims:     cfg.Informers.Core().V1().PersistentVolumeClaims().Lister(),
		volumes:    cfg.Informers.Core().V1().PersistentVolumes().Lister(),
		classes:    cfg.Informers.Storage().V1().StorageClasses().Lister(),
		configMaps: cfg.Informers.Core().V1().ConfigMaps().Lister(),
		secrets:    cfg.Informers.Core().V1().Secrets().Lister(),
		heartbeats: map[string]context.CancelFunc{},
		events:     newKubeletEvents(cfg.Client.CoreV1()),
		ips:        newAddresses(),
	}
	nodeInformer := cfg.Informers.Core().V1().Nodes().Informer()
	podInformer := cfg.Informers.Core().V1().Pods().Informer()
	if err := podInformer.AddIndexers(cache.Indexers{byNode: indexByNode}); err != nil {
		return nil, fmt.Errorf("simulated nodes: %w", err)
	}
	s.podsByNode = podInformer.GetIndexer()
	if _, err := nodeInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    s.enqueueNode,
		UpdateFunc: func(_, node any) { s.enqueueNode(node) },
		DeleteFunc: s.enqueueNode,
	}); err != nil {
		return nil, fmt.Errorf("simulated nodes: %w", err)
	}
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    s.enqueuePod,
		UpdateFunc: func(_, pod any) { s.enqueuePod(pod) },
		DeleteFunc: s.podGone,
	}); err != nil {
		return nil, fmt.Errorf("simulated nodes: %w", err)
	}
	claimInformer := cfg.Informers.Core().V1().PersistentVolumeClaims().Informer()
	if _, err := claimInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(claim any) { s.enqueueClaim(claim); s.wakeWaiting(claim) },
		UpdateFunc: func(_, claim any) { s.enqueueClaim(claim); s.wakeWaiting(claim) },
	}); err != nil {
		return nil, fmt.Errorf("simulated nodes: %w", err)
	}
	// Pods wait for the ConfigMaps and Secrets they mount or read.
	configMapInformer := cfg.Informers.Core().V1().ConfigMaps().Informer()
	secretInformer := cfg.Informers.Core().V1().Secrets().Informer()
	for _, informer := range []cache.SharedIndexInformer{configMapInformer, secretInformer} {
		if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    s.wakeWaiting,
			UpdateFunc: func(_, obj any) { s.wakeWaiting(obj) },
		}); err != nil {
			return nil, fmt.Errorf("simulated nodes: %w", err)
		}
	}
	volumeInformer := cfg.Informers.Core().V1().PersistentVolumes().Informer()
	if _, err := volumeInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    s.enqueueVolume,
		UpdateFunc: func(_, pv any) { s.enqueueVolume(pv) },
	}); err != nil {
		return nil, fmt.Errorf("simulated nodes: %w", err)
	}
	classInformer := cfg.Informers.Storage().V1().StorageClasses().Informer()
	return func() {
		if err := s.createNodes(ctx, cfg.Nodes); err != nil {
			s.logger.Error("creating simulated nodes failed", "err", err)
		}
		s.run(ctx, nodeInformer.HasSynced, podInformer.HasSynced, claimInformer.HasSynced, volumeInformer.HasSynced, classInformer.HasSynced,
			configMapInformer.HasSynced, secretInformer.HasSynced)
	}, nil
}

// simulator is the nodes' kubelets.
type simulator struct {
	client  kubernetes.Interface
	logger  *slog.Logger
	version string
	// declaredFeatures are what the nodes declare they support.
	declaredFeatures []string
	nodes            corelisters.NodeLister
	pods             corelisters.PodLister
	podsByNode       cache.Indexer
	podQueue         workqueue.TypedRateLimitingInterface[string]
	nodeQueue        workqueue.TypedRateLimitingInterface[string]
	// volumeQueue holds claims to provision and volumes to reclaim.
	volumeQueue workqueue.TypedRateLimitingInterface[string]
	claims      corelisters.PersistentVolumeClaimLister
	volumes     corelisters.PersistentVolumeLister
	classes     storagelisters.StorageClassLister
	configMaps  corelisters.ConfigMapLister
	secrets     corelisters.SecretLister
	// waiting are the pods waiting for ConfigMaps, Secrets or claims.
	waiting waitingPods
	ips     *addresses
	events  *kubeletEvents

	mu         sync.Mutex
	heartbeats map[string]context.CancelFunc // by node name
	beating    sync.WaitGroup                // the heartbeats' goroutines
}

func (s *simulator) run(ctx context.Context, synced ...cache.InformerSynced) {
	defer s.events.shutdown()
	defer s.podQueue.ShutDown()
	defer s.nodeQueue.ShutDown()
	defer s.volumeQueue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return
	}
	var running sync.WaitGroup
	for range workers {
		for _, worker := range []func(context.Context){s.nodeWorker, s.podWorker, s.volumeWorker} {
			running.Add(1)
			go func() { defer running.Done(); wait.UntilWithContext(ctx, worker, time.Second) }()
		}
	}
	<-ctx.Done()
	s.podQueue.ShutDown()
	s.nodeQueue.ShutDown()
	s.volumeQueue.ShutDown()
	running.Wait()
	s.mu.Lock()
	for _, stop := range s.heartbeats {
		stop()
	}
	s.mu.Unlock()
	s.beating.Wait()
}

func (s *simulator) nodeWorker(ctx context.Context) {
	for s.process(ctx, s.nodeQueue, s.syncNode) {
	}
}

func (s *simulator) podWorker(ctx context.Context) {
	for s.process(ctx, s.podQueue, s.syncPod) {
	}
}

func (s *simulator) volumeWorker(ctx context.Context) {
	for s.process(ctx, s.volumeQueue, s.syncVolumeKey) {
	}
}

// process syncs one key of queue, retrying it with back-off on failure.
func (s *simulator) process(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], sync func(context.Context, string) error) bool {
	key, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(key)
	err := sync(ctx, key)
	switch {
	case err == nil:
		queue.Forget(key)
	case apierrors.IsNotFound(err):
		queue.Forget(key) // gone meanwhile: its deletion is queued
	default:
		if !apierrors.IsConflict(err) {
			s.logger.Warn("simulated nodes: syncing failed, retrying", "key", key, "err", err)
		}
		queue.AddRateLimited(key)
	}
	return true
}

// simulated reports whether node is one of the simulated nodes.
func simulated(node *corev1.Node) bool {
	return node != nil && node.Labels[Label] == "true"
}

func (s *simulator) enqueueNode(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if node, ok := obj.(*corev1.Node); ok {
		s.nodeQueue.Add(node.Name)
	}
}

func (s *simulator) enqueuePod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return
	}
	if key, err := cache.MetaNamespaceKeyFunc(pod); err == nil {
		s.podQueue.Add(key)
	}
}

// podGone gives a deleted pod's address back.
func (s *simulator) podGone(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if pod, ok := obj.(*corev1.Pod); ok {
		s.ips.release(pod)
		s.waiting.remove(pod.Namespace, keyOf(pod))
	}
}

// byNode indexes pods by the node they are bound to.
const byNode = "kapi.dev/simulated-node"

func indexByNode(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return nil, nil
	}
	return []string{pod.Spec.NodeName}, nil
}

// changed reports whether wanted differs from have.
func changed[T any](have, wanted T) bool {
	return !apiequality.Semantic.DeepEqual(have, wanted)
}
