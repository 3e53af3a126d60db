// Package aggregator is kapi's aggregation layer, as kube-apiserver's
// kube-aggregator: it keeps an APIService for every group-version kapi
// serves itself, reports whether each APIService is available, lists the
// group-versions of APIServices backed by a Service in discovery, and
// proxies their requests to that Service's endpoints with the user's
// identity in headers, authenticated by the front proxy's client
// certificate.
//
// It acts through the API like kube-apiserver's own aggregator: informers
// (of Services and EndpointSlices the server's, read from its watch
// caches) and a client over the in-process connection, with
// kube-aggregator's controllers (autoregister, local and remote
// availability).
package aggregator

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiserverproxy "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	aggregatorinformers "k8s.io/kube-aggregator/pkg/client/informers/externalversions"
	apiservicelisters "k8s.io/kube-aggregator/pkg/client/listers/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/controllers/autoregister"
	localavailability "k8s.io/kube-aggregator/pkg/controllers/status/local"
	availabilitymetrics "k8s.io/kube-aggregator/pkg/controllers/status/metrics"
	"k8s.io/kube-aggregator/pkg/controllers/status/remote"

	"github.com/kapi-dev/kapi/internal/registry"
)

// Config is what the aggregation layer needs.
type Config struct {
	// Client reaches kapi itself (the in-process connection) with the
	// identity of kube-apiserver's own loopback client.
	Client *rest.Config
	// Registry is followed for the group-versions kapi serves.
	Registry *registry.Registry
	// ProxyCertPEM and ProxyKeyPEM are the front proxy's client
	// credentials, presented to aggregated API servers.
	ProxyCertPEM, ProxyKeyPEM []byte
	Logger                    *slog.Logger
	// Informers are the server's informers of built-in types (Services
	// and EndpointSlices, to resolve an APIService's Service), started
	// by Run.
	Informers informers.SharedInformerFactory
}

// Aggregator serves aggregated APIs in front of kapi's own handlers.
type Aggregator struct {
	cfg         Config
	apiServices apiservicelisters.APIServiceLister
	resolver    serviceResolver
	discovery   *remoteDiscovery
	v2          mergedV2

	start func(ctx context.Context) error
}

// New prepares the aggregation layer; Run starts it.
func New(cfg Config) (*Aggregator, error) {
	apiServiceClient, err := aggregatorclient.NewForConfig(cfg.Client)
	if err != nil {
		return nil, err
	}
	// kube-aggregator's APIService informers resync every 5 minutes (the
	// remote availability controller rechecks every 30 seconds).
	apiServiceFactory := aggregatorinformers.NewSharedInformerFactory(apiServiceClient, 5*time.Minute)
	kubeFactory := cfg.Informers
	apiServiceInformer := apiServiceFactory.Apiregistration().V1().APIServices()
	services := kubeFactory.Core().V1().Services()
	endpointSlices := kubeFactory.Discovery().V1().EndpointSlices()
	slices, err := apiserverproxy.NewEndpointSliceIndexerGetter(endpointSlices)
	if err != nil {
		return nil, err
	}

	a := &Aggregator{
		cfg:         cfg,
		apiServices: apiServiceInformer.Lister(),
		resolver:    serviceResolver{services: services.Lister(), slices: slices},
	}
	a.discovery = newRemoteDiscovery(a)

	apiServicesV1 := apiServiceClient.ApiregistrationV1()
	autoRegister := autoregister.NewAutoRegisterController(apiServiceInformer, apiServicesV1)
	metrics := availabilitymetrics.New()
	localAvailability, err := localavailability.New(apiServiceInformer, apiServicesV1, metrics)
	if err != nil {
		return nil, err
	}
	proxyCredentials := func() ([]byte, []byte) { return cfg.ProxyCertPEM, cfg.ProxyKeyPEM }
	remoteAvailability, err := remote.New(apiServiceInformer, services, endpointSlices, apiServicesV1,
		nil, proxyCredentials, a.resolver, metrics)
	if err != nil {
		return nil, err
	}

	a.start = func(ctx context.Context) error {
		apiServiceFactory.StartWithContext(ctx)
		kubeFactory.StartWithContext(ctx)
		for typ, ok := range apiServiceFactory.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return fmt.Errorf("aggregator: %v informer did not sync", typ)
			}
		}
		follow := followServedVersions(cfg.Registry, autoRegister)
		go follow(ctx)
		go autoRegister.Run(workers, ctx.Done())
		go localAvailability.Run(workers, ctx.Done())
		go remoteAvailability.Run(workers, ctx.Done())
		return nil
	}
	return a, nil
}

// workers per controller, as kube-apiserver runs them.
const workers = 5

// Run starts the informers and controllers and returns once the
// APIServices are listed (the proxy knows the aggregated APIs); they run
// until ctx ends.
func (a *Aggregator) Run(ctx context.Context) error { return a.start(ctx) }

// serviceResolver finds a ready endpoint of a Service port, as
// kube-aggregator's endpoint resolver does, and reaches an ExternalName
// Service at its name, as kube-apiserver reaches admission webhooks.
//
// The second is kapi's: kube-aggregator refuses ExternalName Services.
// kapi has no cluster network, and endpoints may not be loopback
// addresses, so an aggregated server on kapi's own machine is only
// reachable as an ExternalName Service ("localhost") whose port the
// APIService names.
type serviceResolver struct {
	services corelisters.ServiceLister
	slices   apiserverproxy.EndpointSliceGetter
}

func (r serviceResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	svc, err := r.services.Services(namespace).Get(name)
	if err == nil && svc.Spec.Type == corev1.ServiceTypeExternalName {
		return apiserverproxy.ResolveCluster(r.services, namespace, name, port)
	}
	return apiserverproxy.ResolveEndpoint(r.services, r.slices, namespace, name, port)
}
