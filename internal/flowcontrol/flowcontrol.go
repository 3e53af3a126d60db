// Package flowcontrol is API Priority and Fairness as kube-apiserver runs
// it: k8s.io/apiserver's configuration controller and filter (FlowSchemas
// classify each request into a PriorityLevelConfiguration, whose seats it
// waits for in a shuffle-sharded queue, or gets 429 with Retry-After; the
// X-Kubernetes-PF-* headers name both; system:masters is exempt), fed by
// Kubernetes' bootstrap configuration, which it keeps in place as
// kube-apiserver's priority-and-fairness-config-producer does.
package flowcontrol

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	flowcontrolbootstrap "k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	apimux "k8s.io/apiserver/pkg/server/mux"
	"k8s.io/apiserver/pkg/storage"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	fcmetrics "k8s.io/apiserver/pkg/util/flowcontrol/metrics"
	flowcontrolrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	flowcontrolclient "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"
	flowcontrollisters "k8s.io/client-go/listers/flowcontrol/v1"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/registry/flowcontrol/ensurer"

	"github.com/kapi-dev/kapi/internal/filters"
)

// The health checks kube-apiserver names for priority and fairness.
const (
	HookConfigProducer = "priority-and-fairness-config-producer"
	HookConfigConsumer = "priority-and-fairness-config-consumer"
	HookFilter         = "priority-and-fairness-filter"
)

// kube-apiserver's defaults: --max-requests-inflight plus
// --max-mutating-requests-inflight seats, and a quarter of the minute's
// request timeout as the longest wait in a queue.
const (
	serverConcurrencyLimit = 400 + 200
	requestWaitLimit       = 15 * time.Second
	ensureEvery            = time.Minute
)

// FlowControl classifies and queues requests.
type FlowControl struct {
	controller utilflowcontrol.Interface
	informers  informers.SharedInformerFactory
	client     flowcontrolclient.FlowcontrolV1Interface
	estimate   flowcontrolrequest.WorkEstimatorFunc
	logger     *slog.Logger
}

// ObjectCounts tells how many objects a resource ("pods",
// "deployments.apps") has, for the work a list costs.
type ObjectCounts func(resource schema.GroupResource) (int64, bool)

// New prepares priority and fairness over config, the server's own
// connection (its configuration objects' status is written through it),
// and factory, whose informers it reads them with and starts.
func New(config *rest.Config, factory informers.SharedInformerFactory, counts ObjectCounts, logger *slog.Logger) (*FlowControl, error) {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("priority and fairness: %w", err)
	}
	fcmetrics.Register() // apiserver_flowcontrol_*, once per process
	controller := utilflowcontrol.New(factory, client.FlowcontrolV1(), serverConcurrencyLimit)
	stats := func(key string) (storage.Stats, error) {
		n, ok := counts(schema.ParseGroupResource(key))
		if !ok {
			// As kube-apiserver's tracker answers for a resource it
			// holds no count of (an aggregated server's, or one whose
			// storage has not counted yet): its lists cost the
			// fewest seats, since another server does the work.
			return storage.Stats{}, flowcontrolrequest.ObjectCountNotFoundErr
		}
		return storage.Stats{ObjectCount: n}, nil
	}
	estimate := flowcontrolrequest.NewWorkEstimator(stats, controller.GetInterestedWatchCount,
		flowcontrolrequest.DefaultWorkEstimatorConfig(), controller.GetMaxSeats)
	return &FlowControl{controller: controller, informers: factory, client: client.FlowcontrolV1(), estimate: estimate, logger: logger}, nil
}

// InstallDebug serves kube-apiserver's dumps of priority and fairness
// state (/debug/api_priority_and_fairness/dump_priority_levels,
// dump_queues and dump_requests, in CSV), its controller's own handlers.
func (f *FlowControl) InstallDebug(mux *http.ServeMux) {
	dumps := apimux.NewPathRecorderMux("priority-and-fairness")
	f.controller.Install(dumps)
	mux.Handle("/debug/api_priority_and_fairness/", dumps)
}

// Filter queues each request for its priority level's seats, as
// kube-apiserver's filter does, by the user and request info in its
// context.
func (f *FlowControl) Filter(next http.Handler) http.Handler {
	return genericfilters.WithPriorityAndFairness(next, filters.LongRunning, f.controller, f.estimate, requestWaitLimit)
}

// Start puts Kubernetes' bootstrap configuration in place (on a first
// start, written all at once by create) and starts applying the
// configuration objects to the filter; run, which the caller runs until
// ctx ends, keeps both going.
func (f *FlowControl) Start(ctx context.Context, create Creator) (run func(), err error) {
	fsLister := f.informers.Flowcontrol().V1().FlowSchemas().Lister()
	plcLister := f.informers.Flowcontrol().V1().PriorityLevelConfigurations().Lister()
	f.informers.StartWithContext(ctx)
	for typ, synced := range f.informers.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return nil, fmt.Errorf("priority and fairness: %v informer not synced", typ)
		}
	}
	// A first start writes the whole configuration at once; otherwise the
	// ensurer brings what is there up to date, one object after another.
	seeded, err := seed(ctx, fsLister, plcLister, create)
	if err == nil && !seeded {
		err = f.ensure(ctx, fsLister, plcLister)
	}
	if err != nil {
		f.informers.Shutdown()
		return nil, fmt.Errorf("priority and fairness: bootstrap configuration: %w", err)
	}
	genericfilters.StartPriorityAndFairnessWatermarkMaintenance(ctx.Done())
	return func() {
		defer f.informers.Shutdown()
		go f.keepBootstrap(ctx, fsLister, plcLister)
		if err := f.controller.Run(ctx.Done()); err != nil && ctx.Err() == nil {
			f.logger.Error("priority and fairness controller failed", "err", err)
		}
	}, nil
}

// Creator writes a configuration object on behalf of the server, with
// the given field manager.
type Creator func(ctx context.Context, obj runtime.Object, manager string) error

// fieldManager is the manager kube-apiserver's configuration producer
// writes the bootstrap configuration as.
const fieldManager = "api-priority-and-fairness-config-producer-v1"

// seed writes the whole bootstrap configuration at once through create
// when the cluster has no configuration at all (a first start), as the
// ensurer would have made it one object after another; it reports
// whether it did. Anything else, a configuration object made meanwhile
// by another server included, is left to the ensurer.
func seed(ctx context.Context, fs flowcontrollisters.FlowSchemaLister, plc flowcontrollisters.PriorityLevelConfigurationLister, create Creator) (bool, error) {
	schemas, err := fs.List(labels.Everything())
	if err != nil {
		return false, err
	}
	levels, err := plc.List(labels.Everything())
	if err != nil || len(schemas) > 0 || len(levels) > 0 || create == nil {
		return false, err
	}
	var objects []runtime.Object
	for _, l := range slices.Concat(flowcontrolbootstrap.SuggestedPriorityLevelConfigurations, flowcontrolbootstrap.MandatoryPriorityLevelConfigurations) {
		objects = append(objects, l.DeepCopy())
	}
	for _, s := range slices.Concat(flowcontrolbootstrap.SuggestedFlowSchemas, flowcontrolbootstrap.MandatoryFlowSchemas) {
		objects = append(objects, s.DeepCopy())
	}
	var g errgroup.Group
	var existed atomic.Bool
	for _, obj := range objects {
		g.Go(func() error {
			err := create(ctx, obj, fieldManager)
			if apierrors.IsAlreadyExists(err) {
				existed.Store(true)
				return nil
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return false, err
	}
	return !existed.Load(), nil
}

// keepBootstrap restores the bootstrap configuration every minute, as
// kube-apiserver does: mandatory objects always, suggested ones unless
// their auto-update annotation is off.
func (f *FlowControl) keepBootstrap(ctx context.Context, fs flowcontrollisters.FlowSchemaLister, plc flowcontrollisters.PriorityLevelConfigurationLister) {
	tick := time.NewTicker(ensureEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := f.ensure(ctx, fs, plc); err != nil && ctx.Err() == nil {
				f.logger.Warn("restoring the priority and fairness bootstrap configuration failed", "err", err)
			}
		}
	}
}

// ensure creates or updates the suggested bootstrap objects (unless
// their auto-update annotation is off), then the mandatory ones, and
// deletes bootstrap objects Kubernetes no longer has, stopping at the
// first step that fails, as kube-apiserver does.
func (f *FlowControl) ensure(ctx context.Context, fsLister flowcontrollisters.FlowSchemaLister, plcLister flowcontrollisters.PriorityLevelConfigurationLister) error {
	plcs := ensurer.NewPriorityLevelConfigurationOps(f.client.PriorityLevelConfigurations(), plcLister)
	schemas := ensurer.NewFlowSchemaOps(f.client.FlowSchemas(), fsLister)
	allPLCs := append(append([]*flowcontrolv1.PriorityLevelConfiguration(nil),
		flowcontrolbootstrap.MandatoryPriorityLevelConfigurations...), flowcontrolbootstrap.SuggestedPriorityLevelConfigurations...)
	allSchemas := append(append([]*flowcontrolv1.FlowSchema(nil),
		flowcontrolbootstrap.MandatoryFlowSchemas...), flowcontrolbootstrap.SuggestedFlowSchemas...)
	steps := []func() error{
		func() error {
			return ensurer.EnsureConfigurations(ctx, plcs, flowcontrolbootstrap.SuggestedPriorityLevelConfigurations,
				ensurer.NewSuggestedEnsureStrategy[*flowcontrolv1.PriorityLevelConfiguration]())
		},
		func() error {
			return ensurer.EnsureConfigurations(ctx, schemas, flowcontrolbootstrap.SuggestedFlowSchemas,
				ensurer.NewSuggestedEnsureStrategy[*flowcontrolv1.FlowSchema]())
		},
		func() error {
			return ensurer.EnsureConfigurations(ctx, plcs, flowcontrolbootstrap.MandatoryPriorityLevelConfigurations,
				ensurer.NewMandatoryEnsureStrategy[*flowcontrolv1.PriorityLevelConfiguration]())
		},
		func() error {
			return ensurer.EnsureConfigurations(ctx, schemas, flowcontrolbootstrap.MandatoryFlowSchemas,
				ensurer.NewMandatoryEnsureStrategy[*flowcontrolv1.FlowSchema]())
		},
		func() error { return ensurer.RemoveUnwantedObjects(ctx, schemas, allSchemas) },
		func() error { return ensurer.RemoveUnwantedObjects(ctx, plcs, allPLCs) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}
