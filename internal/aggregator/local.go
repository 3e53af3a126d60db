package aggregator

import (
	"context"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationv1helper "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"
	"k8s.io/kube-aggregator/pkg/controllers/autoregister"

	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/resources"
)

// followServedVersions keeps the autoregister controller's set of local
// APIServices equal to the group-versions the registry serves. Built-in
// group-versions are registered "on start" (kept as they were if an admin
// changes them later), the others (custom resources) for as long as they
// are served, as kube-apiserver's CRD registration does. It registers the
// versions served now before it returns, as kube-apiserver does before the
// controller runs (a controller that ran first would delete the
// APIServices it had not been told of, and never bring back those it
// syncs only on start); the function it returns follows later changes
// until ctx ends.
func followServedVersions(reg *registry.Registry, auto autoregister.AutoAPIServiceRegistration) func(ctx context.Context) {
	var registered map[string]bool
	return reg.Follow(func(snap *registry.Snapshot) { registered = registerServed(snap, auto, registered) })
}

// registerServed tells auto the local APIServices of snap, and to forget
// those of before that snap no longer serves.
func registerServed(snap *registry.Snapshot, auto autoregister.AutoAPIServiceRegistration, before map[string]bool) map[string]bool {
	served := map[string]bool{}
	for _, svc := range localAPIServices(snap.Resources) {
		served[svc.Name] = true
		if resources.IsBuiltinGroupVersion(svc.Spec.Group, svc.Spec.Version) {
			auto.AddAPIServiceToSyncOnStart(svc)
		} else {
			auto.AddAPIServiceToSync(svc)
		}
	}
	for name := range before {
		if !served[name] {
			auto.RemoveAPIServiceToSync(name)
		}
	}
	return served
}

// localAPIServices are the APIServices of the group-versions reg serves,
// without a Service: kapi serves them itself. The aggregator's own group
// has none, as in kube-apiserver.
func localAPIServices(reg *resources.Registry) []*apiregistrationv1.APIService {
	var out []*apiregistrationv1.APIService
	for _, g := range reg.Groups() {
		if g.Group == apiregistrationv1.GroupName {
			continue
		}
		for _, v := range g.Versions {
			groupPriority, versionPriority := resources.APIServicePriority(g.Group, v.Version)
			out = append(out, &apiregistrationv1.APIService{
				ObjectMeta: metav1.ObjectMeta{Name: v.Version + "." + g.Group},
				Spec: apiregistrationv1.APIServiceSpec{
					Group: g.Group, Version: v.Version,
					GroupPriorityMinimum: groupPriority, VersionPriority: versionPriority,
				},
			})
		}
	}
	return out
}

// LocalAvailable fails until the APIService of every group-version kapi
// serves exists and is available, as kube-apiserver's
// autoregister-completion check does.
func (a *Aggregator) LocalAvailable() error {
	var missing []string
	for _, want := range localAPIServices(a.cfg.Registry.Snapshot().Resources) {
		svc, err := a.apiServices.Get(want.Name)
		if err != nil || !apiregistrationv1helper.IsAPIServiceConditionTrue(svc, apiregistrationv1.Available) {
			missing = append(missing, want.Name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("missing APIService: %v", missing)
	}
	return nil
}
