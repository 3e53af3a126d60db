// Package scheduler runs kube-scheduler inside the server: Kubernetes' own
// scheduler (k8s.io/kubernetes/pkg/scheduler) with its default profile,
// through client-go over the server's in-process connection, as
// kube-scheduler runs it. Pods get bound to nodes, or the PodScheduled
// condition and FailedScheduling events say why not, exactly as on a
// cluster; the simulated nodes (package simnodes) are what it binds to when
// kapi runs without a cluster.
package scheduler

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	kubescheduler "k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/profile"

	"github.com/kapi-dev/kapi/internal/cacheinformers"
)

// Run schedules pods until ctx ends. config is kube-scheduler's identity;
// newInformers makes its informer factory over a client of it.
func Run(ctx context.Context, config *rest.Config, newInformers func(kubernetes.Interface, time.Duration) *cacheinformers.Factory) error {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	dynamicClient, err := dynamic.NewForConfig(config)
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	broadcaster := events.NewEventBroadcasterAdapterWithContext(ctx, client)
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()
	var recorders profile.RecorderFactory = func(name string) events.EventRecorderLogger {
		return broadcaster.NewRecorder(name)
	}

	// Its informers are its own, as kube-scheduler's are; its pod
	// informer leaves finished pods out, with kube-scheduler's selector
	// and without indexes. kube-scheduler's factory does not resync.
	informers := newInformers(client, 0)
	informers.InformerWithOptions(&corev1.Pod{}, internalinterfaces.InformerOptions{
		Indexers: cache.Indexers{}, TweakListOptions: unfinishedPods,
	})
	dynamicInformers := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamicClient, 0, "", nil)
	sched, err := kubescheduler.New(ctx, client, informers, dynamicInformers, recorders, kubescheduler.WithKubeConfig(config))
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	informers.StartWithContext(ctx)
	dynamicInformers.Start(ctx.Done())
	defer informers.Shutdown()
	defer dynamicInformers.Shutdown()
	informers.WaitForCacheSync(ctx.Done())
	dynamicInformers.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	sched.Run(ctx)
	return nil
}

// unfinishedPods selects the pods kube-scheduler's pod informer keeps:
// those neither Succeeded nor Failed.
func unfinishedPods(opts *metav1.ListOptions) {
	opts.FieldSelector = fields.AndSelectors(
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
	).String()
}
