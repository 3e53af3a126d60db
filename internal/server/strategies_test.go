package server

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

func podSpec(containerName string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: containerName, Image: "nginx"}}}
}

// TestBuiltinValidation creates objects a real cluster refuses: each is a
// 422 naming the field kube-apiserver's validation names, and nothing is
// stored.
func TestBuiltinValidation(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	labels := map[string]string{"app": "web"}
	for _, tc := range []struct {
		name   string
		create func() error
		field  string
	}{
		{"pod with an invalid container name", func() error {
			_, err := client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1"}, Spec: podSpec("Bad_Name")}, metav1.CreateOptions{})
			return err
		}, "spec.containers[0].name"},
		{"pod without containers", func() error {
			_, err := client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p2"}}, metav1.CreateOptions{})
			return err
		}, "spec.containers"},
		{"deployment whose selector does not match its template", func() error {
			_, err := client.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "d1"},
				Spec: appsv1.DeploymentSpec{
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "other"}}, Spec: podSpec("c")},
				},
			}, metav1.CreateOptions{})
			return err
		}, "spec.template.metadata.labels"},
		{"service with an invalid port", func() error {
			_, err := client.CoreV1().Services("default").Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "s1"},
				Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 70000, TargetPort: intstr.FromInt32(80)}}},
			}, metav1.CreateOptions{})
			return err
		}, "spec.ports[0].port"},
		{"webhook configuration with a webhook name that is not a domain", func() error {
			_, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "w1"},
				Webhooks: []admissionregistrationv1.ValidatingWebhook{{
					Name: "check", SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
					ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://example.com/check")},
				}},
			}, metav1.CreateOptions{})
			return err
		}, "webhooks[0].name"},
		{"admission policy binding without a policy", func() error {
			_, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "b1"},
				Spec:       admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
			}, metav1.CreateOptions{})
			return err
		}, "spec.policyName"},
		{"endpoint slice with an invalid address", func() error {
			_, err := client.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{Name: "e1"},
				AddressType: discoveryv1.AddressTypeIPv4,
				Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"not-an-ip"}}},
			}, metav1.CreateOptions{})
			return err
		}, "endpoints[0].addresses[0]"},
		{"configmap with an invalid key", func() error {
			_, err := client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Data: map[string]string{"no/slash": "x"},
			}, metav1.CreateOptions{})
			return err
		}, "data[no/slash]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.create()
			if !apierrors.IsInvalid(err) {
				t.Fatalf("got %v, want 422 Invalid", err)
			}
			status := err.(apierrors.APIStatus).Status()
			if status.Details == nil || !hasCause(status.Details.Causes, tc.field) {
				t.Fatalf("causes %+v do not name %s", status.Details, tc.field)
			}
		})
	}
	pods, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 0 {
		t.Fatalf("refused pods were stored: %v, %v", pods, err)
	}
}

func hasCause(causes []metav1.StatusCause, field string) bool {
	for _, c := range causes {
		if c.Field == field {
			return true
		}
	}
	return false
}

// TestBuiltinDefaultsAndRules checks defaults and registry rules kube's
// strategies give: pod defaults, a namespace's name label, a deployment's
// generation following spec changes only, immutable fields.
func TestBuiltinDefaultsAndRules(t *testing.T) {
	// No deployment controller: it would update the deployment's status
	// while the test updates the deployment.
	s := startServer(t, "*", "-deployment-controller")
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))

	pod, err := client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: podSpec("c")}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	if pod.Spec.RestartPolicy != corev1.RestartPolicyAlways || pod.Spec.DNSPolicy != corev1.DNSClusterFirst ||
		c.ImagePullPolicy != corev1.PullAlways || c.TerminationMessagePath != corev1.TerminationMessagePathDefault ||
		pod.Status.Phase != corev1.PodPending || pod.Status.QOSClass != corev1.PodQOSBestEffort {
		t.Errorf("pod defaults: restartPolicy %q dnsPolicy %q pullPolicy %q terminationMessagePath %q phase %q qos %q",
			pod.Spec.RestartPolicy, pod.Spec.DNSPolicy, c.ImagePullPolicy, c.TerminationMessagePath, pod.Status.Phase, pod.Status.QOSClass)
	}

	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels[corev1.LabelMetadataName] != "team" {
		t.Errorf("namespace labels %v, want %s=team", ns.Labels, corev1.LabelMetadataName)
	}

	// A node keeps the status it is created with (a kubelet registers
	// itself with its capacity).
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{
		Capacity: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")},
	}}
	if node, err = client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if pods := node.Status.Capacity[corev1.ResourcePods]; pods.Value() != 110 {
		t.Errorf("node capacity after create: %v", node.Status.Capacity)
	}

	labels := map[string]string{"app": "web"}
	d, err := client.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec("c")},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Generation != 1 || ptr.Deref(d.Spec.Replicas, 0) != 1 || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		t.Errorf("new deployment: generation %d replicas %v strategy %q", d.Generation, d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	d.Labels = map[string]string{"x": "y"}
	if d, err = client.AppsV1().Deployments("default").Update(ctx, d, metav1.UpdateOptions{}); err != nil || d.Generation != 1 {
		t.Fatalf("metadata-only update: generation %d, %v; want 1", d.Generation, err)
	}
	d.Spec.Replicas = ptr.To[int32](3)
	if d, err = client.AppsV1().Deployments("default").Update(ctx, d, metav1.UpdateOptions{}); err != nil || d.Generation != 2 {
		t.Fatalf("spec update: generation %d, %v; want 2", d.Generation, err)
	}
	// A deployment's annotations go to its ReplicaSets: changing them
	// counts as a change of the spec.
	d.Annotations = map[string]string{"note": "x"}
	if d, err = client.AppsV1().Deployments("default").Update(ctx, d, metav1.UpdateOptions{}); err != nil || d.Generation != 3 {
		t.Fatalf("annotation update: generation %d, %v; want 3", d.Generation, err)
	}
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
	d.Spec.Template.Labels = d.Spec.Selector.MatchLabels
	_, err = client.AppsV1().Deployments("default").Update(ctx, d, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "field is immutable") {
		t.Errorf("changing a deployment's selector: %v, want 422 field is immutable", err)
	}
}

// TestBuiltinWarnings: kube's strategies' warnings reach the client as
// Warning headers.
func TestBuiltinWarnings(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	cfg := restConfig(t, s.Kubeconfig)
	warnings := &collectWarnings{}
	cfg.WarningHandler = warnings
	client := kubernetes.NewForConfigOrDie(cfg)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: podSpec("c")}
	pod.Spec.NodeSelector = map[string]string{"beta.kubernetes.io/arch": "amd64"}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(warnings.got) == 0 || !strings.Contains(strings.Join(warnings.got, "\n"), "beta.kubernetes.io/arch") {
		t.Errorf("warnings %q, want one about beta.kubernetes.io/arch", warnings.got)
	}
}

type collectWarnings struct{ got []string }

func (c *collectWarnings) HandleWarningHeader(code int, agent, text string) {
	c.got = append(c.got, text)
}

var _ rest.WarningHandler = (*collectWarnings)(nil)

// TestDefaultGAResources: the GA resources the release serves by default
// include dynamic resource allocation and storage version migration, with
// their kube validation.
func TestDefaultGAResources(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	for _, gv := range []string{"resource.k8s.io/v1", "storagemigration.k8s.io/v1"} {
		if _, err := client.Discovery().ServerResourcesForGroupVersion(gv); err != nil {
			t.Errorf("%s not served: %v", gv, err)
		}
	}
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu.example.com"}}
	created, err := client.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{})
	if err != nil || created.Generation != 1 {
		t.Fatalf("device class: %+v, %v", created, err)
	}
	slice := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1-gpu"},
		Spec:       resourcev1.ResourceSliceSpec{Driver: "not a driver name", Pool: resourcev1.ResourcePool{Name: "p", ResourceSliceCount: 1}, AllNodes: ptr.To(true)},
	}
	if _, err := client.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("resource slice with an invalid driver: %v, want 422", err)
	}
	migration := &storagemigrationv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "secrets"},
		Spec:       storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "secrets"}},
	}
	if _, err := client.StoragemigrationV1().StorageVersionMigrations().Create(ctx, migration, metav1.CreateOptions{}); err != nil {
		t.Errorf("storage version migration: %v", err)
	}
}
