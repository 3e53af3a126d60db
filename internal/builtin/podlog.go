package builtin

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericrest "k8s.io/apiserver/pkg/registry/generic/rest"
	"k8s.io/apiserver/pkg/registry/rest"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/features"
	kubeletclient "k8s.io/kubernetes/pkg/kubelet/client"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/internal/pipeline"
)

var nodesGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// podLogs serves pods/log as kube-apiserver does, with its options,
// validation and choice of container: from the kubelet of the pod's node.
// A simulated node's containers write nothing, so their log is empty, and
// a followed log ends at once.
type podLogs struct {
	p        *pipeline.Pipeline
	kubelets *kubelets
}

func (l *podLogs) stream(ctx context.Context, namespace, name string, query url.Values) (rest.ResourceStreamer, error) {
	opts := &api.PodLogOptions{}
	if err := legacyscheme.ParameterCodec.DecodeParameters(query, corev1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	splitStreams := utilfeature.DefaultFeatureGate.Enabled(features.PodLogsQuerySplitStreams)
	if splitStreams && opts.Stream == nil {
		opts.Stream = ptr.To(api.LogStreamAll)
	}
	if errs := validation.ValidatePodLogOptions(opts, splitStreams); len(errs) > 0 {
		return nil, apierrors.NewInvalid(api.Kind("PodLogOptions"), name, errs)
	}
	conn := &logConnections{kubelets: l.kubelets}
	getter := &podGetter{pods: pods{p: l.p}}
	location, transport, err := pod.LogLocation(genericapirequest.WithNamespace(ctx, namespace), getter, conn, name, opts)
	if err != nil {
		return nil, err
	}
	if conn.simulated {
		// The simulated kubelet answers from the pod LogLocation read.
		if err := noLogYet(getter.read, path.Base(location.Path), opts.Previous); err != nil {
			return nil, err
		}
		return emptyLog{}, nil
	}
	return &genericrest.LocationStreamer{
		Location:        location,
		Transport:       transport,
		ContentType:     "text/plain",
		Flush:           opts.Follow,
		ResponseChecker: genericrest.NewGenericHttpResponseChecker(api.Resource("pods/log"), name),
		RedirectChecker: genericrest.PreventRedirects,
	}, nil
}

// logConnections find the kubelet of a log's node, noting a simulated
// one, which has none.
type logConnections struct {
	kubelets  *kubelets
	simulated bool
}

func (c *logConnections) GetConnectionInfo(ctx context.Context, nodeName types.NodeName) (*kubeletclient.ConnectionInfo, error) {
	info, simulated, err := c.kubelets.connection(ctx, nodeName)
	if simulated {
		c.simulated = true
		return &kubeletclient.ConnectionInfo{Scheme: "https", Hostname: string(nodeName), Port: "10250"}, nil
	}
	return info, err
}

// noLogYet is the kubelet's 400 for a container that has no log to give
// (not started, or no previous run), in its words, as kube-apiserver
// passes them on; nil when it has one.
func noLogYet(p *corev1.Pod, container string, previous bool) error {
	status, found := containerStatus(p, container)
	refuse := func(format string, args ...any) error {
		return apierrors.NewBadRequest(fmt.Sprintf(format, append([]any{container, p.Name}, args...)...))
	}
	last := status.LastTerminationState.Terminated
	switch state := status.State; {
	case !found:
		return refuse("container %q in pod %q is not available")
	case previous:
		if last == nil || last.ContainerID == "" {
			return refuse("previous terminated container %q in pod %q not found")
		}
	case state.Running != nil:
	case state.Terminated != nil:
		if state.Terminated.ContainerID == "" && (last == nil || last.ContainerID == "") {
			return refuse("container %q in pod %q is terminated")
		}
	case last != nil:
		if last.ContainerID == "" {
			return refuse("container %q in pod %q is terminated")
		}
	case state.Waiting != nil:
		return refuse("container %q in pod %q is waiting to start: %v", state.Waiting.Reason)
	default:
		return refuse("container %q in pod %q is waiting to start - no logs yet")
	}
	return nil
}

// containerStatus finds the status of a pod's container of any kind.
func containerStatus(p *corev1.Pod, name string) (corev1.ContainerStatus, bool) {
	for _, statuses := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses, p.Status.EphemeralContainerStatuses} {
		for _, s := range statuses {
			if s.Name == name {
				return s, true
			}
		}
	}
	return corev1.ContainerStatus{}, false
}

// emptyLog is the log of a simulated container that ran or runs: it
// wrote nothing.
type emptyLog struct{}

func (emptyLog) InputStream(context.Context, string, string) (io.ReadCloser, bool, string, error) {
	return io.NopCloser(strings.NewReader("")), false, "text/plain", nil
}

func (emptyLog) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func (e emptyLog) DeepCopyObject() runtime.Object { return e }
