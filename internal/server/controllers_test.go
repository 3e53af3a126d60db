package server

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kapi-dev/kapi/internal/controllers"
)

// TestNamespaceControllerActsAsItself deletes a namespace whose content a
// finalizer holds: the namespace controller reports that in the
// namespace's conditions, written as kube-controller-manager through the
// status sub-resource, and removes the namespace once the finalizer goes.
func TestNamespaceControllerActsAsItself(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	// A label gives the namespace managedFields: an object without any
	// gets none from updates, in kube-apiserver as here.
	held := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "held", Labels: map[string]string{"team": "a"}}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Finalizers: []string{"example.com/hold"}}}
	if _, err := client.CoreV1().ConfigMaps("held").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Namespaces().Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	var ns *corev1.Namespace
	poll(t, "the namespace to report the finalizer", func() (bool, error) {
		var err error
		ns, err = client.CoreV1().Namespaces().Get(ctx, "held", metav1.GetOptions{})
		return err == nil && condition(ns, corev1.NamespaceFinalizersRemaining) == corev1.ConditionTrue, err
	})
	if ns.Status.Phase != corev1.NamespaceTerminating {
		t.Errorf("phase %q, want Terminating", ns.Status.Phase)
	}
	if !managedBy(ns, "kube-controller-manager", "status") {
		t.Errorf("conditions not written by kube-controller-manager through status: %+v", ns.ManagedFields)
	}

	cm, err := client.CoreV1().ConfigMaps("held").Get(ctx, "c", metav1.GetOptions{})
	if err != nil || cm.DeletionTimestamp == nil {
		t.Fatalf("held configmap: %v, %+v; want it marked for deletion", err, cm)
	}
	cm.Finalizers = nil
	if _, err := client.CoreV1().ConfigMaps("held").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the namespace to go", func() (bool, error) {
		_, err := client.CoreV1().Namespaces().Get(ctx, "held", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// TestFinalizeChangesOnlyFinalizers: the finalize sub-resource writes a
// namespace's spec.finalizers and leaves its status alone.
func TestFinalizeChangesOnlyFinalizers(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "f"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ns.Spec.Finalizers) != 1 || ns.Spec.Finalizers[0] != corev1.FinalizerKubernetes {
		t.Fatalf("new namespace's finalizers %v, want [kubernetes]", ns.Spec.Finalizers)
	}
	ns.Spec.Finalizers = nil
	ns.Status.Phase = corev1.NamespaceTerminating
	got, err := client.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Finalizers) != 0 || got.Status.Phase != corev1.NamespaceActive {
		t.Fatalf("after finalize: finalizers %v phase %q; want none and Active", got.Spec.Finalizers, got.Status.Phase)
	}
}

func condition(ns *corev1.Namespace, typ corev1.NamespaceConditionType) corev1.ConditionStatus {
	for _, c := range ns.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

func managedBy(obj metav1.Object, manager, subresource string) bool {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager && e.Subresource == subresource {
			return true
		}
	}
	return false
}

// poll waits for done, failing the test after a generous deadline that
// only a hung controller reaches.
func poll(t *testing.T, what string, done func() (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true,
		func(context.Context) (bool, error) { return done() })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// TestNamespacesGetTheirDefaults: a new namespace gets its "default"
// ServiceAccount and a kube-root-ca.crt ConfigMap holding the CA clients
// verify the server with, as kube-controller-manager's controllers give.
func TestNamespacesGetTheirDefaults(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	cfg := restConfig(t, s.Kubeconfig)
	client := kubernetes.NewForConfigOrDie(cfg)
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the default service account", func() (bool, error) {
		_, err := client.CoreV1().ServiceAccounts("team").Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	var cm *corev1.ConfigMap
	poll(t, "the root CA config map", func() (bool, error) {
		var err error
		cm, err = client.CoreV1().ConfigMaps("team").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if cm.Data["ca.crt"] != string(cfg.TLSClientConfig.CAData) {
		t.Errorf("kube-root-ca.crt holds %q, want the kubeconfig's CA", cm.Data["ca.crt"])
	}
}

// TestControllerSelection: --controllers takes kube-controller-manager's
// forms and refuses unknown names.
func TestControllerSelection(t *testing.T) {
	sel, err := controllers.ParseSelection("*,-" + controllers.RootCACertificatePublisherController)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Enabled(controllers.NamespaceController) || sel.Enabled(controllers.RootCACertificatePublisherController) {
		t.Errorf("selection %v", sel)
	}
	only, _ := controllers.ParseSelection(controllers.NamespaceController)
	if !only.Enabled(controllers.NamespaceController) || only.Enabled(controllers.ServiceAccountController) {
		t.Errorf("selection %v", only)
	}
	if _, err := controllers.ParseSelection("nosuch-controller"); err == nil {
		t.Error("an unknown controller was accepted")
	}
}

// TestKubernetesService: default/kubernetes exists from the start, on the
// first address of the service range, port 443 to the server's port.
func TestKubernetesService(t *testing.T) {
	s := startServer(t)
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	svc, err := client.CoreV1().Services("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	port := s.listener.Addr().(*net.TCPAddr).Port
	if svc.Spec.ClusterIP != "10.96.0.1" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 ||
		svc.Spec.Ports[0].TargetPort.IntValue() != port || svc.Labels["component"] != "apiserver" {
		t.Errorf("kubernetes service: %+v", svc)
	}
}

// TestGarbageCollection: kube-controller-manager's garbage collector
// deletes dependents whose owner is deleted (background), keeps them
// without the reference when asked to orphan, and holds a foreground
// deletion until the dependents are gone.
func TestGarbageCollection(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	cms := client.CoreV1().ConfigMaps("default")
	ownedBy := func(name string) (*corev1.ConfigMap, *corev1.ConfigMap) {
		t.Helper()
		owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		dependent, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name:            name + "-dependent",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return owner, dependent
	}
	gone := func(name string) func() (bool, error) {
		return func() (bool, error) {
			_, err := cms.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		}
	}

	owner, dependent := ownedBy("background")
	if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the background dependent to be collected", gone(dependent.Name))

	owner, dependent = ownedBy("orphaning")
	orphan := metav1.DeletePropagationOrphan
	if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the orphaning owner to go", gone(owner.Name))
	poll(t, "the orphan to lose its owner reference", func() (bool, error) {
		cm, err := cms.Get(ctx, dependent.Name, metav1.GetOptions{})
		return err == nil && len(cm.OwnerReferences) == 0, err
	})

	owner, dependent = ownedBy("foreground")
	foreground := metav1.DeletePropagationForeground
	if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{PropagationPolicy: &foreground}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the foreground dependent to be collected", gone(dependent.Name))
	poll(t, "the foreground owner to go after it", gone(owner.Name))
}

// TestKubernetesServiceIsRepaired: a deleted kubernetes Service and its
// deleted endpoints come back on the next round of the server's clock.
func TestKubernetesServiceIsRepaired(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Now())
	s, err := Start(context.Background(), Config{
		DataDir: t.TempDir(), Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler),
		OpenStorage: StorageBackend("memory", "", nil), Clock: fc, AdvertiseAddress: "192.0.2.10",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	services := client.CoreV1().Services("default")
	waitKubernetesEndpoints(t, client)
	// The endpoints go first: deleting a Service makes the endpoints
	// controllers delete its endpoints.
	if err := client.CoreV1().Endpoints("default").Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.DiscoveryV1().EndpointSlices("default").Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := services.Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the kubernetes service to come back", func() (bool, error) {
		fc.Step(kubernetesServiceInterval)
		_, err := services.Get(ctx, "kubernetes", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	poll(t, "the kubernetes endpoint slice to come back", func() (bool, error) {
		fc.Step(kubernetesServiceInterval)
		_, err := client.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// TestKubernetesServiceEndpoints: the kubernetes Service's Endpoints and
// EndpointSlice name the advertised address and the server's port, as
// kube-apiserver's endpoint reconciler writes them.
func TestKubernetesServiceEndpoints(t *testing.T) {
	s, err := Start(context.Background(), Config{
		DataDir: t.TempDir(), Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler),
		OpenStorage: StorageBackend("memory", "", nil), AdvertiseAddress: "192.0.2.10",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	port := int32(s.listener.Addr().(*net.TCPAddr).Port)
	waitKubernetesEndpoints(t, client)
	ep, err := client.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 1 || ep.Subsets[0].Addresses[0].IP != "192.0.2.10" ||
		len(ep.Subsets[0].Ports) != 1 || ep.Subsets[0].Ports[0].Port != port || ep.Subsets[0].Ports[0].Name != "https" {
		t.Errorf("endpoints: %+v", ep.Subsets)
	}
	if ep.Labels["endpointslice.kubernetes.io/skip-mirror"] != "true" {
		t.Errorf("endpoints labels: %v", ep.Labels)
	}
	slice, err := client.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if slice.Labels["kubernetes.io/service-name"] != "kubernetes" || len(slice.Endpoints) != 1 ||
		slice.Endpoints[0].Addresses[0] != "192.0.2.10" || *slice.Ports[0].Port != port {
		t.Errorf("endpoint slice: %+v", slice)
	}

	_, err = Start(context.Background(), Config{
		DataDir: t.TempDir(), Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler),
		OpenStorage: StorageBackend("memory", "", nil), AdvertiseAddress: "127.0.0.1",
	})
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("a loopback advertise address: %v", err)
	}
}

// waitKubernetesEndpoints waits for the kubernetes Service's Endpoints and
// EndpointSlice, which the server publishes once it serves.
func waitKubernetesEndpoints(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	poll(t, "the kubernetes service's endpoints", func() (bool, error) {
		_, err := client.CoreV1().Endpoints("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
		if err == nil {
			_, err = client.DiscoveryV1().EndpointSlices("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
		}
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}
