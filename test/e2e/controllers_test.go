package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// TestAutoscalerWithoutMetrics: kube-controller-manager's horizontal pod
// autoscaler runs; with no metrics API served, as in a cluster without
// metrics-server, it keeps its target at its minimum replicas and says in
// its conditions that it cannot get the metrics.
func TestAutoscalerWithoutMetrics(t *testing.T) {
	k := startKapi(t)
	cs := k.clientset()
	labels := map[string]string{"app": "web"}
	_, err := cs.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k.mustKubectl("autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=50")
	waitFor(t, 30*time.Second, "the deployment scaled to the autoscaler's minimum", func() bool {
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && *d.Spec.Replicas == 2
	})
	var hpa *autoscalingv2.HorizontalPodAutoscaler
	waitFor(t, 30*time.Second, "the autoscaler's conditions", func() bool {
		hpa, err = cs.AutoscalingV2().HorizontalPodAutoscalers("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && condition(hpa, autoscalingv2.ScalingActive) != nil
	})
	if c := condition(hpa, autoscalingv2.AbleToScale); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "SucceededGetScale" {
		t.Errorf("AbleToScale: %+v", c)
	}
	if c := condition(hpa, autoscalingv2.ScalingActive); c.Status != corev1.ConditionFalse || c.Reason != "FailedGetResourceMetric" ||
		!strings.Contains(c.Message, "unable to fetch metrics from resource metrics API") {
		t.Errorf("ScalingActive: %+v", c)
	}
	if hpa.Status.DesiredReplicas != 2 || hpa.Status.CurrentReplicas != 2 {
		t.Errorf("the autoscaler's status: %+v", hpa.Status)
	}

	// An autoscaling/v1 autoscaler without a CPU target gets its default
	// as kube decodes it (through the internal version), before its field
	// manager, which then owns it.
	v1, err := cs.AutoscalingV1().HorizontalPodAutoscalers("default").Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "v1"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3,
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "elsewhere"}},
	}, metav1.CreateOptions{FieldManager: "maker"})
	if err != nil {
		t.Fatal(err)
	}
	if v1.Spec.TargetCPUUtilizationPercentage == nil || *v1.Spec.TargetCPUUtilizationPercentage != 80 ||
		len(v1.ManagedFields) != 1 || !strings.Contains(string(v1.ManagedFields[0].FieldsV1.Raw), "f:targetCPUUtilizationPercentage") {
		t.Errorf("a v1 autoscaler without a CPU target: %v %s", v1.Spec.TargetCPUUtilizationPercentage, v1.ManagedFields)
	}
	// Its answer is what storage, in v2, reads back: v2's scale-up rules
	// join the behavior given by annotation, dry run or not.
	for _, dryRun := range [][]string{{metav1.DryRunAll}, nil} {
		v1.ObjectMeta = metav1.ObjectMeta{Name: "behaved", Annotations: map[string]string{"autoscaling.alpha.kubernetes.io/behavior": `{"ScaleDown":{"StabilizationWindowSeconds":30,"Policies":[{"Type":"Pods","Value":2,"PeriodSeconds":60}]}}`}}
		made, err := cs.AutoscalingV1().HorizontalPodAutoscalers("default").Create(ctx, v1, metav1.CreateOptions{DryRun: dryRun})
		if err != nil {
			t.Fatal(err)
		}
		if got := made.Annotations["autoscaling.alpha.kubernetes.io/behavior"]; !strings.Contains(got, `"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max"`) {
			t.Errorf("a v1 autoscaler's behavior (dry run %v): %s", dryRun, got)
		}
	}
	patched, err := cs.AutoscalingV1().HorizontalPodAutoscalers("default").Patch(ctx, "v1", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"autoscaling.alpha.kubernetes.io/behavior":"{\"ScaleDown\":{\"SelectPolicy\":\"Min\",\"Policies\":[{\"Type\":\"Pods\",\"Value\":1,\"PeriodSeconds\":60}]}}"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := patched.Annotations["autoscaling.alpha.kubernetes.io/behavior"]; !strings.Contains(got, `"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max"`) {
		t.Errorf("a v1 autoscaler's behavior patched in: %s", got)
	}
}

func condition(hpa *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType) *autoscalingv2.HorizontalPodAutoscalerCondition {
	for i, c := range hpa.Status.Conditions {
		if c.Type == typ {
			return &hpa.Status.Conditions[i]
		}
	}
	return nil
}

// TestVolumeAndNodeControllers: a pod's generic ephemeral volume gets
// its claim, owned by the pod; a VolumeAttributesClass is protected while
// a claim names it; a node is annotated with the time its kubelet may
// cache objects; as kube-controller-manager's controllers do.
func TestVolumeAndNodeControllers(t *testing.T) {
	k := startKapi(t)
	cs := k.clientset()
	pod, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "scratch"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
				VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				}},
			}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var claim *corev1.PersistentVolumeClaim
	waitFor(t, 15*time.Second, "the ephemeral volume's claim", func() bool {
		claim, err = cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "scratch-tmp", metav1.GetOptions{})
		return err == nil
	})
	if owners := claim.OwnerReferences; len(owners) != 1 || owners[0].UID != pod.UID || owners[0].Controller == nil || !*owners[0].Controller {
		t.Errorf("the claim's owners: %+v", owners)
	}

	gold, err := cs.StorageV1().VolumeAttributesClasses().Create(ctx, &storagev1.VolumeAttributesClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gold"}, DriverName: "example.csi", Parameters: map[string]string{"iops": "100"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Admission gives it its protection finalizer as it is created
	// (StorageObjectInUseProtection), as kube-apiserver's does.
	if !slices.Equal(gold.Finalizers, []string{"kubernetes.io/vac-protection"}) {
		t.Errorf("a new VolumeAttributesClass's finalizers: %v", gold.Finalizers)
	}
	_, err = cs.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "golden"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:               []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:                 corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			VolumeAttributesClassName: ptr.To("gold"),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "the class's protection finalizer", func() bool {
		vac, err := cs.StorageV1().VolumeAttributesClasses().Get(ctx, "gold", metav1.GetOptions{})
		return err == nil && len(vac.Finalizers) == 1 && vac.Finalizers[0] == "kubernetes.io/vac-protection"
	})
	k.mustKubectl("delete", "volumeattributesclass", "gold", "--wait=false")
	time.Sleep(2 * time.Second) // the controller's chance to let it go, which it must not take
	if _, err := cs.StorageV1().VolumeAttributesClasses().Get(ctx, "gold", metav1.GetOptions{}); err != nil {
		t.Errorf("the class a claim names went: %v", err)
	}
	k.mustKubectl("delete", "pvc", "golden", "--wait=false")
	// The claim has its own protection finalizer, which goes once no pod
	// uses it.
	waitFor(t, 20*time.Second, "the class to go with the claim that named it", func() bool {
		_, err := cs.StorageV1().VolumeAttributesClasses().Get(ctx, "gold", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})

	k.mustKubectl("create", "-f", writeTemp(t, `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}`))
	waitFor(t, 15*time.Second, "the node's TTL annotation", func() bool {
		n, err := cs.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
		return err == nil && n.Annotations["node.alpha.kubernetes.io/ttl"] == "0"
	})
}

// TestResourceClaimsFromTemplates: a pod's claim made from a
// ResourceClaimTemplate is created for it, owned by it, and named in its
// status, by kube-controller-manager's resource claim controller.
func TestResourceClaimsFromTemplates(t *testing.T) {
	k := startKapi(t)
	cs := k.clientset()
	_, err := cs.ResourceV1().DeviceClasses().Create(ctx, &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.ResourceV1().ResourceClaimTemplates("default").Create(ctx, &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "one-gpu"},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu"}}},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "trainer"},
		Spec: corev1.PodSpec{
			Containers:     []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}}},
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("one-gpu")}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var name string
	waitFor(t, 15*time.Second, "the pod's claim named in its status", func() bool {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "trainer", metav1.GetOptions{})
		if err != nil || len(p.Status.ResourceClaimStatuses) != 1 || p.Status.ResourceClaimStatuses[0].ResourceClaimName == nil {
			return false
		}
		name = *p.Status.ResourceClaimStatuses[0].ResourceClaimName
		return true
	})
	claim, err := cs.ResourceV1().ResourceClaims("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(claim.Name, "trainer-gpu-") || len(claim.OwnerReferences) != 1 || claim.OwnerReferences[0].UID != pod.UID {
		t.Errorf("the claim %s is owned by %+v", claim.Name, claim.OwnerReferences)
	}
	if claim.Annotations["resource.kubernetes.io/pod-claim-name"] != "gpu" {
		t.Errorf("the claim's annotations: %v", claim.Annotations)
	}
}

// gadgetsTwoVersions is a CRD stored in v1 that also serves v2.
const gadgetsTwoVersions = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
`

// TestStorageVersionMigration: once a CRD's storage version changes, a
// StorageVersionMigration of its resource writes every object again and
// leaves only the new storage version in the CRD's storedVersions, as
// kube-controller-manager's storage version migrator does.
func TestStorageVersionMigration(t *testing.T) {
	t.Parallel()
	k := startKapi(t)
	createCRD(t, k, gadgetsTwoVersions, "gadgets.example.com")
	gadgets := dynamicClient(t, k).Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}).Namespace("default")
	written := map[string]string{}
	for _, name := range []string{"g1", "g2", "g3"} {
		obj, err := gadgets.Create(ctx, &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]interface{}{"name": name},
			"spec": map[string]interface{}{"size": int64(1)},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		written[name] = obj.GetResourceVersion()
	}
	k.mustKubectl("patch", "crd", "gadgets.example.com", "--type=json", "-p",
		`[{"op":"replace","path":"/spec/versions/0/storage","value":false},{"op":"replace","path":"/spec/versions/1/storage","value":true}]`)
	if got := k.mustKubectl("get", "crd", "gadgets.example.com", "-o", "jsonpath={.status.storedVersions}"); got != `["v1","v2"]` {
		t.Fatalf("stored versions before the migration: %s", got)
	}
	_, err := k.clientset().StoragemigrationV1().StorageVersionMigrations().Create(ctx, &storagemigrationv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets"},
		Spec:       storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "example.com", Resource: "gadgets"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The garbage collector's graph, which the migrator reads, learns of
	// new resources every 30 s.
	waitFor(t, 120*time.Second, "the migration to succeed", func() bool {
		m, err := k.clientset().StoragemigrationV1().StorageVersionMigrations().Get(ctx, "gadgets", metav1.GetOptions{})
		return err == nil && apimeta.IsStatusConditionTrue(m.Status.Conditions, string(storagemigrationv1.MigrationSucceeded))
	})
	if got := k.mustKubectl("get", "crd", "gadgets.example.com", "-o", "jsonpath={.status.storedVersions}"); got != `["v2"]` {
		t.Errorf("stored versions after the migration: %s", got)
	}
	for name, rv := range written {
		obj, err := gadgets.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if obj.GetResourceVersion() == rv {
			t.Errorf("%s was not written again: still at %s", name, rv)
		}
	}
}

// TestPlaceholderEndpointSlicesStay: a Service whose selector matches no
// pod gets one empty EndpointSlice from the EndpointSlice controller,
// which then leaves it alone, as on a cluster (the controller once
// rewrote some of them at once, dropping their trigger-time annotation,
// as what the in-process informers gave it never equalled the slice it
// wanted).
func TestPlaceholderEndpointSlicesStay(t *testing.T) {
	k := startKapi(t)
	cs := k.clientset()
	k.mustKubectl("create", "namespace", "eps")
	w, err := cs.DiscoveryV1().EndpointSlices("eps").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const services = 8
	for i := range services {
		k.mustKubectl("create", "service", "clusterip", fmt.Sprintf("s%d", i), "--tcp=80:80", "-n", "eps")
	}
	added := 0
	deadline := time.After(30 * time.Second)
	for quiet := time.After(time.Hour); ; {
		select {
		case ev := <-w.ResultChan():
			slice, ok := ev.Object.(*discoveryv1.EndpointSlice)
			if !ok {
				t.Fatalf("watch event %s: %#v", ev.Type, ev.Object)
			}
			if ev.Type != watch.Added {
				t.Errorf("%s of %s (annotations %v), want only the placeholders added", ev.Type, slice.Name, slice.Annotations)
				continue
			}
			if slice.Annotations["endpoints.kubernetes.io/last-change-trigger-time"] == "" {
				t.Errorf("placeholder %s: annotations %v", slice.Name, slice.Annotations)
			}
			if added++; added == services {
				quiet = time.After(5 * time.Second) // long enough for the controller's syncs of them
			}
		case <-quiet:
			return
		case <-deadline:
			t.Fatalf("%d of %d placeholder EndpointSlices after 30 s", added, services)
		}
	}
}

// TestControllerServiceAccounts: each controller's kube-system service
// account exists, as kube-controller-manager creates them with
// --use-service-account-credentials, and a token can be requested for it.
func TestControllerServiceAccounts(t *testing.T) {
	k := startKapi(t)
	waitFor(t, 30*time.Second, "the controllers' service accounts", func() bool {
		list, err := k.clientset().CoreV1().ServiceAccounts("kube-system").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		var names []string
		for _, sa := range list.Items {
			names = append(names, sa.Name)
		}
		return slices.Contains(names, "deployment-controller") && slices.Contains(names, "generic-garbage-collector") &&
			slices.Contains(names, "namespace-controller") && slices.Contains(names, "node-controller")
	})
	if out, err := k.kubectl("create", "token", "deployment-controller", "-n", "kube-system"); err != nil || strings.Count(strings.TrimSpace(out), ".") != 2 {
		t.Errorf("kubectl create token deployment-controller -n kube-system: %v %s", err, out)
	}
}
