package builtin

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// TestWorkloadScale reads each workload's Scale (replicas wanted and
// current, selector as kube-apiserver renders it) and scales it.
func TestWorkloadScale(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "w", Namespace: "ns", UID: "u", ResourceVersion: "7"}
	selector := &metav1.LabelSelector{
		MatchLabels:      map[string]string{"app": "web"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}},
	}
	const appsSelector = "app=web,tier in (a,b)"
	for _, tc := range []struct {
		obj          runtime.Object
		wantReplicas int32
		wantSelector string
	}{
		{&appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: selector}, Status: appsv1.DeploymentStatus{Replicas: 2}}, 3, appsSelector},
		{&appsv1.ReplicaSet{ObjectMeta: meta, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Selector: selector}, Status: appsv1.ReplicaSetStatus{Replicas: 2}}, 3, appsSelector},
		{&appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), Selector: selector}, Status: appsv1.StatefulSetStatus{Replicas: 2}}, 3, appsSelector},
		{&corev1.ReplicationController{ObjectMeta: meta, Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](3), Selector: map[string]string{"app": "web"}}, Status: corev1.ReplicationControllerStatus{Replicas: 2}}, 3, "app=web"},
		{&appsv1.Deployment{ObjectMeta: meta}, 1, ""}, // replicas unset: the default
	} {
		s, err := deploymentScale.Of(tc.obj)
		if err != nil {
			t.Fatalf("%T: %v", tc.obj, err)
		}
		if s.Name != "w" || s.Namespace != "ns" || s.UID != "u" || s.ResourceVersion != "7" ||
			s.Spec.Replicas != tc.wantReplicas || s.Status.Selector != tc.wantSelector {
			t.Errorf("%T: scale %+v, want replicas %d selector %q", tc.obj, s, tc.wantReplicas, tc.wantSelector)
		}
		if tc.wantSelector != "" && s.Status.Replicas != 2 {
			t.Errorf("%T: status replicas %d, want 2", tc.obj, s.Status.Replicas)
		}

		scaled, err := deploymentScale.WithReplicas(tc.obj, 9)
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := deploymentScale.Of(scaled); s.Spec.Replicas != 9 {
			t.Errorf("%T scaled to 9 reads back %d", tc.obj, s.Spec.Replicas)
		}
		if s, _ := deploymentScale.Of(tc.obj); s.Spec.Replicas != tc.wantReplicas {
			t.Errorf("%T: scaling changed the original", tc.obj)
		}
	}
	if _, err := deploymentScale.Of(&corev1.Pod{}); err == nil {
		t.Error("a pod has a scale")
	}
}
