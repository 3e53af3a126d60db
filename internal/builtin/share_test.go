package builtin

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func podAsking(name string, cpu, memory string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "app",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory)},
			},
		}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
		}}},
	}
}

func sameMap(a, b corev1.ResourceList) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// Pods asking for the same resources share their lists' maps; pods asking
// for others do not; and sharing changes nothing a reader sees.
func TestPodsShareEqualResourceLists(t *testing.T) {
	first, second, other := podAsking("a", "100m", "64Mi"), podAsking("b", "0.1", "64Mi"), podAsking("c", "200m", "64Mi")
	want := second.DeepCopy()
	for _, pod := range []*corev1.Pod{first, second, other} {
		sharePodResources(pod)
	}
	firstRes, secondRes, otherRes := first.Spec.Containers[0].Resources, second.Spec.Containers[0].Resources, other.Spec.Containers[0].Resources
	if !sameMap(firstRes.Requests, secondRes.Requests) || !sameMap(firstRes.Limits, secondRes.Limits) {
		t.Errorf("equal requests (100m and 0.1 CPU) or limits are not shared")
	}
	if !sameMap(first.Status.ContainerStatuses[0].AllocatedResources, second.Status.ContainerStatuses[0].AllocatedResources) {
		t.Errorf("equal allocated resources in the status are not shared")
	}
	if sameMap(firstRes.Requests, otherRes.Requests) || sameMap(firstRes.Requests, firstRes.Limits) {
		t.Errorf("different lists share a map")
	}
	if !sameMap(firstRes.Limits, otherRes.Limits) {
		t.Errorf("equal limits of pods with other requests are not shared")
	}
	got, err := runtimeJSON(second)
	if err != nil {
		t.Fatal(err)
	}
	if expected, _ := runtimeJSON(want); got != expected {
		t.Errorf("sharing changed the pod's encoding:\n%s\nwant\n%s", got, expected)
	}
}

func runtimeJSON(pod *corev1.Pod) (string, error) {
	data, err := json.Marshal(pod)
	return string(data), err
}
