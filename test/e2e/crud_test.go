package e2e

import (
	"fmt"
	"net/http"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubernetes/pkg/controlplane/controller/legacytokentracking"
	"k8s.io/utils/ptr"
)

func TestBootstrapNamespaces(t *testing.T) {
	k := startKapi(t)
	list, err := k.clientset().CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range list.Items {
		names = append(names, ns.Name)
		if ns.Status.Phase != corev1.NamespaceActive {
			t.Errorf("namespace %s phase %q, want Active", ns.Name, ns.Status.Phase)
		}
	}
	sort.Strings(names)
	if fmt.Sprint(names) != "[default kube-node-lease kube-public kube-system]" {
		t.Fatalf("namespaces = %v", names)
	}
}

func TestConfigMapAndSecretCRUD(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	cs := k.clientset()
	cms := cs.CoreV1().ConfigMaps("default")

	created, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Labels: map[string]string{"app": "a"}},
		Data:       map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() || created.Namespace != "default" {
		t.Fatalf("create did not fill metadata: %+v", created.ObjectMeta)
	}
	if created.Generation != 0 {
		t.Errorf("configmap generation = %d, want unset as in Kubernetes", created.Generation)
	}
	got, err := cms.Get(ctx, "settings", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v" || got.ResourceVersion != created.ResourceVersion {
		t.Fatalf("get = %+v, %v", got, err)
	}

	got.Data["k"] = "v2"
	updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Data["k"] != "v2" || rv(t, updated.ResourceVersion) <= rv(t, created.ResourceVersion) {
		t.Fatalf("update: data %v rv %s after %s", updated.Data, updated.ResourceVersion, created.ResourceVersion)
	}
	if updated.UID != created.UID || !updated.CreationTimestamp.Equal(&created.CreationTimestamp) {
		t.Fatalf("update changed uid or creationTimestamp")
	}

	// An update that changes nothing writes nothing.
	same, err := cms.Update(ctx, updated, metav1.UpdateOptions{})
	if err != nil || same.ResourceVersion != updated.ResourceVersion {
		t.Fatalf("no-op update: rv %s, want %s (err %v)", same.ResourceVersion, updated.ResourceVersion, err)
	}

	secrets := cs.CoreV1().Secrets("kube-system")
	if _, err := secrets.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "token"},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"password": []byte("s3cr3t")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sec, err := secrets.Get(ctx, "token", metav1.GetOptions{})
	if err != nil || string(sec.Data["password"]) != "s3cr3t" {
		t.Fatalf("secret = %+v, %v", sec, err)
	}

	// kube-system holds the one kube-apiserver publishes, as in a cluster
	// (and, once its controller has run, the record of when legacy token
	// tracking began, which a slow start may not have written yet).
	notTracking := metav1.ListOptions{FieldSelector: "metadata.name!=" + legacytokentracking.ConfigMapName}
	all, err := cs.CoreV1().ConfigMaps("").List(ctx, notTracking)
	if err != nil || len(all.Items) != 2 || all.ResourceVersion == "" {
		t.Fatalf("list across namespaces: %d items, rv %q, %v", len(all.Items), all.ResourceVersion, err)
	}
	inSystem, err := cs.CoreV1().ConfigMaps("kube-system").List(ctx, notTracking)
	if err != nil || len(inSystem.Items) != 1 || inSystem.Items[0].Name != "extension-apiserver-authentication" {
		t.Fatalf("list kube-system configmaps: %d, %v", len(inSystem.Items), err)
	}
	byLabel, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app in (a,b)"})
	if err != nil || len(byLabel.Items) != 1 {
		t.Fatalf("label selector: %d items, %v", len(byLabel.Items), err)
	}

	if err := cms.Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
	// A deleted name can be used again.
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("recreate: %v", err)
	}
}

func TestPodsServicesDeployments(t *testing.T) {
	k := startKapi(t, withoutDeploymentController)
	cs := k.clientset()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := cs.CoreV1().Pods("shop").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "web-"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Name) != len("web-")+5 || pod.Name[:4] != "web-" {
		t.Fatalf("generated name %q", pod.Name)
	}
	if pod.Status.Phase != corev1.PodPending {
		t.Errorf("new pod phase %q, want Pending: status is not settable on create", pod.Status.Phase)
	}

	svc, err := cs.CoreV1().Services("shop").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Ports[0].Port = 81
	if _, err := cs.CoreV1().Services("shop").Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	deployments := cs.AppsV1().Deployments("shop")
	d, err := deployments.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Generation != 1 {
		t.Fatalf("new deployment generation %d, want 1", d.Generation)
	}

	// Changing the spec bumps generation; a PUT cannot change status.
	d.Spec.Replicas = ptr.To[int32](3)
	d.Status.Replicas = 99
	d, err = deployments.Update(ctx, d, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Generation != 2 || d.Status.Replicas != 0 {
		t.Fatalf("after spec update: generation %d status.replicas %d, want 2 and 0", d.Generation, d.Status.Replicas)
	}
	// Changing only labels leaves generation alone.
	d.Labels = map[string]string{"tier": "front"}
	d, err = deployments.Update(ctx, d, metav1.UpdateOptions{})
	if err != nil || d.Generation != 2 {
		t.Fatalf("after label update: generation %d, %v", d.Generation, err)
	}
	// The status sub-resource changes status and nothing else.
	d.Status.Replicas = 3
	d.Status.ObservedGeneration = 2
	d.Spec.Replicas = ptr.To[int32](10)
	d, err = deployments.UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.Replicas != 3 || *d.Spec.Replicas != 3 || d.Generation != 2 {
		t.Fatalf("after status update: status.replicas %d spec.replicas %d generation %d", d.Status.Replicas, *d.Spec.Replicas, d.Generation)
	}

	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("pods in all namespaces: %d, %v", len(pods.Items), err)
	}
	for _, del := range []func() error{
		func() error { return cs.CoreV1().Pods("shop").Delete(ctx, pod.Name, metav1.DeleteOptions{}) },
		func() error { return cs.CoreV1().Services("shop").Delete(ctx, "web", metav1.DeleteOptions{}) },
		func() error { return deployments.Delete(ctx, "web", metav1.DeleteOptions{}) },
	} {
		if err := del(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStaleResourceVersionConflicts(t *testing.T) {
	k := startKapi(t)
	cms := k.clientset().CoreV1().ConfigMaps("default")
	first, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"n": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	second := first.DeepCopy()
	second.Data["n"] = "2"
	if _, err := cms.Update(ctx, second, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	first.Data["n"] = "3" // still carries the first resourceVersion
	_, err = cms.Update(ctx, first, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v, want Conflict", err)
	}
	want := `Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again`
	if err.Error() != want {
		t.Fatalf("conflict message %q, want %q", err.Error(), want)
	}
	got, _ := cms.Get(ctx, "c", metav1.GetOptions{})
	if got.Data["n"] != "2" {
		t.Fatalf("stale update was applied: %v", got.Data)
	}
}

func TestFinalizersKeepObjectUntilRemoved(t *testing.T) {
	k := startKapi(t)
	cms := k.clientset().CoreV1().ConfigMaps("default")
	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	held, err := cms.Get(ctx, "held", metav1.GetOptions{})
	if err != nil || held.DeletionTimestamp == nil {
		t.Fatalf("object with finalizer after delete: %v, deletionTimestamp %v", err, held.DeletionTimestamp)
	}
	held.Finalizers = nil
	if _, err := cms.Update(ctx, held, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "held", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after the last finalizer went: %v, want NotFound", err)
	}
}

func TestDeleteNamespaceDeletesContent(t *testing.T) {
	k := startKapi(t)
	cs := k.clientset()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tmp"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("tmp").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, "tmp", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The namespace is Terminating at once, then the namespace controller
	// removes its content and it.
	ns, err := cs.CoreV1().Namespaces().Get(ctx, "tmp", metav1.GetOptions{})
	if err == nil && (ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil) {
		t.Fatalf("namespace right after delete: phase %q deletionTimestamp %v", ns.Status.Phase, ns.DeletionTimestamp)
	}
	waitGone(t, func() error {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "tmp", metav1.GetOptions{})
		return err
	})
	// Recreating the namespace does not bring its old content back.
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tmp"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("tmp").Get(ctx, "c", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("configmap of deleted namespace: %v", err)
	}
	err = cs.CoreV1().Namespaces().Delete(ctx, "default", metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("deleting default: %v, want Forbidden", err)
	}
}

func rv(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q is not decimal: %v", s, err)
	}
	return n
}

func TestBindingAssignsPodToNode(t *testing.T) {
	k := startKapi(t)
	pods := k.clientset().CoreV1().Pods("default")
	if _, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
	if err := pods.Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := pods.Get(ctx, "p", metav1.GetOptions{})
	if err != nil || pod.Spec.NodeName != "node-1" {
		t.Fatalf("bound pod nodeName %q, %v", pod.Spec.NodeName, err)
	}
	err = pods.Bind(ctx, binding, metav1.CreateOptions{})
	if !apierrors.IsConflict(err) || err.Error() != `Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "node-1"` {
		t.Fatalf("second bind: %v", err)
	}
	// Nothing named like the binding was stored.
	list, err := k.clientset().CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/default/bindings").DoRaw(ctx)
	if err == nil {
		t.Fatalf("bindings are not listable, got %s", list)
	}
}

// waitGone watches for an object to be gone: get reports NotFound. The
// namespace controller works in the background; this bounds the wait.
func waitGone(t *testing.T, get func() error) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := get()
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still there after 15s (%v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServiceAllocations(t *testing.T) {
	k := startKapi(t)
	cs := k.clientset()
	svcs := cs.CoreV1().Services("default")
	svc, err := svcs.Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ip := svc.Spec.ClusterIP
	if !strings.HasPrefix(ip, "10.") || len(svc.Spec.ClusterIPs) != 1 || svc.Spec.Ports[0].NodePort < 30000 || svc.Spec.Ports[0].TargetPort.IntValue() != 80 {
		t.Fatalf("allocations: clusterIP %q clusterIPs %v ports %+v", ip, svc.Spec.ClusterIPs, svc.Spec.Ports)
	}
	addr, err := cs.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{})
	if err != nil || addr.Spec.ParentRef.Name != "web" || addr.Spec.ParentRef.Resource != "services" {
		t.Fatalf("IPAddress of %s: %v %+v", ip, err, addr)
	}
	// The range they come from is published as the default ServiceCIDR,
	// which cannot go while IPAddresses in it remain.
	cidr := func() string {
		out, _ := k.kubectl("get", "servicecidr", "kubernetes", "-o",
			`jsonpath={.spec.cidrs} {.metadata.finalizers} {.status.conditions[?(@.type=="Ready")].reason}`)
		return out
	}
	waitFor(t, 20*time.Second, "the default ServiceCIDR", func() bool {
		return cidr() == `["10.96.0.0/12"] ["networking.k8s.io/service-cidr-finalizer"] `
	})
	k.mustKubectl("delete", "servicecidr", "kubernetes", "--wait=false")
	waitFor(t, 20*time.Second, "the default ServiceCIDR kept, terminating", func() bool {
		return cidr() == `["10.96.0.0/12"] ["networking.k8s.io/service-cidr-finalizer"] Terminating`
	})
	// The same address or node port cannot be taken twice.
	_, err = svcs.Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "copy"},
		Spec:       corev1.ServiceSpec{ClusterIP: ip, Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided IP is already allocated") {
		t.Fatalf("second service with %s: %v", ip, err)
	}
	_, err = svcs.Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "port"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
			Ports: []corev1.ServicePort{{Port: 80, NodePort: svc.Spec.Ports[0].NodePort}}},
	}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided port is already allocated") {
		t.Fatalf("second service with node port %d: %v", svc.Spec.Ports[0].NodePort, err)
	}
	// Both taken, the IP is refused, as kube's allocators take it first;
	// a free IP taken before a node port is refused is free again.
	takenBoth := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "both"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
		ClusterIP: ip, Ports: []corev1.ServicePort{{Port: 80, NodePort: svc.Spec.Ports[0].NodePort}}}}
	if _, err = svcs.Create(ctx, takenBoth, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided IP is already allocated") ||
		strings.Contains(err.Error(), "provided port") {
		t.Fatalf("a service asking for a taken IP and a taken node port: %v", err)
	}
	takenBoth.Spec.ClusterIP = "10.96.200.200"
	if _, err = svcs.Create(ctx, takenBoth, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided port is already allocated") {
		t.Fatalf("a service asking for a free IP and a taken node port: %v", err)
	}
	freeAgain := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "free-again"}, Spec: corev1.ServiceSpec{
		ClusterIP: "10.96.200.200", Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err = svcs.Create(ctx, freeAgain, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the IP of a refused service, asked for again: %v", err)
	}
	// An update that leaves them out keeps them.
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.Ports[0].NodePort = "", nil, 0
	svc.Labels = map[string]string{"changed": "yes"}
	updated, err := svcs.Update(ctx, svc, metav1.UpdateOptions{})
	if err != nil || updated.Spec.ClusterIP != ip || updated.Spec.Ports[0].NodePort == 0 {
		t.Fatalf("update: %v clusterIP %q ports %+v", err, updated.Spec.ClusterIP, updated.Spec.Ports)
	}
	// Headless services get no address.
	headless, err := svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "headless"},
		Spec: corev1.ServiceSpec{ClusterIP: "None"}}, metav1.CreateOptions{})
	if err != nil || headless.Spec.ClusterIP != "None" {
		t.Fatalf("headless: %v %+v", err, headless)
	}
	// Deleting the service frees its address.
	if err := svcs.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("IPAddress after the service was deleted: %v", err)
	}

	// A change of type to ExternalName frees the address, and one from
	// ExternalName allocates one.
	k.mustKubectl("create", "service", "clusterip", "turns", "--tcp=80:80")
	turnsIP := k.mustKubectl("get", "service", "turns", "-o", "jsonpath={.spec.clusterIP}")
	k.mustKubectl("patch", "service", "turns", "--type=merge", "-p", `{"spec":{"type":"ExternalName","externalName":"example.com"}}`)
	if out := k.mustKubectl("get", "service", "turns", "-o", "jsonpath={.spec.clusterIP}|{.spec.clusterIPs}"); out != "|" {
		t.Errorf("an ExternalName service's addresses: %q", out)
	}
	if _, err := cs.NetworkingV1().IPAddresses().Get(ctx, turnsIP, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("IPAddress %s after its service became ExternalName: %v", turnsIP, err)
	}
	k.mustKubectl("patch", "service", "turns", "--type=merge", "-p", `{"spec":{"type":"ClusterIP","externalName":null}}`)
	back := k.mustKubectl("get", "service", "turns", "-o", "jsonpath={.spec.clusterIP}")
	if addr, err := cs.NetworkingV1().IPAddresses().Get(ctx, back, metav1.GetOptions{}); err != nil || addr.Spec.ParentRef.Name != "turns" {
		t.Errorf("service back to ClusterIP: address %q, IPAddress %+v, %v", back, addr, err)
	}
	// An IPAddress's strategy takes a generateName as the name itself (the
	// address), where other types append random characters.
	made, err := cs.NetworkingV1().IPAddresses().Create(ctx, &networkingv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "10.250.3.7"},
		Spec:       networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "elsewhere"}},
	}, metav1.CreateOptions{})
	if err != nil || made.Name != "10.250.3.7" {
		t.Errorf("an IPAddress from generateName: %v %v", made, err)
	}
}

// TestDeprecatedResourceWarnsAndNothingIsCached: every request to a
// resource the release deprecates carries kube-apiserver's warning, and
// every answer tells caches not to keep it.
func TestDeprecatedResourceWarnsAndNothingIsCached(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	const warning = "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
	for _, args := range [][]string{{"create", "-f", "-"}, {"get", "endpoints", "old"}} {
		cmd := exec.Command("kubectl", append([]string{"--kubeconfig", k.kubeconfig()}, args...)...)
		cmd.Stdin = strings.NewReader(`{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"old","namespace":"default"}}`)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), warning) {
			t.Errorf("kubectl %v: %v\n%s", args, err, out)
		}
	}
	if out := k.mustKubectl("get", "configmaps"); strings.Contains(out, "deprecated") {
		t.Errorf("a resource that is not deprecated warned:\n%s", out)
	}
	for _, path := range []string{"/api/v1/namespaces/default/endpoints/old", "/api/v1/namespaces/default/configmaps/absent", "/readyz"} {
		resp, err := k.rawClient().Get(k.config.Host + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Cache-Control"); got != "no-cache, private" {
			t.Errorf("GET %s: Cache-Control %q, want kube-apiserver's", path, got)
		}
	}
}

// TestObjectsAsKubesConversionLeavesThem: objects of the types whose
// conversion to kube's internal version and back changes them are
// recorded and read as kube-apiserver records and reads them: a Secret's
// stringData is owned as the data it becomes, a DaemonSet's template
// generation annotation is its creator's, and a StatefulSet read back
// keeps its claim templates' apiVersion and kind.
func TestObjectsAsKubesConversionLeavesThem(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	apply(t, k, `apiVersion: v1
kind: Secret
metadata: {name: string-data}
stringData: {password: hunter2}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: claims}
spec:
  serviceName: claims
  replicas: 0
  selector: {matchLabels: {app: claims}}
  template:
    metadata: {labels: {app: claims}}
    spec: {containers: [{name: c, image: nginx}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: generations}
spec:
  selector: {matchLabels: {app: generations}}
  template:
    metadata: {labels: {app: generations}}
    spec: {containers: [{name: c, image: nginx}]}
`)
	// kube's conversion back from the internal version writes a
	// DaemonSet's template generation annotation, so its creator owns it.
	ds := k.mustKubectl("get", "daemonset", "generations", "--show-managed-fields", "-o", `jsonpath={.metadata.annotations.deprecated\.daemonset\.template\.generation} {.metadata.managedFields[0].fieldsV1}`)
	if !strings.HasPrefix(ds, "1 ") || !strings.Contains(ds, `"f:deprecated.daemonset.template.generation":{}`) {
		t.Errorf("a DaemonSet's template generation and its owner: %s", ds)
	}
	secret, err := k.clientset().CoreV1().Secrets("default").Get(ctx, "string-data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(secret.Data["password"]) != "hunter2" || len(secret.StringData) != 0 {
		t.Errorf("secret data %q, stringData %v", secret.Data, secret.StringData)
	}
	for _, m := range secret.ManagedFields {
		fields := string(m.FieldsV1.Raw)
		if strings.Contains(fields, "stringData") || !strings.Contains(fields, `"f:data":{".":{},"f:password":{}}`) {
			t.Errorf("managed fields of %s: %s", m.Manager, fields)
		}
	}
	for _, how := range []string{"get", "list"} {
		var out string
		if how == "get" {
			out = k.mustKubectl("get", "statefulset", "claims", "-o", "jsonpath={.spec.volumeClaimTemplates[0].apiVersion}/{.spec.volumeClaimTemplates[0].kind}")
		} else {
			out = k.mustKubectl("get", "statefulsets", "-o", "jsonpath={.items[0].spec.volumeClaimTemplates[0].apiVersion}/{.items[0].spec.volumeClaimTemplates[0].kind}")
		}
		if out != "v1/PersistentVolumeClaim" {
			t.Errorf("a StatefulSet's claim template on %s: %q", how, out)
		}
	}
}

// TestBindingChecksAsKube: a binding is checked as kube's binding storage
// checks it: validated, its UID and resourceVersion held against the pod,
// a gated pod refused, and an action the client cannot take the answer of
// is not carried out.
func TestBindingChecksAsKube(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	pods := k.clientset().CoreV1().Pods("default")
	for _, name := range []string{"q", "gated"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		if name == "gated" {
			pod.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "wait"}}
		}
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bind := func(name string, meta metav1.ObjectMeta, node string) error {
		meta.Name = name
		return pods.Bind(ctx, &corev1.Binding{ObjectMeta: meta, Target: corev1.ObjectReference{Name: node}}, metav1.CreateOptions{})
	}
	for _, tc := range []struct {
		name, pod, node string
		meta            metav1.ObjectMeta
		want            string
	}{
		{"a gated pod", "gated", "node-1", metav1.ObjectMeta{}, `pod gated has non-empty .spec.schedulingGates`},
		{"another pod's UID", "q", "node-1", metav1.ObjectMeta{UID: "00000000-0000-0000-0000-000000000000"}, "Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000"},
		{"an old resourceVersion", "q", "node-1", metav1.ObjectMeta{ResourceVersion: "1"}, "Precondition failed: ResourceVersion in precondition: 1"},
		{"a node name that is none", "q", "bad_Node!", metav1.ObjectMeta{}, `target.name: Invalid value: "bad_Node!"`},
	} {
		if err := bind(tc.pod, tc.meta, tc.node); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("binding %s: %v, want %q", tc.name, err, tc.want)
		}
	}
	resp, body := rawDo(t, k, http.MethodPost, "/api/v1/namespaces/default/pods/q/binding", "application/json", "application/json;as=Table;v=v1;g=meta.k8s.io",
		[]byte(`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"q"},"target":{"name":"node-1"}}`))
	if resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("a binding answered as a Table: %d %s", resp.StatusCode, body)
	}
	resp, body = rawDo(t, k, http.MethodPost, "/api/v1/namespaces/default/bindings", "application/json", "",
		[]byte(`{"apiVersion":"v1","kind":"Binding","metadata":{},"target":{"name":"node-1"}}`))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Name parameter required.") {
		t.Errorf("a binding without a name: %d %s", resp.StatusCode, body)
	}
	// As kube's storage, the binding is validated before its name is keyed.
	resp, body = rawDo(t, k, http.MethodPost, "/api/v1/namespaces/default/bindings", "application/json", "", []byte(`{}`))
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "target.name: Required value") {
		t.Errorf("an empty binding: %d %s", resp.StatusCode, body)
	}
	if pod, err := pods.Get(ctx, "q", metav1.GetOptions{}); err != nil || pod.Spec.NodeName != "" {
		t.Errorf("after the refused bindings the pod is on %q (%v)", pod.Spec.NodeName, err)
	}
	// The binding's labels and annotations go onto the pod, as in kube.
	meta := metav1.ObjectMeta{Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "bound"}}
	if err := bind("q", meta, "node-1"); err != nil {
		t.Fatal(err)
	}
	if pod, err := pods.Get(ctx, "q", metav1.GetOptions{}); err != nil || pod.Labels["team"] != "a" || pod.Annotations["note"] != "bound" {
		t.Errorf("the bound pod's labels %v and annotations %v (%v), want the binding's", pod.Labels, pod.Annotations, err)
	}
}
