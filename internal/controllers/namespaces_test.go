package controllers

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// TestGraceEstimateListReadsPagesAndKeepsWhatTheEstimateReads: the
// namespace deleter's list of a namespace's pods comes in pages of 500,
// every pod of every page is in the answer, and each keeps its phase and
// its termination grace period (what the deleter's estimate reads) and
// nothing else of its spec.
func TestGraceEstimateListReadsPagesAndKeepsWhatTheEstimateReads(t *testing.T) {
	const total = 1203
	client := fake.NewClientset()
	var limits []int64
	client.PrependReactor("list", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		opts := action.(clienttesting.ListActionImpl).ListOptions
		limits = append(limits, opts.Limit)
		start := 0
		if opts.Continue != "" {
			start, _ = strconv.Atoi(opts.Continue)
		}
		end := min(start+int(opts.Limit), total)
		page := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}}
		for i := start; i < end; i++ {
			page.Items = append(page.Items, corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", i)},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To(int64(i)),
					Containers:                    []corev1.Container{{Name: "c", Image: "busybox"}},
				},
				Status: corev1.PodStatus{Phase: corev1.PodRunning},
			})
		}
		if end < total {
			page.Continue = strconv.Itoa(end)
		}
		return true, page, nil
	})

	core := graceEstimateClient{client}.CoreV1()
	// The deleter checks its pods' getter for a nil pointer this way,
	// which panics on anything but a pointer (or another nilable kind).
	if reflect.ValueOf(core).IsNil() {
		t.Fatal("the pods' getter is nil")
	}
	list, err := core.Pods("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{500, 500, 500}; fmt.Sprint(limits) != fmt.Sprint(want) {
		t.Errorf("list requests' limits %v, want %v", limits, want)
	}
	if len(list.Items) != total {
		t.Fatalf("%d pods, want %d", len(list.Items), total)
	}
	for i, pod := range list.Items {
		if pod.Name != fmt.Sprintf("p%d", i) || pod.Status.Phase != corev1.PodRunning ||
			pod.Spec.TerminationGracePeriodSeconds == nil || *pod.Spec.TerminationGracePeriodSeconds != int64(i) {
			t.Fatalf("pod %d is %s, phase %q, grace %v", i, pod.Name, pod.Status.Phase, pod.Spec.TerminationGracePeriodSeconds)
		}
		if len(pod.Spec.Containers) != 0 {
			t.Fatalf("pod %d kept its containers", i)
		}
	}
}
