package server

import (
	"context"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestHorizontalPodAutoscalerInEveryVersion writes HPAs through one version
// and reads them through the other, as kube-apiserver serves them: stored
// once (in autoscaling/v2) and converted, with what v1 cannot express
// carried in annotations.
func TestHorizontalPodAutoscalerInEveryVersion(t *testing.T) {
	s := startServer(t)
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	ctx := context.Background()
	v2 := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](2), MaxReplicas: 5,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
					Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)}}},
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
					Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("100Mi"))}}},
			},
		},
	}
	if _, err := client.AutoscalingV2().HorizontalPodAutoscalers("default").Create(ctx, v2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	got, err := client.AutoscalingV1().HorizontalPodAutoscalers("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.TargetCPUUtilizationPercentage == nil || *got.Spec.TargetCPUUtilizationPercentage != 60 || got.Spec.MaxReplicas != 5 {
		t.Errorf("v1 view of a v2 HPA: spec %+v", got.Spec)
	}
	if metrics := got.Annotations["autoscaling.alpha.kubernetes.io/metrics"]; !strings.Contains(metrics, "memory") {
		t.Errorf("v1 view lacks the memory metric in its annotations: %v", got.Annotations)
	}

	list, err := client.AutoscalingV1().HorizontalPodAutoscalers("").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Spec.TargetCPUUtilizationPercentage == nil {
		t.Fatalf("v1 list: %+v, %v", list, err)
	}

	// A v1 update keeps the memory metric (it travels in the annotation)
	// and is read back through v2 with both metrics.
	w, err := client.AutoscalingV1().HorizontalPodAutoscalers("default").Watch(ctx, metav1.ListOptions{ResourceVersion: got.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	got.Spec.MaxReplicas = 7
	if _, err := client.AutoscalingV1().HorizontalPodAutoscalers("default").Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	back, err := client.AutoscalingV2().HorizontalPodAutoscalers("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if back.Spec.MaxReplicas != 7 || len(back.Spec.Metrics) != 2 {
		t.Errorf("v2 view after a v1 update: maxReplicas %d, metrics %+v", back.Spec.MaxReplicas, back.Spec.Metrics)
	}
	if _, found := back.Annotations["autoscaling.alpha.kubernetes.io/metrics"]; found {
		t.Errorf("v2 view carries v1's annotation: %v", back.Annotations)
	}
	// The v1 update is tracked in managedFields (the field manager
	// converts the stored object to the version of each entry).
	if !hasManagedEntry(back.ManagedFields, metav1.ManagedFieldsOperationUpdate, "autoscaling/v1") {
		t.Errorf("no managedFields entry of the v1 update: %+v", back.ManagedFields)
	}
	select {
	case ev := <-w.ResultChan():
		hpa, ok := ev.Object.(*autoscalingv1.HorizontalPodAutoscaler)
		if ev.Type != watch.Modified || !ok || hpa.Spec.MaxReplicas != 7 || hpa.Spec.TargetCPUUtilizationPercentage == nil {
			t.Errorf("v1 watch event: %s %+v", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no v1 watch event for the update")
	}

	// Created through v1, read through v2.
	v1 := &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "api"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"},
			MaxReplicas:    3, TargetCPUUtilizationPercentage: ptr.To[int32](80),
		},
	}
	if _, err := client.AutoscalingV1().HorizontalPodAutoscalers("default").Create(ctx, v1, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	asV2, err := client.AutoscalingV2().HorizontalPodAutoscalers("default").Get(ctx, "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(asV2.Spec.Metrics) != 1 || asV2.Spec.Metrics[0].Resource == nil ||
		asV2.Spec.Metrics[0].Resource.Target.AverageUtilization == nil || *asV2.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 {
		t.Errorf("v2 view of a v1 HPA: metrics %+v", asV2.Spec.Metrics)
	}
}

func hasManagedEntry(entries []metav1.ManagedFieldsEntry, op metav1.ManagedFieldsOperationType, apiVersion string) bool {
	for _, e := range entries {
		if e.Operation == op && e.APIVersion == apiVersion {
			return true
		}
	}
	return false
}
