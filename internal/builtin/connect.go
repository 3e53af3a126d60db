package builtin

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	proxyutil "k8s.io/apiserver/pkg/util/proxy"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/registry/core/node"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	podrest "k8s.io/kubernetes/pkg/registry/core/pod/rest"
	"k8s.io/kubernetes/pkg/registry/core/service"

	"github.com/kapi-dev/kapi/internal/pipeline"
)

var endpointSlicesGVR = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}

// proxyTransport is how kube-apiserver proxies to pods and services by
// default: by IP, so their certificates' names cannot be checked.
var proxyTransport = utilnet.SetTransportDefaults(&http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}})

// proxyMethods are the methods a proxy sub-resource passes on.
var proxyMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}

// podConnects serve a pod's exec, attach and portforward with kube's own
// storage (the kubelet of the pod's node is asked, websocket clients'
// streams translated, create permission checked for them), and its proxy.
func podConnects(p *pipeline.Pipeline, k *kubelets, authz authorizer.UnconditionalAuthorizer) map[string]rest.Connecter {
	shared := pods{p: p}
	return map[string]rest.Connecter{
		"exec":        &podrest.ExecREST{Store: shared, KubeletConn: k, Authorizer: authz},
		"attach":      &podrest.AttachREST{Store: shared, KubeletConn: k, Authorizer: authz},
		"portforward": &podrest.PortForwardREST{Store: shared, KubeletConn: k, Authorizer: authz},
		"proxy":       &podProxy{p: p, kubelets: k},
	}
}

// podProxy serves pods/proxy: requests passed on to the pod's IP, as kube's
// pod proxy does. A pod on a simulated node has nothing listening.
type podProxy struct {
	p        *pipeline.Pipeline
	kubelets *kubelets
}

func (*podProxy) New() runtime.Object      { return &api.PodProxyOptions{} }
func (*podProxy) Destroy()                 {}
func (*podProxy) ConnectMethods() []string { return proxyMethods }
func (*podProxy) NewConnectOptions() (runtime.Object, bool, string) {
	return &api.PodProxyOptions{}, true, "path"
}

func (pp *podProxy) Connect(ctx context.Context, id string, opts runtime.Object, responder rest.Responder) (http.Handler, error) {
	getter := &podGetter{pods: pods{p: pp.p}}
	location, transport, err := pod.ResourceLocation(ctx, getter, proxyTransport, id)
	if err != nil {
		return nil, err
	}
	if n := getter.read.Spec.NodeName; n != "" {
		if _, simulated, err := pp.kubelets.connection(ctx, types.NodeName(n)); err == nil && simulated {
			return nil, simulatedNode(n)
		}
	}
	location.Path = utilnet.JoinPreservingTrailingSlash(location.Path, opts.(*api.PodProxyOptions).Path)
	return proxyHandler(location, transport, responder), nil
}

// nodeProxy serves nodes/proxy: requests passed on to the node's kubelet,
// or another port of the node, as kube's node proxy does.
type nodeProxy struct{ kubelets *kubelets }

func (*nodeProxy) New() runtime.Object      { return &api.NodeProxyOptions{} }
func (*nodeProxy) Destroy()                 {}
func (*nodeProxy) ConnectMethods() []string { return proxyMethods }
func (*nodeProxy) NewConnectOptions() (runtime.Object, bool, string) {
	return &api.NodeProxyOptions{}, true, "path"
}

func (np *nodeProxy) Connect(ctx context.Context, id string, opts runtime.Object, responder rest.Responder) (http.Handler, error) {
	location, transport, err := node.ResourceLocation(nil, np.kubelets, proxyTransport, ctx, id)
	if err != nil {
		return nil, err
	}
	location.Path = utilnet.JoinPreservingTrailingSlash(location.Path, opts.(*api.NodeProxyOptions).Path)
	return proxyHandler(location, transport, responder), nil
}

// proxyHandler passes a request on to location, rewriting the URLs of
// what answers, as kube's proxy sub-resources do.
func proxyHandler(location *url.URL, transport http.RoundTripper, responder rest.Responder) http.Handler {
	return proxy.NewUpgradeAwareHandler(location, transport, true, false, proxy.NewErrorResponder(responder))
}

// serviceProxy serves services/proxy with kube's service proxy, passing
// requests on to a ready endpoint of the Service.
func serviceProxy(p *pipeline.Pipeline, k *kubelets) rest.Connecter {
	return &service.ProxyREST{Redirector: &serviceLocations{p: p, kubelets: k}, ProxyTransport: proxyTransport}
}

// serviceLocations find where to send a Service's proxied requests, as
// kube's Service storage does: a random ready endpoint of its
// EndpointSlices that is a pod at that address, for the port named or
// numbered. Pods on simulated nodes serve nothing.
type serviceLocations struct {
	p        *pipeline.Pipeline
	kubelets *kubelets
}

func (s *serviceLocations) ResourceLocation(ctx context.Context, id string) (*url.URL, http.RoundTripper, error) {
	scheme, name, port, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid service request %q", id))
	}
	namespace := genericapirequest.NamespaceValue(ctx)
	if number, err := strconv.ParseInt(port, 10, 64); err == nil {
		if port, err = s.portName(ctx, namespace, name, number); err != nil {
			return nil, nil, err
		}
	}
	if namespace == "" {
		return nil, nil, apierrors.NewBadRequest("missing required namespace")
	}
	slices, err := s.endpointSlices(ctx, namespace, name)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	if len(slices) == 0 {
		return nil, nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	}
	hostPort, err := proxyutil.RandomEndpoint(name, slices, port, corev1.IPv4Protocol, func(ep *discoveryv1.Endpoint) bool {
		return s.servingPod(ctx, namespace, ep)
	})
	if err != nil {
		return nil, nil, err
	}
	return &url.URL{Scheme: scheme, Host: hostPort}, proxyTransport, nil
}

// portName is the name of a Service's port by its number.
func (s *serviceLocations) portName(ctx context.Context, namespace, name string, number int64) (string, error) {
	obj, err := s.p.Registry().Snapshot().Lookup(servicesGVR).Get(ctx, namespace, name)
	if err != nil {
		return "", err
	}
	for _, port := range obj.(*corev1.Service).Spec.Ports {
		if int64(port.Port) == number {
			return port.Name, nil
		}
	}
	return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", number, name))
}

// endpointSlices are a Service's EndpointSlices.
func (s *serviceLocations) endpointSlices(ctx context.Context, namespace, name string) ([]*discoveryv1.EndpointSlice, error) {
	list, err := s.p.Registry().Snapshot().Lookup(endpointSlicesGVR).List(ctx, namespace, func(obj runtime.Object) bool {
		return obj.(*discoveryv1.EndpointSlice).Labels[discoveryv1.LabelServiceName] == name
	})
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	slices := make([]*discoveryv1.EndpointSlice, 0, len(items))
	for _, item := range items {
		slices = append(slices, item.(*discoveryv1.EndpointSlice))
	}
	return slices, nil
}

// servingPod reports whether an endpoint is a pod of the namespace at the
// endpoint's address, as kube proxies only to those, and runs on a real
// node.
func (s *serviceLocations) servingPod(ctx context.Context, namespace string, ep *discoveryv1.Endpoint) bool {
	ref := ep.TargetRef
	if ref == nil || ref.Namespace != namespace {
		return false
	}
	obj, err := s.p.Registry().Snapshot().Lookup(podsGVR).Get(ctx, namespace, ref.Name)
	if err != nil {
		return false
	}
	p := obj.(*corev1.Pod)
	if _, simulated, err := s.kubelets.connection(ctx, types.NodeName(p.Spec.NodeName)); err == nil && simulated {
		return false
	}
	for _, ip := range p.Status.PodIPs {
		if ip.IP == ep.Addresses[0] {
			return true
		}
	}
	return false
}
