package convert

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/utils/ptr"
)

// The annotations kube's autoscaling/v1 conversion keeps what v1 cannot
// express in (k8s.io/kubernetes/pkg/apis/autoscaling/annotations.go).
const (
	metricsAnnotation        = "autoscaling.alpha.kubernetes.io/metrics"
	currentMetricsAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	conditionsAnnotation     = "autoscaling.alpha.kubernetes.io/conditions"
	behaviorAnnotation       = "autoscaling.alpha.kubernetes.io/behavior"
)

var roundTripAnnotations = []string{metricsAnnotation, currentMetricsAnnotation, conditionsAnnotation, behaviorAnnotation}

// Times survive the conditions annotation only to the second, as in kube.
var lastTransition = metav1.NewTime(time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC))

func hpaV2(metrics ...autoscalingv2.MetricSpec) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{
			Name: "h", Namespace: "default", ResourceVersion: "7", Generation: 2,
			Labels:      map[string]string{"app": "web"},
			Annotations: map[string]string{"owner": "team-a"},
		},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "d", APIVersion: "apps/v1"},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: 4, Metrics: metrics,
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 3},
	}
}

// with applies edits to a copy of hpa.
func with(hpa *autoscalingv2.HorizontalPodAutoscaler, edits ...func(*autoscalingv2.HorizontalPodAutoscaler)) *autoscalingv2.HorizontalPodAutoscaler {
	out := hpa.DeepCopy()
	for _, edit := range edits {
		edit(out)
	}
	return out
}

func resourceMetric(name corev1.ResourceName, target autoscalingv2.MetricTarget) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: name, Target: target}}
}

var (
	cpu60  = resourceMetric(corev1.ResourceCPU, autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)})
	cpuAvg = resourceMetric(corev1.ResourceCPU, autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("500m"))})
	memory = resourceMetric(corev1.ResourceMemory, autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1Gi"))})
	pods   = autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("10"))}}}
	external = autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "queue", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"q": "jobs"}}},
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(resource.MustParse("30"))}}}
	object = autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
		DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Ingress", Name: "main", APIVersion: "networking.k8s.io/v1"},
		Metric:          autoscalingv2.MetricIdentifier{Name: "rps"},
		Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(resource.MustParse("2k"))}}}
	containerCPU = autoscalingv2.MetricSpec{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
		Name: corev1.ResourceCPU, Container: "app", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](70)}}}

	cpuStatus = autoscalingv2.MetricStatus{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
		Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](45), AverageValue: ptr.To(resource.MustParse("225m"))}}}
	podsStatus = autoscalingv2.MetricStatus{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricStatus{
		Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(resource.MustParse("12"))}}}

	conditions = []autoscalingv2.HorizontalPodAutoscalerCondition{
		{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, LastTransitionTime: lastTransition, Reason: "ReadyForNewScale", Message: "recommended size matches current size"},
		{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionTrue, LastTransitionTime: lastTransition, Reason: "ValidMetricFound"},
	}

	behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0), SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
			Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15}}},
		ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](300), Tolerance: ptr.To(resource.MustParse("50m"))},
	}
)

func withStatus(metrics ...autoscalingv2.MetricStatus) func(*autoscalingv2.HorizontalPodAutoscaler) {
	return func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Status.CurrentMetrics = metrics }
}
func withConditions(h *autoscalingv2.HorizontalPodAutoscaler) { h.Status.Conditions = conditions }
func withBehavior(h *autoscalingv2.HorizontalPodAutoscaler)   { h.Spec.Behavior = behavior.DeepCopy() }

func convert[T runtime.Object](t *testing.T, c *Converter, in runtime.Object, to schema.GroupVersion) T {
	t.Helper()
	out, err := c.Convert(in, to)
	if err != nil {
		t.Fatalf("converting to %v: %v", to, err)
	}
	typed, ok := out.(T)
	if !ok {
		t.Fatalf("converting to %v gave a %T", to, out)
	}
	if gvk := out.GetObjectKind().GroupVersionKind(); gvk.GroupVersion() != to {
		t.Errorf("result's apiVersion is %v, want %v", gvk.GroupVersion(), to)
	}
	return typed
}

// annotation decodes a JSON annotation of obj, failing when it is absent.
func annotation[T any](t *testing.T, obj metav1.Object, key string) T {
	t.Helper()
	var v T
	raw, found := obj.GetAnnotations()[key]
	if !found {
		t.Fatalf("annotation %s missing: %v", key, obj.GetAnnotations())
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("annotation %s: %v", key, err)
	}
	return v
}

func TestHorizontalPodAutoscalerV2ToV1(t *testing.T) {
	c := New()
	v1Pods := autoscalingv1.MetricSpec{Type: autoscalingv1.PodsMetricSourceType, Pods: &autoscalingv1.PodsMetricSource{MetricName: "qps", TargetAverageValue: resource.MustParse("10")}}
	v1Memory := autoscalingv1.MetricSpec{Type: autoscalingv1.ResourceMetricSourceType, Resource: &autoscalingv1.ResourceMetricSource{Name: corev1.ResourceMemory, TargetAverageValue: ptr.To(resource.MustParse("1Gi"))}}
	v1CPUAvg := autoscalingv1.MetricSpec{Type: autoscalingv1.ResourceMetricSourceType, Resource: &autoscalingv1.ResourceMetricSource{Name: corev1.ResourceCPU, TargetAverageValue: ptr.To(resource.MustParse("500m"))}}
	tests := []struct {
		name        string
		in          *autoscalingv2.HorizontalPodAutoscaler
		wantCPU     *int32
		wantMetrics []autoscalingv1.MetricSpec // in the metrics annotation; nil: no annotation
	}{
		{"cpu utilization only", hpaV2(cpu60), ptr.To[int32](60), nil},
		{"memory and pods", hpaV2(memory, pods), nil, []autoscalingv1.MetricSpec{v1Memory, v1Pods}},
		{"cpu utilization and memory", hpaV2(cpu60, memory), ptr.To[int32](60), []autoscalingv1.MetricSpec{v1Memory}},
		// Only a CPU *utilization* target maps to targetCPUUtilizationPercentage.
		{"cpu average value", hpaV2(cpuAvg), nil, []autoscalingv1.MetricSpec{v1CPUAvg}},
		{"no metrics (not defaulted)", hpaV2(), nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v1 := convert[*autoscalingv1.HorizontalPodAutoscaler](t, c, tc.in, autoscalingv1.SchemeGroupVersion)
			if v1.Kind != "HorizontalPodAutoscaler" {
				t.Errorf("kind %q", v1.Kind)
			}
			if !reflect.DeepEqual(v1.Spec.TargetCPUUtilizationPercentage, tc.wantCPU) {
				t.Errorf("targetCPUUtilizationPercentage %v, want %v", ptr.Deref(v1.Spec.TargetCPUUtilizationPercentage, -1), ptr.Deref(tc.wantCPU, -1))
			}
			if tc.wantMetrics == nil {
				if raw, found := v1.Annotations[metricsAnnotation]; found {
					t.Errorf("unexpected metrics annotation %s", raw)
				}
			} else if got := annotation[[]autoscalingv1.MetricSpec](t, v1, metricsAnnotation); !apiequality.Semantic.DeepEqual(got, tc.wantMetrics) {
				t.Errorf("metrics annotation:\n%s", diff.Diff(tc.wantMetrics, got))
			}
			if v1.Annotations["owner"] != "team-a" || v1.Labels["app"] != "web" || v1.ResourceVersion != "7" {
				t.Errorf("metadata not carried over: %+v", v1.ObjectMeta)
			}
			if v1.Spec.ScaleTargetRef != (autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "d", APIVersion: "apps/v1"}) || *v1.Spec.MinReplicas != 1 || v1.Spec.MaxReplicas != 4 {
				t.Errorf("spec %+v", v1.Spec)
			}
		})
	}
}

func TestHorizontalPodAutoscalerStatusAndBehaviorV2ToV1(t *testing.T) {
	in := with(hpaV2(cpu60, pods), withStatus(cpuStatus, podsStatus), withConditions, withBehavior)
	v1 := convert[*autoscalingv1.HorizontalPodAutoscaler](t, New(), in, autoscalingv1.SchemeGroupVersion)

	if got := ptr.Deref(v1.Status.CurrentCPUUtilizationPercentage, -1); got != 45 {
		t.Errorf("currentCPUUtilizationPercentage %d, want 45", got)
	}
	if v1.Status.CurrentReplicas != 2 || v1.Status.DesiredReplicas != 3 {
		t.Errorf("status %+v", v1.Status)
	}
	// All current metrics go in the annotation, CPU included, for its raw value.
	wantCurrent := []autoscalingv1.MetricStatus{
		{Type: autoscalingv1.ResourceMetricSourceType, Resource: &autoscalingv1.ResourceMetricStatus{Name: corev1.ResourceCPU, CurrentAverageUtilization: ptr.To[int32](45), CurrentAverageValue: resource.MustParse("225m")}},
		{Type: autoscalingv1.PodsMetricSourceType, Pods: &autoscalingv1.PodsMetricStatus{MetricName: "qps", CurrentAverageValue: resource.MustParse("12")}},
	}
	if got := annotation[[]autoscalingv1.MetricStatus](t, v1, currentMetricsAnnotation); !apiequality.Semantic.DeepEqual(got, wantCurrent) {
		t.Errorf("current-metrics annotation:\n%s", diff.Diff(wantCurrent, got))
	}
	wantConditions := []autoscalingv1.HorizontalPodAutoscalerCondition{
		{Type: autoscalingv1.AbleToScale, Status: corev1.ConditionTrue, LastTransitionTime: lastTransition, Reason: "ReadyForNewScale", Message: "recommended size matches current size"},
		{Type: autoscalingv1.ScalingActive, Status: corev1.ConditionTrue, LastTransitionTime: lastTransition, Reason: "ValidMetricFound"},
	}
	if got := annotation[[]autoscalingv1.HorizontalPodAutoscalerCondition](t, v1, conditionsAnnotation); !apiequality.Semantic.DeepEqual(got, wantConditions) {
		t.Errorf("conditions annotation:\n%s", diff.Diff(wantConditions, got))
	}
	// kube marshals its internal Go type here, so the keys are Go field names.
	raw := v1.Annotations[behaviorAnnotation]
	for _, want := range []string{`"ScaleUp"`, `"StabilizationWindowSeconds":300`, `"Tolerance":"50m"`} {
		if !strings.Contains(raw, want) {
			t.Errorf("behavior annotation %s lacks %s", raw, want)
		}
	}
}

// kubeV2Order is the order of spec.metrics after a trip through v1: kube
// puts the CPU utilization metric (v1's targetCPUUtilizationPercentage)
// after those the annotation carries.
func kubeV2Order(hpa *autoscalingv2.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	out := hpa.DeepCopy()
	var cpu, others []autoscalingv2.MetricSpec
	for _, m := range out.Spec.Metrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource.Name == corev1.ResourceCPU && m.Resource.Target.AverageUtilization != nil {
			cpu = append(cpu, m)
		} else {
			others = append(others, m)
		}
	}
	out.Spec.Metrics = append(others, cpu...)
	return out
}

func TestHorizontalPodAutoscalerV2RoundTrip(t *testing.T) {
	c := New()
	tests := []struct {
		name string
		in   *autoscalingv2.HorizontalPodAutoscaler
	}{
		{"cpu utilization", hpaV2(cpu60)},
		{"memory and pods", hpaV2(memory, pods)},
		{"cpu first, then others", hpaV2(cpu60, memory, pods)},
		{"every metric source", hpaV2(memory, pods, external, object, containerCPU, cpuAvg, cpu60)},
		{"status with cpu and pods", with(hpaV2(cpu60, pods), withStatus(cpuStatus, podsStatus))},
		{"status with pods only", with(hpaV2(pods), withStatus(podsStatus))},
		{"conditions", with(hpaV2(cpu60), withConditions)},
		{"behavior with tolerance", with(hpaV2(cpu60), withBehavior)},
		{"everything", with(hpaV2(cpu60, memory, external), withStatus(cpuStatus), withConditions, withBehavior,
			func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Status.ObservedGeneration = ptr.To[int64](2)
				h.Status.LastScaleTime = &lastTransition
			})},
		{"no annotations at all", with(hpaV2(memory), withConditions, func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Annotations = nil })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v1 := convert[*autoscalingv1.HorizontalPodAutoscaler](t, c, tc.in, autoscalingv1.SchemeGroupVersion)
			back := convert[*autoscalingv2.HorizontalPodAutoscaler](t, c, v1, autoscalingv2.SchemeGroupVersion)
			for _, key := range roundTripAnnotations {
				if _, found := back.Annotations[key]; found {
					t.Errorf("annotation %s left on the v2 object", key)
				}
			}
			want := kubeV2Order(tc.in)
			want.TypeMeta = back.TypeMeta
			if !apiequality.Semantic.DeepEqual(back, want) {
				t.Errorf("v2 -> v1 -> v2 lost something:\n%s", diff.Diff(want, back))
			}
		})
	}
}

func hpaV1(cpu *int32) *autoscalingv1.HorizontalPodAutoscaler {
	return &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: "default", Annotations: map[string]string{"owner": "team-a"}},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "d", APIVersion: "apps/v1"},
			MinReplicas:    ptr.To[int32](2), MaxReplicas: 5, TargetCPUUtilizationPercentage: cpu,
		},
		Status: autoscalingv1.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 2, ObservedGeneration: ptr.To[int64](1)},
	}
}

func withCurrentCPU(h *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv1.HorizontalPodAutoscaler {
	h.Status.CurrentCPUUtilizationPercentage = ptr.To[int32](35)
	h.Status.LastScaleTime = &lastTransition
	return h
}

func TestHorizontalPodAutoscalerV1RoundTrip(t *testing.T) {
	c := New()
	tests := []struct {
		name   string
		in     *autoscalingv1.HorizontalPodAutoscaler
		want   *autoscalingv1.HorizontalPodAutoscaler // nil: in
		wantV2 []autoscalingv2.MetricSpec
	}{
		{"cpu target", hpaV1(ptr.To[int32](50)), nil,
			[]autoscalingv2.MetricSpec{resourceMetric(corev1.ResourceCPU, autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)})}},
		// v2 keeps every current metric in the annotation on the way to v1,
		// CPU included (for its raw value, here none: "0"), so the
		// current-metrics annotation appears: kube does the same.
		{"cpu target and current cpu", withCurrentCPU(hpaV1(ptr.To[int32](50))), func() *autoscalingv1.HorizontalPodAutoscaler {
			h := withCurrentCPU(hpaV1(ptr.To[int32](50)))
			h.Annotations[currentMetricsAnnotation] = `[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":35,"currentAverageValue":"0"}}]`
			return h
		}(),
			[]autoscalingv2.MetricSpec{resourceMetric(corev1.ResourceCPU, autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)})}},
		// kube's v1 conversion puts in the CPU target v1 implied (80%):
		// the one default that is part of conversion.
		{"no cpu target", hpaV1(nil), hpaV1(ptr.To[int32](80)),
			[]autoscalingv2.MetricSpec{resourceMetric(corev1.ResourceCPU, autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)})}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v2 := convert[*autoscalingv2.HorizontalPodAutoscaler](t, c, tc.in, autoscalingv2.SchemeGroupVersion)
			if !apiequality.Semantic.DeepEqual(v2.Spec.Metrics, tc.wantV2) {
				t.Errorf("v2 metrics:\n%s", diff.Diff(tc.wantV2, v2.Spec.Metrics))
			}
			back := convert[*autoscalingv1.HorizontalPodAutoscaler](t, c, v2, autoscalingv1.SchemeGroupVersion)
			want := tc.want
			if want == nil {
				want = tc.in
			}
			want = want.DeepCopy()
			want.TypeMeta = back.TypeMeta
			if !apiequality.Semantic.DeepEqual(back, want) {
				t.Errorf("v1 -> v2 -> v1:\n%s", diff.Diff(want, back))
			}
			// A second trip changes nothing more.
			again := convert[*autoscalingv1.HorizontalPodAutoscaler](t, c,
				convert[*autoscalingv2.HorizontalPodAutoscaler](t, c, back, autoscalingv2.SchemeGroupVersion), autoscalingv1.SchemeGroupVersion)
			if !apiequality.Semantic.DeepEqual(again, back) {
				t.Errorf("second trip:\n%s", diff.Diff(back, again))
			}
		})
	}
}

// A v1 object written with the round-trip annotations (as a client that
// read an HPA through v1 writes it back) gets v2's fields from them, and
// the annotations are not kept.
func TestHorizontalPodAutoscalerV1AnnotationsToV2(t *testing.T) {
	c := New()
	orig := with(hpaV2(cpu60, memory, pods), withStatus(cpuStatus, podsStatus), withConditions, withBehavior)
	v1 := convert[*autoscalingv1.HorizontalPodAutoscaler](t, c, orig, autoscalingv1.SchemeGroupVersion)
	v1.Spec.TargetCPUUtilizationPercentage = ptr.To[int32](75) // the client's edit
	v2 := convert[*autoscalingv2.HorizontalPodAutoscaler](t, c, v1, autoscalingv2.SchemeGroupVersion)

	want := kubeV2Order(orig)
	want.Spec.Metrics[2].Resource.Target.AverageUtilization = ptr.To[int32](75)
	want.TypeMeta = v2.TypeMeta
	if !apiequality.Semantic.DeepEqual(v2, want) {
		t.Errorf("v1 with annotations -> v2:\n%s", diff.Diff(want, v2))
	}

	// An unreadable annotation is ignored (and dropped), as kube does.
	v1.Annotations[metricsAnnotation] = "not json"
	v2 = convert[*autoscalingv2.HorizontalPodAutoscaler](t, c, v1, autoscalingv2.SchemeGroupVersion)
	if len(v2.Spec.Metrics) != 1 || v2.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU {
		t.Errorf("metrics from a bad annotation: %+v", v2.Spec.Metrics)
	}
	if _, found := v2.Annotations[metricsAnnotation]; found {
		t.Error("bad annotation kept")
	}
}

// Conversion is not defaulting: nothing v2's defaulting functions would
// set (minReplicas, the 80% CPU metric, behavior's unset rules) appears.
func TestConvertDoesNotDefault(t *testing.T) {
	c := New()
	in := with(hpaV2(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Spec.MinReplicas = nil
		h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)}}
	})
	v1 := convert[*autoscalingv1.HorizontalPodAutoscaler](t, c, in, autoscalingv1.SchemeGroupVersion)
	if v1.Spec.MinReplicas != nil || v1.Spec.TargetCPUUtilizationPercentage != nil {
		t.Errorf("v1 spec defaulted: %+v", v1.Spec)
	}
	// Back in v2, the metrics are the 80% CPU target kube's v1 conversion
	// puts in (see TestHorizontalPodAutoscalerV1RoundTrip); nothing else is.
	back := convert[*autoscalingv2.HorizontalPodAutoscaler](t, c, v1, autoscalingv2.SchemeGroupVersion)
	if back.Spec.MinReplicas != nil || back.Spec.Behavior.ScaleUp != nil || back.Spec.Behavior.ScaleDown.Policies != nil || back.Spec.Behavior.ScaleDown.SelectPolicy != nil {
		t.Errorf("v2 spec defaulted: %+v %+v", back.Spec, back.Spec.Behavior.ScaleDown)
	}
}

func TestHorizontalPodAutoscalerList(t *testing.T) {
	c := New()
	list := &autoscalingv2.HorizontalPodAutoscalerList{
		ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next"},
		Items:    []autoscalingv2.HorizontalPodAutoscaler{*hpaV2(cpu60), *hpaV2(memory, pods)},
	}
	v1 := convert[*autoscalingv1.HorizontalPodAutoscalerList](t, c, list, autoscalingv1.SchemeGroupVersion)
	if v1.Kind != "HorizontalPodAutoscalerList" || v1.ResourceVersion != "42" || v1.Continue != "next" || len(v1.Items) != 2 {
		t.Fatalf("list %s %+v with %d items", v1.Kind, v1.ListMeta, len(v1.Items))
	}
	if ptr.Deref(v1.Items[0].Spec.TargetCPUUtilizationPercentage, -1) != 60 {
		t.Errorf("item 0: %+v", v1.Items[0].Spec)
	}
	if _, found := v1.Items[1].Annotations[metricsAnnotation]; !found {
		t.Errorf("item 1 has no metrics annotation: %v", v1.Items[1].Annotations)
	}
	for i, item := range v1.Items {
		if item.APIVersion != "" || item.Kind != "" {
			t.Errorf("item %d has apiVersion %q kind %q; list items have none", i, item.APIVersion, item.Kind)
		}
	}
	back := convert[*autoscalingv2.HorizontalPodAutoscalerList](t, c, v1, autoscalingv2.SchemeGroupVersion)
	for i := range list.Items {
		if !apiequality.Semantic.DeepEqual(&back.Items[i], kubeV2Order(&list.Items[i])) {
			t.Errorf("item %d after v2 -> v1 -> v2:\n%s", i, diff.Diff(kubeV2Order(&list.Items[i]), &back.Items[i]))
		}
	}
}

// The result of Convert shares no memory with its input: the stored
// object a read converts is the watch cache's, which must not change when
// a handler edits what it is about to send.
func TestConvertSharesNoMemory(t *testing.T) {
	c := New()
	tests := []struct {
		name string
		in   runtime.Object
		to   schema.GroupVersion
	}{
		{"v2 to v1", with(hpaV2(cpu60, memory), withStatus(cpuStatus), withConditions, withBehavior), autoscalingv1.SchemeGroupVersion},
		{"v1 to v2", hpaV1(ptr.To[int32](50)), autoscalingv2.SchemeGroupVersion},
		{"v2 to v2", with(hpaV2(cpu60, memory), withStatus(cpuStatus), withConditions, withBehavior), autoscalingv2.SchemeGroupVersion},
		{"v2 list to v1", &autoscalingv2.HorizontalPodAutoscalerList{Items: []autoscalingv2.HorizontalPodAutoscaler{*hpaV2(cpu60)}}, autoscalingv1.SchemeGroupVersion},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if m, ok := tc.in.(metav1.Object); ok {
				m.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "u"}})
				m.SetFinalizers([]string{"f"})
			}
			before := tc.in.DeepCopyObject()
			out, err := c.Convert(tc.in, tc.to)
			if err != nil {
				t.Fatal(err)
			}
			// reflect, not Semantic: a quantity's format counts here.
			if !reflect.DeepEqual(tc.in, before) {
				t.Fatalf("Convert changed its input:\n%s", diff.Diff(before, tc.in))
			}
			scribble(reflect.ValueOf(out))
			if !reflect.DeepEqual(tc.in, before) {
				t.Errorf("editing the result changed the input:\n%s", diff.Diff(before, tc.in))
			}
		})
	}
}

// scribble overwrites every string, number and map entry reachable from v
// in place (through pointers, slices and maps), as a careless editor of a
// converted object would.
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				scribble(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			scribble(v.Index(i))
		}
	case reflect.Map:
		if v.Type().Elem().Kind() == reflect.String {
			for _, k := range v.MapKeys() {
				v.SetMapIndex(k, reflect.ValueOf("scribbled").Convert(v.Type().Elem()))
			}
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString("scribbled")
		}
	case reflect.Int32, reflect.Int64:
		if v.CanSet() {
			v.SetInt(-99)
		}
	}
}

func TestConvertSameVersionIsACopy(t *testing.T) {
	in := hpaV2(cpu60)
	out := convert[*autoscalingv2.HorizontalPodAutoscaler](t, New(), in, autoscalingv2.SchemeGroupVersion)
	if out == in {
		t.Fatal("same object returned")
	}
	want := in.DeepCopy()
	want.TypeMeta = metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"}
	if !apiequality.Semantic.DeepEqual(out, want) {
		t.Errorf("copy differs:\n%s", diff.Diff(want, out))
	}
	if in.Kind != "" {
		t.Error("input's kind set")
	}
}

func TestConvertErrors(t *testing.T) {
	c := New()
	tests := []struct {
		name string
		in   runtime.Object
		to   schema.GroupVersion
	}{
		{"group not installed", &appsv1.Deployment{}, appsv1.SchemeGroupVersion},
		{"kind not shared with the other group", &corev1.Pod{}, eventsv1.SchemeGroupVersion},
		{"other group", hpaV2(cpu60), schema.GroupVersion{Group: "apps", Version: "v1"}},
		{"unknown version", hpaV2(cpu60), schema.GroupVersion{Group: "autoscaling", Version: "v9"}},
		{"internal version", hpaV2(cpu60), schema.GroupVersion{Group: "autoscaling", Version: runtime.APIVersionInternal}},
		{"kind missing in target version", &autoscalingv1.Scale{}, autoscalingv2.SchemeGroupVersion},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if out, err := c.Convert(tc.in, tc.to); err == nil {
				t.Errorf("no error; got %T", out)
			}
		})
	}
}

func TestHandles(t *testing.T) {
	c := New()
	tests := []struct {
		gk   schema.GroupKind
		want bool
	}{
		{schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}, true},
		{schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscalerList"}, true},
		{schema.GroupKind{Group: "autoscaling", Kind: "Scale"}, false}, // autoscaling/v1 only
		{schema.GroupKind{Kind: "Pod"}, false},                         // core is not installed
		{schema.GroupKind{Group: "apps", Kind: "Deployment"}, false},
	}
	for _, tc := range tests {
		if got := c.Handles(tc.gk); got != tc.want {
			t.Errorf("Handles(%v) = %v, want %v", tc.gk, got, tc.want)
		}
	}
}

func TestConvertConcurrently(t *testing.T) {
	c := New()
	in := with(hpaV2(cpu60, memory), withStatus(cpuStatus), withConditions)
	done := make(chan error)
	for range 8 {
		go func() {
			var err error
			for range 50 {
				if _, err = c.Convert(in, autoscalingv1.SchemeGroupVersion); err != nil {
					break
				}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func BenchmarkConvertV2ToV1(b *testing.B) {
	c := New()
	in := with(hpaV2(cpu60, memory, pods), withStatus(cpuStatus, podsStatus), withConditions, withBehavior)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Convert(in, autoscalingv1.SchemeGroupVersion); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEventsAcrossGroups: an events.k8s.io/v1 Event converts to the core/v1
// Event it is stored as and back, with kube's field mapping.
func TestEventsAcrossGroups(t *testing.T) {
	c := New()
	now := metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))
	in := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"},
		Regarding:  corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p"},
		Note:       "Successfully assigned ns/p to node-1", Reason: "Scheduled", Type: "Normal", Action: "Binding",
		EventTime: now, ReportingController: "default-scheduler", ReportingInstance: "default-scheduler-host",
	}
	out, err := c.Convert(in, corev1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	core, ok := out.(*corev1.Event)
	if !ok {
		t.Fatalf("got %T", out)
	}
	if core.InvolvedObject.Name != "p" || core.Message != in.Note ||
		core.ReportingController != "default-scheduler" || !core.EventTime.Equal(&now) {
		t.Errorf("core/v1 event: %+v", core)
	}
	back, err := c.Convert(core, eventsv1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	back.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	if !apiequality.Semantic.DeepEqual(back, in) {
		t.Errorf("round trip changed the event:\n%s", diff.Diff(in, back))
	}
}
