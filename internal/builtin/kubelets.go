package builtin

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	kubeletclient "k8s.io/kubernetes/pkg/kubelet/client"

	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/simnodes"
)

// kubelets reach the kubelets of nodes as kube-apiserver reaches them with
// its defaults: the kubelet's port, the preferred node addresses, and no
// kubelet CA (its certificate is not verified). Simulated nodes have no
// kubelet.
type kubelets struct {
	p      *pipeline.Pipeline
	getter kubeletclient.ConnectionInfoGetter
	// err is why there is no getter (never, with kube's defaults).
	err error
}

func newKubelets(p *pipeline.Pipeline) *kubelets {
	k := &kubelets{p: p}
	k.getter, k.err = kubeletclient.NewNodeConnectionInfoGetter(kubeletclient.NodeGetterFunc(k.node), kubeletclient.KubeletClientConfig{
		Port: 10250, ReadOnlyPort: 10255,
		PreferredAddressTypes: []string{
			string(api.NodeHostName), string(api.NodeInternalDNS), string(api.NodeInternalIP),
			string(api.NodeExternalDNS), string(api.NodeExternalIP),
		},
	})
	return k
}

// node reads a node for its kubelet's connection. A node that does not
// exist is not found under the resource of the request (pods for a pod's
// logs), as kube-apiserver's node storage, which takes its resource from
// the request, answers.
func (k *kubelets) node(ctx context.Context, name string, _ metav1.GetOptions) (*corev1.Node, error) {
	obj, err := k.p.Registry().Snapshot().Lookup(nodesGVR).Get(ctx, "", name)
	if apierrors.IsNotFound(err) {
		if info, ok := genericapirequest.RequestInfoFrom(ctx); ok {
			return nil, apierrors.NewNotFound(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, name)
		}
	}
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Node), nil
}

// connection is how to reach the kubelet of a node, or simulated (and no
// connection) for a simulated node.
func (k *kubelets) connection(ctx context.Context, nodeName types.NodeName) (info *kubeletclient.ConnectionInfo, simulated bool, err error) {
	node, err := k.node(ctx, string(nodeName), metav1.GetOptions{})
	if err != nil {
		return nil, false, err
	}
	if node.Labels[simnodes.Label] == "true" {
		return nil, true, nil
	}
	if k.err != nil {
		return nil, false, apierrors.NewInternalError(k.err)
	}
	info, err = k.getter.GetConnectionInfo(ctx, nodeName)
	return info, false, err
}

// GetConnectionInfo is the connection to a real node's kubelet; a
// simulated node's is refused with simulatedNode.
func (k *kubelets) GetConnectionInfo(ctx context.Context, nodeName types.NodeName) (*kubeletclient.ConnectionInfo, error) {
	info, simulated, err := k.connection(ctx, nodeName)
	if simulated {
		return nil, simulatedNode(string(nodeName))
	}
	return info, err
}

// simulatedNode refuses a connection to what runs on a simulated node:
// its containers run nothing and no kubelet answers for it.
func simulatedNode(node string) error {
	return apierrors.NewServiceUnavailable(fmt.Sprintf("node %q is simulated: it has no kubelet and its containers run nothing to connect to", node))
}

// pods read the pods of the request's namespace in their internal version,
// for kube's functions that find where a pod's log or streams are. They
// keep nothing, so connecters share them.
type pods struct{ p *pipeline.Pipeline }

func (g pods) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	_, internal, err := g.get(ctx, name)
	return internal, err
}

// get reads a pod as served and in its internal version.
func (g pods) get(ctx context.Context, name string) (*corev1.Pod, *api.Pod, error) {
	obj, err := g.p.Registry().Snapshot().Lookup(podsGVR).Get(ctx, genericapirequest.NamespaceValue(ctx), name)
	if err != nil {
		return nil, nil, err
	}
	internal := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(obj, internal, nil); err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	return obj.(*corev1.Pod), internal, nil
}

// podGetter is pods for one request, keeping the last pod it read as
// served.
type podGetter struct {
	pods
	read *corev1.Pod
}

func (g *podGetter) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	served, internal, err := g.get(ctx, name)
	if err != nil {
		return nil, err
	}
	g.read = served
	return internal, nil
}
