package convert

import (
	"sort"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

func hpaV2(metrics ...autoscalingv2.MetricSpec) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: "default"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "d", APIVersion: "apps/v1"},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: 4, Metrics: metrics,
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			CurrentReplicas: 2, DesiredReplicas: 3,
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "ReadyForNewScale"}},
		},
	}
}

var (
	cpu60 = autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)}}}
	memory = autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1Gi"))}}}
	pods = autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("10"))}}}
)

func TestHorizontalPodAutoscalerV2ToV1(t *testing.T) {
	c := New()
	tests := []struct {
		name           string
		in             *autoscalingv2.HorizontalPodAutoscaler
		wantCPU        *int32
		wantAnnotation bool
	}{
		{"cpu only", hpaV2(cpu60), ptr.To[int32](60), false},
		{"memory and pods", hpaV2(memory, pods), nil, true},
		{"cpu and memory", hpaV2(cpu60, memory), ptr.To[int32](60), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := c.Convert(tc.in, autoscalingv1.SchemeGroupVersion)
			if err != nil {
				t.Fatal(err)
			}
			v1 := out.(*autoscalingv1.HorizontalPodAutoscaler)
			if v1.APIVersion != "autoscaling/v1" || v1.Kind != "HorizontalPodAutoscaler" {
				t.Errorf("kind %s %s", v1.APIVersion, v1.Kind)
			}
			if !apiequality.Semantic.DeepEqual(v1.Spec.TargetCPUUtilizationPercentage, tc.wantCPU) {
				t.Errorf("targetCPUUtilizationPercentage %v, want %v", v1.Spec.TargetCPUUtilizationPercentage, tc.wantCPU)
			}
			if _, found := v1.Annotations["autoscaling.alpha.kubernetes.io/metrics"]; found != tc.wantAnnotation {
				t.Errorf("metrics annotation present %v, want %v: %v", found, tc.wantAnnotation, v1.Annotations)
			}
			back, err := c.Convert(v1, autoscalingv2.SchemeGroupVersion)
			if err != nil {
				t.Fatal(err)
			}
			roundTrip := back.(*autoscalingv2.HorizontalPodAutoscaler)
			roundTrip.TypeMeta = tc.in.TypeMeta
			// Kube's conversion appends the CPU target to the metrics the
			// annotation carries, so the order may change; nothing is lost.
			if !apiequality.Semantic.DeepEqual(normalized(roundTrip), normalized(tc.in)) {
				t.Errorf("v2 -> v1 -> v2 lost something:\n got %+v\nwant %+v", roundTrip, tc.in)
			}
		})
	}
}

func TestConvertLeavesItsInputAlone(t *testing.T) {
	in := hpaV2(cpu60, memory)
	before := in.DeepCopy()
	if _, err := New().Convert(in, autoscalingv1.SchemeGroupVersion); err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(in, before) {
		t.Error("Convert changed its input")
	}
}

func TestHandles(t *testing.T) {
	c := New()
	if !c.Handles(schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}) {
		t.Error("HPAs not handled")
	}
	if c.Handles(schema.GroupKind{Kind: "Pod"}) {
		t.Error("pods handled, but the core group is not installed")
	}
}

// normalized orders metrics by type and name and reads an empty
// currentMetrics as none, the two ways a round trip through v1 may differ.
func normalized(hpa *autoscalingv2.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	out := hpa.DeepCopy()
	key := func(m autoscalingv2.MetricSpec) string {
		if m.Resource != nil {
			return string(m.Type) + "/" + string(m.Resource.Name)
		}
		return string(m.Type)
	}
	sort.Slice(out.Spec.Metrics, func(i, j int) bool { return key(out.Spec.Metrics[i]) < key(out.Spec.Metrics[j]) })
	if len(out.Status.CurrentMetrics) == 0 {
		out.Status.CurrentMetrics = nil
	}
	return out
}
