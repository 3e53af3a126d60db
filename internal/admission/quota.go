package admission

import (
	"context"
	"fmt"
	"sync/atomic"

	apiadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	resourcequotaapi "k8s.io/apiserver/pkg/admission/plugin/resourcequota/apis/resourcequota"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	quotainstall "k8s.io/kubernetes/pkg/quota/v1/install"
)

// quotaEvaluators is how many writes the quota plugin evaluates at once
// (kube-apiserver's default).
const quotaEvaluators = 5

// ResourceQuota is kube-apiserver's ResourceQuota admission plugin
// (k8s.io/apiserver) with Kubernetes' quota evaluators: a create or update
// that would take a namespace's usage past a ResourceQuota's hard limits
// is refused with a 403 naming the quota, and the quota's status.used is
// charged at once. It needs a client of the server itself, so it starts
// once the server serves (Start); writes before that are not charged.
type ResourceQuota struct {
	plugin  *resourcequota.QuotaAdmission
	started atomic.Bool
}

// NewResourceQuota makes the plugin; Start makes it enforce.
func NewResourceQuota() (*ResourceQuota, error) {
	plugin, err := resourcequota.NewResourceQuota(&resourcequotaapi.Configuration{}, quotaEvaluators)
	if err != nil {
		return nil, err
	}
	return &ResourceQuota{plugin: plugin}, nil
}

// Start gives the plugin its client and informers, as kube-apiserver's
// plugin initializers do, and turns it on until ctx ends.
func (q *ResourceQuota) Start(ctx context.Context, clients Clients) error {
	config, factory := clients.Config, clients.Informers
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	quotaConfig, err := quotainstall.NewQuotaConfigurationForAdmission(factory, nil)
	if err != nil {
		return err
	}
	// A write the plugin takes waits for one of its workers, for up to
	// 10 s: they must outlive every request that can still arrive.
	drained := clients.Drained
	if drained == nil {
		drained = ctx.Done()
	}
	q.plugin.SetDrainedNotification(drained)
	q.plugin.SetExternalKubeClientSet(client)
	q.plugin.SetExternalKubeInformerFactory(factory)
	q.plugin.SetQuotaConfiguration(quotaConfig)
	if err := q.plugin.ValidateInitialization(); err != nil {
		return fmt.Errorf("resource quota admission: %w", err)
	}
	factory.StartWithContext(ctx)
	factory.WaitForCacheSync(ctx.Done())
	q.started.Store(true)
	return nil
}

// Validate implements Validator.
func (q *ResourceQuota) Validate(ctx context.Context, a *Attributes) error {
	if !q.started.Load() || !q.plugin.Handles(apiadmission.Operation(a.Operation)) {
		return nil
	}
	return q.plugin.Validate(ctx, kubeAttributes(ctx, a), apiadmission.NewObjectInterfacesFromScheme(legacyscheme.Scheme))
}
