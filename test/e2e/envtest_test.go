package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TestEnvtestStartsKapiAsKubeAPIServer: controller-runtime's envtest, with
// kapi installed as the kube-apiserver of its assets beside a real etcd,
// starts kapi with kube-apiserver's flags and gets what it gets of
// kube-apiserver: its serving certificate from --cert-dir, its users'
// client certificates from --client-ca-file under RBAC, the CRDs it
// installs served, privileged pods allowed (--allow-privileged), pods
// admitted without a default ServiceAccount (--disable-admission-plugins
// ServiceAccount), the data in etcd, and no controllers: a deleted
// namespace stays Terminating.
func TestEnvtestStartsKapiAsKubeAPIServer(t *testing.T) {
	etcd, err := etcdBinary()
	if err != nil {
		t.Fatal(err)
	}
	assets := t.TempDir()
	for name, target := range map[string]string{"kube-apiserver": kapiBinary, "etcd": etcd} {
		if err := os.Symlink(target, filepath.Join(assets, name)); err != nil {
			t.Fatal(err)
		}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:   assets,
		CRDs:                    []*apiextensionsv1.CustomResourceDefinition{widgetCRD()},
		ControlPlaneStopTimeout: 30 * time.Second,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest did not start kapi: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(cfg)

	kubernetesService, err := client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || kubernetesService.Spec.ClusterIP != "10.0.0.1" {
		t.Errorf("the kubernetes Service: %v; want the first address of envtest's --service-cluster-ip-range, 10.0.0.1", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "envtest"}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "privileged"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "busybox", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
		}}},
	}
	created, err := client.CoreV1().Pods("envtest").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a privileged pod in a namespace without ServiceAccounts: %v", err)
	}
	if created.Spec.ServiceAccountName != "" {
		t.Errorf("ServiceAccount admission ran although envtest disables it: serviceAccountName %q", created.Spec.ServiceAccountName)
	}

	widgets := dynamic.NewForConfigOrDie(cfg).Resource(schema.GroupVersionResource{Group: "example.kapi.dev", Version: "v1", Resource: "widgets"})
	widget := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.kapi.dev/v1", "kind": "Widget", "metadata": map[string]interface{}{"name": "w"},
	}}
	if _, err := widgets.Namespace("envtest").Create(ctx, widget, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the CRD envtest installed is not served: %v", err)
	}

	ann, err := env.AddUser(envtest.User{Name: "ann", Groups: []string{"team"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	annClient := kubernetes.NewForConfigOrDie(ann.Config())
	_, err = annClient.CoreV1().Pods("envtest").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "ann" cannot list resource "pods"`) {
		t.Fatalf("ann, without a role, listing pods: %v; want kube's 403 naming ann", err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "team-view"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "team"}},
	}
	if _, err := client.RbacV1().RoleBindings("envtest").Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "ann's group may view the namespace", func() bool {
		pods, err := annClient.CoreV1().Pods("envtest").List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 1
	})

	if err := client.CoreV1().Namespaces().Delete(ctx, "envtest", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second) // past the namespace controller's first pass, were it running
	got, err := client.CoreV1().Namespaces().Get(ctx, "envtest", metav1.GetOptions{})
	if err != nil || got.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("the deleted namespace: %v, %v; want it left Terminating, as by a kube-apiserver without controllers", got.Status.Phase, err)
	}
	if _, err := client.CoreV1().Pods("envtest").Get(ctx, "privileged", metav1.GetOptions{}); err != nil {
		t.Errorf("the terminating namespace's pod: %v; want it still there", err)
	}
}

func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.kapi.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.kapi.dev",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
}
