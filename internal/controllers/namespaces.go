package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/kubernetes/pkg/controller/namespace"
)

// namespaceWorkers is how many namespaces are emptied at once
// (kube-controller-manager's --concurrent-namespace-syncs default).
const namespaceWorkers = 10

// runNamespaces starts kube-controller-manager's namespace controller: it
// empties namespaces being deleted (reporting progress in their status
// conditions), retries while finalizers hold their content, and then
// removes the kubernetes finalizer so that the namespace goes.
func runNamespaces(ctx context.Context, start func(func()), client kubernetes.Interface, metadataClient metadata.Interface, factory informers.SharedInformerFactory) {
	c := namespace.NewNamespaceController(ctx, graceEstimateClient{client}, metadataClient,
		client.Discovery().ServerPreferredNamespacedResources,
		factory.Core().V1().Namespaces(), namespaceResync, corev1.FinalizerKubernetes)
	start(func() { c.Run(ctx, namespaceWorkers) })
}

// graceEstimateClient is the namespace controller's client. Its deleter
// lists a namespace's pods only to find their longest termination grace
// period, and it lists them in one response, each pod whole: in
// kube-controller-manager that is its own process's memory, in kapi the
// server's (a namespace of 10,000 pods held 190 MB of decoded pods at
// once). Here that list is read in pages and keeps of each pod only what
// the estimate reads. The deleter takes the pods' getter as an interface it
// checks for a nil pointer, so the getter is a pointer.
type graceEstimateClient struct{ kubernetes.Interface }

func (c graceEstimateClient) CoreV1() typedcorev1.CoreV1Interface {
	return &graceEstimateCore{c.Interface.CoreV1()}
}

type graceEstimateCore struct{ typedcorev1.CoreV1Interface }

func (c *graceEstimateCore) Pods(namespace string) typedcorev1.PodInterface {
	return graceEstimatePods{c.CoreV1Interface.Pods(namespace)}
}

type graceEstimatePods struct{ typedcorev1.PodInterface }

// graceEstimatePage is how many pods a page of the estimate's list holds.
const graceEstimatePage = 500

// List returns the pods opts selects, each holding only its phase and its
// termination grace period.
func (p graceEstimatePods) List(ctx context.Context, opts metav1.ListOptions) (*corev1.PodList, error) {
	opts.Limit = graceEstimatePage
	all := &corev1.PodList{}
	for {
		page, err := p.PodInterface.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range page.Items {
			pod := &page.Items[i]
			all.Items = append(all.Items, corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
				Spec:       corev1.PodSpec{TerminationGracePeriodSeconds: pod.Spec.TerminationGracePeriodSeconds},
				Status:     corev1.PodStatus{Phase: pod.Status.Phase},
			})
		}
		all.ResourceVersion = page.ResourceVersion
		if page.Continue == "" {
			return all, nil
		}
		opts.Continue = page.Continue
	}
}
