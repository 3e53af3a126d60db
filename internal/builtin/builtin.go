// Package builtin holds what built-in types do beyond their generic
// strategy, as hooks on their backends: Services allocate ClusterIPs and
// node ports, pods are bound to nodes, namespaces are kept until emptied,
// workloads are scaled.
// Each hook acts on other objects only through the write pipeline.
package builtin

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
)

// Hooks returns the hooks of the built-in resources that have any, by
// group-resource.
func Hooks(p *pipeline.Pipeline, opts Options) map[schema.GroupResource]registry.Hooks {
	b := &binder{p: p}
	k := newKubelets(p)
	e := &evictor{p: p}
	hooks := map[schema.GroupResource]registry.Hooks{
		{Resource: "services"}:   serviceHooks(p, opts.ServiceCIDR, k),
		{Resource: "namespaces"}: namespaceHooks(),
		{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}: crdHooks(),
		{Resource: "pods"}: {
			Actions: map[string]registry.Action{
				"binding": namedAs("Binding", statusOnly(b.bindPod)), "eviction": namedAs("Eviction", e.evict),
			},
			Streams:  map[string]registry.Stream{"log": (&podLogs{p: p, kubelets: k}).stream},
			Connects: podConnects(p, k, opts.Authorizer),
			Share:    sharePodResources,
		},
		{Resource: "nodes"}:             {Connects: map[string]rest.Connecter{"proxy": &nodeProxy{kubelets: k}}},
		{Resource: "bindings"}:          {Actions: map[string]registry.Action{"": statusOnly(b.bindPodIgnoringUID)}},
		{Resource: "componentstatuses"}: {Computed: componentStatuses(opts.ComponentStatuses)},

		{Group: "apps", Resource: "deployments"}:                  {Scale: deploymentScale},
		{Group: "apps", Resource: "replicasets"}:                  {Scale: replicaSetScale},
		{Group: "apps", Resource: "statefulsets"}:                 {Scale: statefulSetScale},
		{Resource: "replicationcontrollers"}:                      {Scale: controllerScale},
		{Group: "batch", Resource: "jobs"}:                        {DeleteWarning: jobDeleteWarning},
		{Group: "scheduling.k8s.io", Resource: "priorityclasses"}: {RefuseDelete: refuseSystemPriorityClass},
	}
	for _, more := range []map[schema.GroupResource]registry.Hooks{
		reviewHooks(opts), rbacHooks(p, opts.Authorizer), tokenHooks(p, opts.Tokens),
	} {
		for gr, h := range more {
			hooks[gr] = h
		}
	}
	return hooks
}

// jobDeleteWarning is kube's Job storage's warning for a delete that
// leaves batch/v1's default of orphaning the Job's pods implicit.
func jobDeleteWarning(opts *metav1.DeleteOptions) string {
	if opts == nil || opts.PropagationPolicy != nil || opts.OrphanDependents != nil {
		return ""
	}
	return "child pods are preserved by default when jobs are deleted; " +
		"set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"
}

// namedAs is an action on a named object whose body must carry the URL's
// name, as a pod's binding and eviction must.
func namedAs(kind string, act registry.Action) registry.Action {
	return func(ctx context.Context, namespace, name string, obj runtime.Object, dryRun bool) (runtime.Object, error) {
		if mustAccessor(obj).GetName() != name {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("name in URL does not match name in %s object", kind))
		}
		return act(ctx, namespace, name, obj, dryRun)
	}
}

// statusOnly is an action answered with a success Status.
func statusOnly(act func(ctx context.Context, namespace string, obj runtime.Object, dryRun bool) error) registry.Action {
	return func(ctx context.Context, namespace, _ string, obj runtime.Object, dryRun bool) (runtime.Object, error) {
		return nil, act(ctx, namespace, obj, dryRun)
	}
}
