package admission

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	apiadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	webhookinit "k8s.io/apiserver/pkg/admission/plugin/webhook/initializer"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kapi-dev/kapi/internal/webhook"
)

// pluginInit gives kube admission plugins what kube-apiserver's plugin
// initializers give them: clients of the server itself, a shared informer
// factory, a REST mapper (which learns resources added later, such as
// custom resources, every ten seconds), the authorizer, the feature gates
// and the webhook service resolver.
type pluginInit struct {
	client   kubernetes.Interface
	informer informers.SharedInformerFactory
	apiadmission.PluginInitializers
}

func newPluginInit(ctx context.Context, config *rest.Config, factory informers.SharedInformerFactory, authz authorizer.Authorizer) (*pluginInit, error) {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	go wait.Until(mapper.Reset, 10*time.Second, ctx.Done())
	return &pluginInit{
		client: client, informer: factory,
		PluginInitializers: apiadmission.PluginInitializers{
			initializer.New(client, dyn, factory, authz, utilfeature.DefaultFeatureGate,
				compatibility.DefaultBuildEffectiveVersion(), ctx.Done(), mapper),
			webhookinit.NewPluginInitializer(nil, webhook.ServiceResolver{Client: client}),
		},
	}, nil
}

// initialize initialises plugins and checks they have what they need.
func (i *pluginInit) initialize(plugins ...apiadmission.Interface) error {
	for _, p := range plugins {
		i.Initialize(p)
		if err := apiadmission.ValidateInitialization(p); err != nil {
			return fmt.Errorf("admission: %w", err)
		}
	}
	return nil
}

// start fills the informers the plugins asked for and waits for them.
func (i *pluginInit) start(ctx context.Context) {
	i.informer.Start(ctx.Done())
	i.informer.WaitForCacheSync(ctx.Done())
}
