package admission

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
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
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/kubernetes/pkg/kubeapiserver/admission/exclusion"

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

// Clients are how the plugins reach the server.
type Clients struct {
	// Config is the configuration of the loopback connection.
	Config *rest.Config
	// Informers is the informer factory the plugins share.
	Informers informers.SharedInformerFactory
	// OpenAPIV3, when set, reads the server's OpenAPI v3 documents in
	// process (openapi.InProcessV3): the plugins' clients have it in place
	// of the one that reads /openapi/v3 over the connection.
	OpenAPIV3 openapi.Client
	// Drained is closed once the server's requests are done, the
	// controllers' included: plugins that answer requests from workers of
	// their own (ResourceQuota) keep those until then, as kube-apiserver's
	// plugins keep theirs until its in-flight requests have drained. Nil:
	// the plugins' context.
	Drained <-chan struct{}
}

func newPluginInit(ctx context.Context, clients Clients, authz authorizer.Authorizer) (*pluginInit, error) {
	config, factory := clients.Config, clients.Informers
	var client kubernetes.Interface
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	if clients.OpenAPIV3 != nil {
		client = withOpenAPIV3{client, clients.OpenAPIV3}
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
			excludedResources(exclusion.Excluded()),
		},
	}, nil
}

// excludedResources are the resources the policy and webhook plugins
// never see, as kube-apiserver's initializer gives them: the reviews,
// whose interception could lock everyone out.
type excludedResources []schema.GroupResource

func (e excludedResources) Initialize(plugin apiadmission.Interface) {
	if wants, ok := plugin.(initializer.WantsExcludedAdmissionResources); ok {
		wants.SetExcludedAdmissionResources(e)
	}
}

// withOpenAPIV3 is a client whose discovery reads OpenAPI v3 from another
// client.
type withOpenAPIV3 struct {
	kubernetes.Interface
	openAPIV3 openapi.Client
}

func (c withOpenAPIV3) Discovery() discovery.DiscoveryInterfaces {
	return discoveryWithOpenAPIV3{c.Interface.Discovery(), c.openAPIV3}
}

type discoveryWithOpenAPIV3 struct {
	discovery.DiscoveryInterfaces
	openAPIV3 openapi.Client
}

func (d discoveryWithOpenAPIV3) OpenAPIV3() openapi.Client { return d.openAPIV3 }

func (d discoveryWithOpenAPIV3) OpenAPIV3WithContext(context.Context) openapi.ClientWithContext {
	return openapi.ToClientWithContext(d.openAPIV3)
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
	i.informer.StartWithContext(ctx)
	i.informer.WaitForCacheSync(ctx.Done())
}
