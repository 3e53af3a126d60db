package e2e

// Object lifecycle end to end (issue #11): every delete option, the three
// propagation policies on chains of owners, finalizers removed in
// different orders, the deletion of a namespace holding hundreds of
// objects, restarts in the middle of a namespace deletion and of a
// foreground deletion, and the objects every cluster has (the kubernetes
// Service and its endpoints, each namespace's default ServiceAccount and
// kube-root-ca.crt ConfigMap), repaired when deleted.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// lcTimeout bounds every wait of these tests. It is generous: the tests
// pass or fail on what the server does, not on how fast the machine is.
// (The namespace controller looks again at a namespace whose content has
// finalizers every 8 s; the kubernetes Service is repaired every 10 s.)
const lcTimeout = 60 * time.Second

// The finalizers the tests hold objects with.
const (
	holdA = "example.com/a"
	holdB = "example.com/b"
	holdC = "example.com/c"
)

var (
	lcConfigMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	lcSecrets    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	lcRoles      = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	lcDeploys    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// lcClients are a clientset and a dynamic client without client-go's
// default rate limit (5 requests a second), for tests that write hundreds
// of objects, and without printing deprecation warnings (v1 Endpoints).
func lcClients(t *testing.T, k *kapi) (*kubernetes.Clientset, *dynamic.DynamicClient) {
	t.Helper()
	cfg := rest.CopyConfig(k.config)
	cfg.QPS, cfg.Burst = 1000, 1000
	cfg.WarningHandler = rest.NoWarnings{}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, dyn
}

func lcNamespace(t *testing.T, cs kubernetes.Interface, name string) *corev1.Namespace {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// lcRaw sends a JSON request with the admin's credentials and returns the
// HTTP code and the body.
func lcRaw(t *testing.T, k *kapi, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, k.config.Host+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.rawClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// lcRawFailure sends a request that must fail with kube-apiserver's
// Status: code, reason and message (exact, unless message is empty).
func lcRawFailure(t *testing.T, k *kapi, method, path, body string, code int, reason metav1.StatusReason, message string) {
	t.Helper()
	got, data := lcRaw(t, k, method, path, body)
	var status metav1.Status
	if err := json.Unmarshal(data, &status); err != nil || status.Kind != "Status" {
		t.Fatalf("%s %s %s: %d, not a Status: %v\n%s", method, path, body, got, err, data)
	}
	if got != code || int(status.Code) != code || status.Status != metav1.StatusFailure || status.Reason != reason {
		t.Fatalf("%s %s %s: HTTP %d, Status %d %s %q; want %d %s", method, path, body, got, status.Code, status.Reason, status.Message, code, reason)
	}
	if message != "" && status.Message != message {
		t.Fatalf("%s %s %s:\nmessage %q\nwant    %q", method, path, body, status.Message, message)
	}
}

// lcRawObject sends a request that must answer code with an object, and
// returns the object's metadata.
func lcRawObject(t *testing.T, k *kapi, method, path, body string, code int) metav1.ObjectMeta {
	t.Helper()
	got, data := lcRaw(t, k, method, path, body)
	var obj struct {
		Kind     string            `json:"kind"`
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(data, &obj); err != nil || got != code || obj.Kind == "Status" {
		t.Fatalf("%s %s %s: HTTP %d (want %d with the object): %v\n%s", method, path, body, got, code, err, data)
	}
	return obj.Metadata
}

// lcRawDeleted sends a delete that must remove the object at once: 200
// with kube-apiserver's success Status naming it.
func lcRawDeleted(t *testing.T, k *kapi, path, body, name, resource string) {
	t.Helper()
	got, data := lcRaw(t, k, "DELETE", path, body)
	var status metav1.Status
	if err := json.Unmarshal(data, &status); err != nil || got != http.StatusOK || status.Kind != "Status" ||
		status.Status != metav1.StatusSuccess || status.Details == nil || status.Details.Name != name || status.Details.Kind != resource {
		t.Fatalf("DELETE %s %s: HTTP %d, want 200 and a success Status for %s %s: %v\n%s", path, body, got, resource, name, err, data)
	}
}

// lcWaitGone waits until get answers NotFound.
func lcWaitGone(t *testing.T, what string, get func() error) {
	t.Helper()
	waitFor(t, lcTimeout, what+" to be gone", func() bool {
		err := get()
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("reading %s: %v", what, err)
		}
		return apierrors.IsNotFound(err)
	})
}

// lcGet reads one object with the dynamic client; nil when it is gone.
func lcGet(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return obj
}

// lcWaitObjectGone waits until the object is gone.
func lcWaitObjectGone(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	lcWaitGone(t, fmt.Sprintf("%s %s/%s", gvr.Resource, ns, name), func() error {
		_, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	})
}

// lcDropFinalizers removes every finalizer of an object (a merge patch).
func lcDropFinalizers(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	_, err := dyn.Resource(gvr).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("removing the finalizers of %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
}

// lcNextEvent is the next event of a watch, within lcTimeout.
func lcNextEvent(t *testing.T, w watch.Interface, what string) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch of %s ended", what)
		}
		if ev.Type == watch.Error {
			t.Fatalf("watch of %s: error %v", what, apierrors.FromObject(ev.Object))
		}
		return ev
	case <-time.After(lcTimeout):
		t.Fatalf("no event on the watch of %s within %v", what, lcTimeout)
	}
	return watch.Event{}
}

func lcMeta(t *testing.T, obj any) metav1.Object {
	t.Helper()
	m, ok := obj.(metav1.Object)
	if !ok {
		t.Fatalf("%T has no metadata", obj)
	}
	return m
}

// lcRestart stops kapi, with SIGKILL when crash is set, and starts it
// again on the same data directory, as k.start does, with more time to
// become ready (/readyz, every check) on a loaded machine.
func lcRestart(t *testing.T, k *kapi, crash bool) {
	t.Helper()
	if crash {
		k.kill9()
	} else {
		k.stop()
	}
	kubeconfig := filepath.Join(k.dataDir, "kubeconfig")
	os.Remove(kubeconfig)
	k.log = &syncBuffer{}
	k.cmd = k.command()
	if err := k.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, lcTimeout, "kapi to write its kubeconfig", func() bool {
		_, err := os.Stat(kubeconfig)
		return err == nil
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	k.config = cfg
	ready := func(path string) bool {
		code, _ := lcRaw(t, k, "GET", path, "")
		return code == http.StatusOK
	}
	waitFor(t, lcTimeout, "kapi to be ready after a restart", func() bool { return ready("/readyz") })
}

// lcNamespaceCondition is a condition of a namespace, or nil.
func lcNamespaceCondition(ns *corev1.Namespace, typ corev1.NamespaceConditionType) *corev1.NamespaceCondition {
	for i := range ns.Status.Conditions {
		if ns.Status.Conditions[i].Type == typ {
			return &ns.Status.Conditions[i]
		}
	}
	return nil
}

// TestLifecycleDeleteOptions: every delete option through client-go and
// raw requests, in the body as JSON and as query parameters, answered as
// kube-apiserver does: preconditions (409 with the generic registry's
// message; namespaces have their storage's own), propagationPolicy,
// the legacy orphanDependents (202 when the object is kept), a
// gracePeriodSeconds that types without graceful deletion ignore, dryRun
// (the object stays), and 422 for invalid combinations.
func TestLifecycleDeleteOptions(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	cs, _ := lcClients(t, k)
	ns := lcNamespace(t, cs, "opts")
	cms := cs.CoreV1().ConfigMaps("opts")
	create := func(name string, finalizers ...string) *corev1.ConfigMap {
		t.Helper()
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm
	}
	get := func(name string) *corev1.ConfigMap {
		t.Helper()
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return cm
	}
	gone := func(name string) func() error {
		return func() error { _, err := cms.Get(ctx, name, metav1.GetOptions{}); return err }
	}
	path := func(name string) string { return "/api/v1/namespaces/opts/configmaps/" + name }

	t.Run("preconditions", func(t *testing.T) {
		pre := create("pre")
		wrongUID := types.UID("0e1d2c3b-4a59-4687-9786-a5b4c3d2e1f0")
		err := cms.Delete(ctx, "pre", metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(wrongUID))})
		uidMessage := fmt.Sprintf(`Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated`, wrongUID, pre.UID)
		if !apierrors.IsConflict(err) || err.Error() != uidMessage {
			t.Fatalf("delete with a wrong UID: %v\nwant 409 %s", err, uidMessage)
		}
		var status apierrors.APIStatus
		if !errors.As(err, &status) {
			t.Fatalf("%T is not an API status", err)
		}
		if d := status.Status().Details; d == nil || d.Kind != "ConfigMap" || d.Group != "" || d.Name != "pre" {
			t.Errorf("conflict details %+v, want kind ConfigMap, name pre", d)
		}
		stale := "1"
		err = cms.Delete(ctx, "pre", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}})
		rvMessage := fmt.Sprintf(`Operation cannot be fulfilled on ConfigMap "pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (%s). The object might have been modified`, pre.ResourceVersion)
		if !apierrors.IsConflict(err) || err.Error() != rvMessage {
			t.Fatalf("delete with a stale resourceVersion: %v\nwant 409 %s", err, rvMessage)
		}
		// The same in a raw JSON body, in either group-version of
		// DeleteOptions.
		lcRawFailure(t, k, "DELETE", path("pre"), `{"kind":"DeleteOptions","apiVersion":"meta.k8s.io/v1","preconditions":{"uid":"`+string(wrongUID)+`"}}`,
			http.StatusConflict, metav1.StatusReasonConflict, uidMessage)
		lcRawFailure(t, k, "DELETE", path("pre"), `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"resourceVersion":"1"}}`,
			http.StatusConflict, metav1.StatusReasonConflict, rvMessage)
		if get("pre") == nil {
			t.Fatal("a delete whose precondition failed deleted the object")
		}
		// Preconditions that hold.
		if err := cms.Delete(ctx, "pre", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pre.UID, ResourceVersion: &pre.ResourceVersion}}); err != nil {
			t.Fatalf("delete with preconditions that hold: %v", err)
		}
		if get("pre") != nil {
			t.Fatal("still there after its delete")
		}
		// A namespace's storage checks the preconditions itself, with its
		// own message.
		err = cs.CoreV1().Namespaces().Delete(ctx, "opts", metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(wrongUID))})
		want := fmt.Sprintf(`Operation cannot be fulfilled on namespaces "opts": Precondition failed: UID in precondition: %s, UID in object meta: %s`, wrongUID, ns.UID)
		if !apierrors.IsConflict(err) || err.Error() != want {
			t.Fatalf("namespace delete with a wrong UID: %v\nwant 409 %s", err, want)
		}
	})

	t.Run("dryRun", func(t *testing.T) {
		create("dry")
		if err := cms.Delete(ctx, "dry", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatal(err)
		}
		lcRawDeleted(t, k, path("dry"), `{"dryRun":["All"]}`, "dry", "configmaps")
		lcRawDeleted(t, k, path("dry")+"?dryRun=All", "", "dry", "configmaps")
		if cm := get("dry"); cm == nil || cm.DeletionTimestamp != nil {
			t.Fatalf("after dry-run deletes: %+v, want it untouched", cm)
		}
		// A dry run of a delete that would keep the object answers the
		// object as it would be, and stores nothing.
		held := create("dry-held", holdA)
		m := lcRawObject(t, k, "DELETE", path("dry-held")+"?dryRun=All&propagationPolicy=Foreground", "", http.StatusOK)
		if m.DeletionTimestamp == nil || !slices.Equal(m.Finalizers, []string{holdA, metav1.FinalizerDeleteDependents}) {
			t.Errorf("dry-run foreground delete answered deletionTimestamp %v finalizers %v; want set and [%s foregroundDeletion]", m.DeletionTimestamp, m.Finalizers, holdA)
		}
		if cm := get("dry-held"); cm.DeletionTimestamp != nil || !slices.Equal(cm.Finalizers, []string{holdA}) || cm.ResourceVersion != held.ResourceVersion {
			t.Errorf("after a dry-run delete: deletionTimestamp %v finalizers %v rv %s; want unchanged", cm.DeletionTimestamp, cm.Finalizers, cm.ResourceVersion)
		}
	})

	t.Run("gracePeriodSeconds", func(t *testing.T) {
		// ConfigMaps have no graceful deletion: a grace period is ignored
		// and the object goes at once, as does an unscheduled pod.
		create("grace")
		if err := cms.Delete(ctx, "grace", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](30)}); err != nil {
			t.Fatal(err)
		}
		if get("grace") != nil {
			t.Fatal("a configmap deleted with gracePeriodSeconds=30 is still there")
		}
		create("negative")
		lcRawDeleted(t, k, path("negative")+"?gracePeriodSeconds=-1", "", "negative", "configmaps")
		create("zero")
		lcRawDeleted(t, k, path("zero"), `{"gracePeriodSeconds":0}`, "zero", "configmaps")
		pods := cs.CoreV1().Pods("opts")
		if _, err := pods.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "unscheduled"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := pods.Delete(ctx, "unscheduled", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](30)}); err != nil {
			t.Fatal(err)
		}
		if _, err := pods.Get(ctx, "unscheduled", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("a pod on no node is deleted at once whatever the grace period: %v", err)
		}
	})

	t.Run("propagationPolicy", func(t *testing.T) {
		// Background removes the object at once.
		create("bg-body")
		lcRawDeleted(t, k, path("bg-body"), `{"kind":"DeleteOptions","apiVersion":"meta.k8s.io/v1","propagationPolicy":"Background"}`, "bg-body", "configmaps")
		create("bg-query")
		lcRawDeleted(t, k, path("bg-query")+"?propagationPolicy=Background", "", "bg-query", "configmaps")
		create("bg-client")
		if err := cms.Delete(ctx, "bg-client", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
			t.Fatal(err)
		}
		if get("bg-client") != nil {
			t.Fatal("a background delete kept the object")
		}
		// Orphan and Foreground leave the garbage collector's finalizer;
		// it removes it (there are no dependents) and the object goes.
		for _, c := range []struct{ name, query, body, finalizer string }{
			{"orphan-query", "?propagationPolicy=Orphan", "", metav1.FinalizerOrphanDependents},
			{"orphan-body", "", `{"propagationPolicy":"Orphan"}`, metav1.FinalizerOrphanDependents},
			{"legacy-orphan-query", "?orphanDependents=true", "", metav1.FinalizerOrphanDependents},
			{"legacy-orphan-body", "", `{"orphanDependents":true}`, metav1.FinalizerOrphanDependents},
			{"fg-query", "?propagationPolicy=Foreground", "", metav1.FinalizerDeleteDependents},
			{"fg-body", "", `{"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Foreground"}`, metav1.FinalizerDeleteDependents},
		} {
			create(c.name)
			m := lcRawObject(t, k, "DELETE", path(c.name)+c.query, c.body, http.StatusOK)
			if m.DeletionTimestamp == nil || !slices.Equal(m.Finalizers, []string{c.finalizer}) {
				t.Errorf("%s: answered deletionTimestamp %v finalizers %v, want set and [%s]", c.name, m.DeletionTimestamp, m.Finalizers, c.finalizer)
			}
			if m.DeletionGracePeriodSeconds == nil || *m.DeletionGracePeriodSeconds != 0 {
				t.Errorf("%s: deletionGracePeriodSeconds %v, want 0", c.name, m.DeletionGracePeriodSeconds)
			}
		}
		// client-go's options go in the body too.
		create("orphan-client")
		create("fg-client")
		if err := cms.Delete(ctx, "orphan-client", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}); err != nil {
			t.Fatal(err)
		}
		if err := cms.Delete(ctx, "fg-client", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"orphan-query", "orphan-body", "legacy-orphan-query", "legacy-orphan-body", "fg-query", "fg-body", "orphan-client", "fg-client"} {
			lcWaitGone(t, "configmap "+name, gone(name))
		}
	})

	t.Run("orphanDependents=false keeps a held object with 202", func(t *testing.T) {
		create("held", holdA)
		m := lcRawObject(t, k, "DELETE", path("held"), `{"orphanDependents":false}`, http.StatusAccepted)
		if m.DeletionTimestamp == nil || !slices.Equal(m.Finalizers, []string{holdA}) {
			t.Fatalf("answered deletionTimestamp %v finalizers %v, want set and [%s]", m.DeletionTimestamp, m.Finalizers, holdA)
		}
		// Without orphanDependents=false, a kept object is a 200.
		again := lcRawObject(t, k, "DELETE", path("held"), "", http.StatusOK)
		if !again.DeletionTimestamp.Equal(m.DeletionTimestamp) {
			t.Errorf("a second delete moved deletionTimestamp from %v to %v", m.DeletionTimestamp, again.DeletionTimestamp)
		}
		// A later delete may still ask for orphaning: the finalizer is
		// added to the object being deleted.
		orphaned := lcRawObject(t, k, "DELETE", path("held")+"?propagationPolicy=Orphan", "", http.StatusOK)
		if !slices.Equal(orphaned.Finalizers, []string{holdA, metav1.FinalizerOrphanDependents}) {
			t.Errorf("after a second delete with Orphan: finalizers %v, want [%s orphan]", orphaned.Finalizers, holdA)
		}
		// The garbage collector removes the orphan finalizer meanwhile
		// (there is nothing to orphan): an update may conflict with it.
		for attempt := 1; ; attempt++ {
			cm := get("held")
			cm.Finalizers = slices.DeleteFunc(cm.Finalizers, func(f string) bool { return f == holdA })
			_, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
			if err == nil {
				break
			}
			if !apierrors.IsConflict(err) || attempt == 10 {
				t.Fatalf("update %d: %v", attempt, err)
			}
		}
		lcWaitGone(t, "configmap held", gone("held"))
	})

	t.Run("generation", func(t *testing.T) {
		// Marking an object that has a generation for deletion moves the
		// generation on, once.
		deploys := cs.AppsV1().Deployments("opts")
		labels := map[string]string{"app": "gen"}
		d, err := deploys.Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "gen", Finalizers: []string{holdA}},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
				},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// (A precondition that fails names the kind with its group.)
		err = deploys.Delete(ctx, "gen", metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions("0e1d2c3b-4a59-4687-9786-a5b4c3d2e1f0")})
		want := fmt.Sprintf(`Operation cannot be fulfilled on Deployment.apps "gen": the UID in the precondition (0e1d2c3b-4a59-4687-9786-a5b4c3d2e1f0) does not match the UID in record (%s). The object might have been deleted and then recreated`, d.UID)
		var status apierrors.APIStatus
		if !errors.As(err, &status) || err.Error() != want {
			t.Fatalf("deployment delete with a wrong UID: %v\nwant %s", err, want)
		}
		if d := status.Status().Details; d == nil || d.Group != "apps" || d.Kind != "Deployment" {
			t.Errorf("conflict details %+v, want group apps, kind Deployment", d)
		}
		for i := 0; i < 2; i++ {
			if err := deploys.Delete(ctx, "gen", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			got, err := deploys.Get(ctx, "gen", metav1.GetOptions{})
			if err != nil || got.DeletionTimestamp == nil || got.Generation != d.Generation+1 {
				t.Fatalf("after delete %d: %v, generation %d deletionTimestamp %v; want generation %d", i+1, err, got.Generation, got.DeletionTimestamp, d.Generation+1)
			}
		}
		if _, err := deploys.Patch(ctx, "gen", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := deploys.Get(ctx, "gen", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("after its finalizer went: %v", err)
		}
	})

	t.Run("invalid", func(t *testing.T) {
		keep := create("keep")
		both := func(value string) string {
			return fmt.Sprintf(`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: %q: orphanDependents and deletionPropagation cannot be both set`, value)
		}
		unsupported := func(value string) string {
			return fmt.Sprintf(`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: %q: supported values: "Foreground", "Background", "Orphan", "nil"`, value)
		}
		for _, c := range []struct{ query, body, message string }{
			{"?orphanDependents=true&propagationPolicy=Orphan", "", both("Orphan")},
			{"?orphanDependents=false&propagationPolicy=Background", "", both("Background")},
			{"", `{"orphanDependents":false,"propagationPolicy":"Foreground"}`, both("Foreground")},
			{"?propagationPolicy=Sideways", "", unsupported("Sideways")},
			{"", `{"propagationPolicy":"orphan"}`, unsupported("orphan")},
			{"?dryRun=Bogus", "", `DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Bogus"]: supported values: "All"`},
			{"", `{"dryRun":["All","Bogus"]}`, `DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["All","Bogus"]: supported values: "All"`},
		} {
			lcRawFailure(t, k, "DELETE", path("keep")+c.query, c.body, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, c.message)
		}
		err := cms.Delete(ctx, "keep", metav1.DeleteOptions{OrphanDependents: ptr.To(true), PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
		if !apierrors.IsInvalid(err) || err.Error() != both("Background") {
			t.Errorf("client-go delete with both: %v", err)
		}
		err = cms.Delete(ctx, "keep", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletionPropagation("Later"))})
		if !apierrors.IsInvalid(err) || err.Error() != unsupported("Later") {
			t.Errorf("client-go delete with an unknown policy: %v", err)
		}
		// Options that cannot be decoded are a 400 (kube-apiserver gives
		// the decoder's message).
		lcRawFailure(t, k, "DELETE", path("keep"), `{"propagationPolicy":`, http.StatusBadRequest, metav1.StatusReasonBadRequest, "")
		lcRawFailure(t, k, "DELETE", path("keep"), `{"gracePeriodSeconds":"soon"}`, http.StatusBadRequest, metav1.StatusReasonBadRequest, "")
		if cm := get("keep"); cm == nil || cm.DeletionTimestamp != nil || cm.ResourceVersion != keep.ResourceVersion {
			t.Fatalf("after refused deletes: %+v, want it untouched", cm)
		}
	})
}

// TestLifecycleDeleteOptionsWithKubectl: kubectl's delete flags reach the
// server as the same options: --dry-run=server, --grace-period, --now,
// --force, --cascade; and kubectl delete --raw sends options in a body
// or a query, with kube-apiserver's errors printed as kubectl prints them.
func TestLifecycleDeleteOptionsWithKubectl(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	cs, _ := lcClients(t, k)
	lcNamespace(t, cs, "kopts")
	cms := cs.CoreV1().ConfigMaps("kopts")
	kc := func(args ...string) string { return k.mustKubectl(append([]string{"-n", "kopts"}, args...)...) }
	exists := func(name string) bool {
		_, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}

	kc("create", "configmap", "dry")
	if out := kc("delete", "configmap", "dry", "--dry-run=server"); strings.TrimSpace(out) != `configmap "dry" deleted (server dry run)` {
		t.Errorf("kubectl delete --dry-run=server printed %q", out)
	}
	if !exists("dry") {
		t.Fatal("a server dry-run delete deleted the object")
	}
	for _, flags := range [][]string{{"--grace-period=30"}, {"--now"}, {"--grace-period=0", "--force"}, {"--wait=false"}} {
		kc("create", "configmap", "flags")
		kc(append([]string{"delete", "configmap", "flags"}, flags...)...)
		if exists("flags") {
			t.Fatalf("kubectl delete %v kept the configmap", flags)
		}
	}

	// --cascade=orphan on a held object: the orphan finalizer joins the
	// object's own (and the garbage collector, having nothing to orphan,
	// soon removes it).
	kc("create", "configmap", "held")
	kc("patch", "configmap", "held", "--type=merge", "-p", `{"metadata":{"finalizers":["`+holdA+`"]}}`)
	held, err := cms.Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=held", ResourceVersion: held.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	kc("delete", "configmap", "held", "--cascade=orphan", "--wait=false")
	ev := lcNextEvent(t, w, "held")
	if m := lcMeta(t, ev.Object); ev.Type != watch.Modified || m.GetDeletionTimestamp() == nil ||
		!slices.Equal(m.GetFinalizers(), []string{holdA, metav1.FinalizerOrphanDependents}) {
		t.Fatalf("after kubectl delete --cascade=orphan: %s with deletionTimestamp %v finalizers %v; want MODIFIED, set, [%s orphan]",
			ev.Type, m.GetDeletionTimestamp(), m.GetFinalizers(), holdA)
	}
	kc("patch", "configmap", "held", "--type=json", "-p", `[{"op":"test","path":"/metadata/finalizers/0","value":"`+holdA+`"},{"op":"remove","path":"/metadata/finalizers/0"}]`)
	kc("wait", "--for=delete", "configmap/held", "--timeout=60s")

	// kubectl delete --raw: options in a body file, and as a query.
	pre, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "pre"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	body := filepath.Join(t.TempDir(), "options.json")
	if err := os.WriteFile(body, []byte(`{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"0e1d2c3b-4a59-4687-9786-a5b4c3d2e1f0"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	raw := "/api/v1/namespaces/kopts/configmaps/pre"
	out, err := k.kubectl("delete", "--raw", raw, "-f", body)
	want := fmt.Sprintf(`Error from server (Conflict): Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (0e1d2c3b-4a59-4687-9786-a5b4c3d2e1f0) does not match the UID in record (%s). The object might have been deleted and then recreated`, pre.UID)
	if err == nil || strings.TrimSpace(out) != want {
		t.Errorf("kubectl delete --raw with a wrong UID: %v\n%s\nwant %s", err, out, want)
	}
	out, err = k.kubectl("delete", "--raw", raw+"?propagationPolicy=Nope")
	want = `The DeleteOptions "" is invalid: propagationPolicy: Unsupported value: "Nope": supported values: "Foreground", "Background", "Orphan", "nil"`
	if err == nil || strings.TrimSpace(out) != want {
		t.Errorf("kubectl delete --raw with an unknown policy: %v\n%s\nwant %s", err, out, want)
	}
	out, err = k.kubectl("delete", "--raw", raw+"?orphanDependents=true&propagationPolicy=Orphan")
	want = `The DeleteOptions "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set`
	if err == nil || strings.TrimSpace(out) != want {
		t.Errorf("kubectl delete --raw with both: %v\n%s\nwant %s", err, out, want)
	}
	if !exists("pre") {
		t.Fatal("a refused delete deleted the object")
	}
	var status metav1.Status
	out = k.mustKubectl("delete", "--raw", raw+"?dryRun=All")
	if err := json.Unmarshal([]byte(out), &status); err != nil || status.Status != metav1.StatusSuccess || !exists("pre") {
		t.Fatalf("kubectl delete --raw ?dryRun=All: %v\n%s", err, out)
	}
	if err := os.WriteFile(body, []byte(`{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"`+string(pre.UID)+`"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out = k.mustKubectl("delete", "--raw", raw, "-f", body)
	if err := json.Unmarshal([]byte(out), &status); err != nil || status.Status != metav1.StatusSuccess || status.Details.UID != pre.UID || exists("pre") {
		t.Fatalf("kubectl delete --raw with the right UID: %v\n%s", err, out)
	}
}

// lcChain is a chain of owners without custom resources: ConfigMap A owns
// Secret B, which owns ConfigMap C, each owner reference with the owner's
// uid and blockOwnerDeletion.
type lcChain struct {
	a *corev1.ConfigMap
	b *corev1.Secret
	c *corev1.ConfigMap
}

// lcMakeChain creates a chain named prefix-a, prefix-b, prefix-c; C holds
// the finalizers given.
func lcMakeChain(t *testing.T, cs kubernetes.Interface, ns, prefix string, cFinalizers ...string) lcChain {
	t.Helper()
	var ch lcChain
	var err error
	ch.a, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ch.b, err = cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: prefix + "-b",
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: ch.a.Name, UID: ch.a.UID, BlockOwnerDeletion: ptr.To(true),
		}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ch.c, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:       prefix + "-c",
		Finalizers: cFinalizers,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Secret", Name: ch.b.Name, UID: ch.b.UID, BlockOwnerDeletion: ptr.To(true),
		}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lcWaitObserved(t, cs, ns)
	return ch
}

// lcWaitObserved waits until the garbage collector has seen every
// ConfigMap and Secret written so far in ns. It learns of objects
// through watches: an owner deleted with Orphan before it has seen a
// dependent loses nothing to orphan, and the dependent, found later with
// an owner gone, is collected (as in any cluster). The collector handles
// what each watch brings in order, so once it has collected a probe of
// each type, written last with an owner that does not exist, it has seen
// everything written before.
func lcWaitObserved(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	ghost := []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "ghost", UID: "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"}}
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", OwnerReferences: ghost}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", OwnerReferences: ghost}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lcWaitGone(t, "the garbage collector's probe configmap", func() error {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, cm.Name, metav1.GetOptions{})
		return err
	})
	lcWaitGone(t, "the garbage collector's probe secret", func() error {
		_, err := cs.CoreV1().Secrets(ns).Get(ctx, secret.Name, metav1.GetOptions{})
		return err
	})
}

// lcCheckOrphaned checks the end of an orphan delete of A: A is gone, B
// is there without owner references and not being deleted, C is as it was.
func lcCheckOrphaned(t *testing.T, dyn dynamic.Interface, ns string, ch lcChain) {
	t.Helper()
	lcWaitObjectGone(t, dyn, lcConfigMaps, ns, ch.a.Name)
	b := lcGet(t, dyn, lcSecrets, ns, ch.b.Name)
	if b == nil || b.GetUID() != ch.b.UID || b.GetDeletionTimestamp() != nil || len(b.GetOwnerReferences()) != 0 {
		t.Fatalf("orphaned B: %v", b)
	}
	c := lcGet(t, dyn, lcConfigMaps, ns, ch.c.Name)
	if c == nil || c.GetDeletionTimestamp() != nil || len(c.GetOwnerReferences()) != 1 || c.GetOwnerReferences()[0].UID != ch.b.UID {
		t.Fatalf("C after its grandparent was deleted with Orphan: %v", c)
	}
}

// lcWaitDeleting waits until an object is being deleted with the
// finalizers given among its own.
func lcWaitDeleting(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, name string, finalizers ...string) {
	t.Helper()
	waitFor(t, lcTimeout, fmt.Sprintf("%s %s/%s to be deleted with finalizers %v", gvr.Resource, ns, name, finalizers), func() bool {
		obj := lcGet(t, dyn, gvr, ns, name)
		if obj == nil {
			t.Fatalf("%s %s/%s is gone, want it kept", gvr.Resource, ns, name)
		}
		if obj.GetDeletionTimestamp() == nil {
			return false
		}
		for _, f := range finalizers {
			if !slices.Contains(obj.GetFinalizers(), f) {
				return false
			}
		}
		return true
	})
}

// lcDeletionOrder removes C's finalizers and returns the resourceVersions
// at which C, B and A were deleted, as watches from before see them.
func lcDeletionOrder(t *testing.T, cs kubernetes.Interface, dyn dynamic.Interface, ns string, ch lcChain) (c, b, a int64) {
	t.Helper()
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cmWatch, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cmWatch.Stop()
	secretWatch, err := cs.CoreV1().Secrets(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer secretWatch.Stop()
	lcDropFinalizers(t, dyn, lcConfigMaps, ns, ch.c.Name)
	deleted := map[types.UID]int64{}
	deadline := time.After(lcTimeout)
	for len(deleted) < 3 {
		var ev watch.Event
		var ok bool
		select {
		case ev, ok = <-cmWatch.ResultChan():
		case ev, ok = <-secretWatch.ResultChan():
		case <-deadline:
			t.Fatalf("within %v, the watches saw the deletion of %d of A, B and C", lcTimeout, len(deleted))
		}
		if !ok || ev.Type == watch.Error {
			t.Fatalf("watch ended or failed: %v", ev.Object)
		}
		if m := lcMeta(t, ev.Object); ev.Type == watch.Deleted {
			deleted[m.GetUID()] = rv(t, m.GetResourceVersion())
		}
	}
	return deleted[ch.c.UID], deleted[ch.b.UID], deleted[ch.a.UID]
}

// TestLifecyclePropagationChains: the three propagation policies on a
// chain of owners A → B → C (ConfigMap, Secret, ConfigMap), through
// client-go and through kubectl delete --cascade. Background: A goes at
// once, then B and C. Foreground: A, then B, get foregroundDeletion and
// a deletion timestamp and stay until their dependents are gone; C goes
// first, then B, then A. Orphan: A gets the orphan finalizer and goes, B
// stays without its owner reference, C is untouched. Dependents whose
// owner does not exist (a made-up uid, a name with another uid, a
// cluster-scoped owner) are collected, and a namespaced dependent of a
// cluster-scoped owner goes with it.
func TestLifecyclePropagationChains(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	cs, dyn := lcClients(t, k)
	const ns = "chains"
	lcNamespace(t, cs, ns)
	cms := cs.CoreV1().ConfigMaps(ns)

	t.Run("background", func(t *testing.T) {
		ch := lcMakeChain(t, cs, ns, "bg")
		if err := cms.Delete(ctx, ch.a.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
			t.Fatal(err)
		}
		if lcGet(t, dyn, lcConfigMaps, ns, ch.a.Name) != nil {
			t.Fatal("A is still there after a background delete")
		}
		lcWaitObjectGone(t, dyn, lcSecrets, ns, ch.b.Name)
		lcWaitObjectGone(t, dyn, lcConfigMaps, ns, ch.c.Name)
	})

	t.Run("foreground", func(t *testing.T) {
		ch := lcMakeChain(t, cs, ns, "fg", holdA)
		if err := cms.Delete(ctx, ch.a.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
			t.Fatal(err)
		}
		a := lcGet(t, dyn, lcConfigMaps, ns, ch.a.Name)
		if a == nil || a.GetDeletionTimestamp() == nil || !slices.Equal(a.GetFinalizers(), []string{metav1.FinalizerDeleteDependents}) {
			t.Fatalf("A right after a foreground delete: %v", a)
		}
		// The garbage collector deletes B in the foreground too (it has
		// a dependent that blocks it), and C.
		lcWaitDeleting(t, dyn, lcSecrets, ns, ch.b.Name, metav1.FinalizerDeleteDependents)
		lcWaitDeleting(t, dyn, lcConfigMaps, ns, ch.c.Name, holdA)
		if lcGet(t, dyn, lcConfigMaps, ns, ch.a.Name) == nil || lcGet(t, dyn, lcSecrets, ns, ch.b.Name) == nil {
			t.Fatal("A or B went while C was held")
		}
		c, b, a2 := lcDeletionOrder(t, cs, dyn, ns, ch)
		if !(c < b && b < a2) {
			t.Fatalf("deleted at resourceVersions C %d, B %d, A %d; want C, then B, then A", c, b, a2)
		}
	})

	t.Run("orphan", func(t *testing.T) {
		ch := lcMakeChain(t, cs, ns, "orphan")
		if err := cms.Delete(ctx, ch.a.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}); err != nil {
			t.Fatal(err)
		}
		lcCheckOrphaned(t, dyn, ns, ch)
	})

	t.Run("legacy orphanDependents", func(t *testing.T) {
		ch := lcMakeChain(t, cs, ns, "legacy")
		if err := cms.Delete(ctx, ch.a.Name, metav1.DeleteOptions{OrphanDependents: ptr.To(true)}); err != nil {
			t.Fatal(err)
		}
		lcCheckOrphaned(t, dyn, ns, ch)
	})

	t.Run("kubectl", func(t *testing.T) {
		kc := func(args ...string) string { return k.mustKubectl(append([]string{"-n", ns}, args...)...) }
		bg := lcMakeChain(t, cs, ns, "k-bg")
		if out := kc("delete", "configmap", bg.a.Name, "--cascade=background"); strings.TrimSpace(out) != `configmap "k-bg-a" deleted` {
			t.Errorf("kubectl delete --cascade=background printed %q", out)
		}
		lcWaitObjectGone(t, dyn, lcSecrets, ns, bg.b.Name)
		lcWaitObjectGone(t, dyn, lcConfigMaps, ns, bg.c.Name)

		orphan := lcMakeChain(t, cs, ns, "k-orphan")
		kc("delete", "configmap", orphan.a.Name, "--cascade=orphan", "--timeout=60s")
		lcCheckOrphaned(t, dyn, ns, orphan)

		fg := lcMakeChain(t, cs, ns, "k-fg", holdB)
		kc("delete", "configmap", fg.a.Name, "--cascade=foreground", "--wait=false")
		if got := kc("get", "configmap", fg.a.Name, "-o", "jsonpath={.metadata.finalizers}"); got != `["foregroundDeletion"]` {
			t.Errorf("A's finalizers after kubectl delete --cascade=foreground: %s", got)
		}
		lcWaitDeleting(t, dyn, lcSecrets, ns, fg.b.Name, metav1.FinalizerDeleteDependents)
		lcWaitDeleting(t, dyn, lcConfigMaps, ns, fg.c.Name, holdB)
		kc("patch", "configmap", fg.c.Name, "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)
		kc("wait", "--for=delete", "configmap/"+fg.a.Name, "--timeout=60s")
		if lcGet(t, dyn, lcSecrets, ns, fg.b.Name) != nil || lcGet(t, dyn, lcConfigMaps, ns, fg.c.Name) != nil {
			t.Fatal("A went before its dependents")
		}
	})

	t.Run("absent and cluster-scoped owners", func(t *testing.T) {
		real, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "real"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		role, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "lifecycle-owner"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		madeUp := types.UID("5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b")
		dependent := func(name string, owner metav1.OwnerReference) {
			t.Helper()
			if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{owner}}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		dependent("of-ghost", metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "ghost", UID: madeUp})
		dependent("of-another-real", metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "real", UID: madeUp})
		dependent("of-another-namespace", metav1.OwnerReference{APIVersion: "v1", Kind: "Namespace", Name: ns, UID: madeUp})
		dependent("of-cluster-role", metav1.OwnerReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: role.Name, UID: role.UID})
		// A cluster-scoped object cannot be owned by a namespaced one:
		// the garbage collector leaves it alone.
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{
			Name:            "lifecycle-namespaced-owner",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: real.Name, UID: real.UID}},
		}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"of-ghost", "of-another-real", "of-another-namespace"} {
			lcWaitObjectGone(t, dyn, lcConfigMaps, ns, name)
		}
		if lcGet(t, dyn, lcConfigMaps, ns, "real") == nil || lcGet(t, dyn, lcConfigMaps, ns, "of-cluster-role") == nil {
			t.Fatal("an object whose owner exists was collected")
		}
		if _, err := cs.RbacV1().ClusterRoles().Get(ctx, "lifecycle-namespaced-owner", metav1.GetOptions{}); err != nil {
			t.Fatalf("a cluster-scoped object with a namespaced owner: %v", err)
		}
		if err := cs.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		lcWaitObjectGone(t, dyn, lcConfigMaps, ns, "of-cluster-role")
	})
}

// TestLifecycleFinalizerOrders: an object with three finalizers, deleted,
// stays with its deletion timestamp while any is left, whatever order
// they are removed in (by update, JSON patch, merge patch, kubectl);
// each removal is one MODIFIED event and the last a DELETED one. While it
// is being deleted, no finalizer may be added (kube-apiserver's 422), but
// the ones it has may be reordered.
func TestLifecycleFinalizerOrders(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	cs, _ := lcClients(t, k)
	const ns = "fin"
	lcNamespace(t, cs, ns)
	cms := cs.CoreV1().ConfigMaps(ns)
	all := []string{holdA, holdB, holdC}

	removers := map[string]func(name string, current []string, f string) error{
		"update": func(name string, _ []string, f string) error {
			cm, err := cms.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cm.Finalizers = slices.DeleteFunc(cm.Finalizers, func(x string) bool { return x == f })
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
			return err
		},
		"json-patch": func(name string, current []string, f string) error {
			i := slices.Index(current, f)
			patch := fmt.Sprintf(`[{"op":"test","path":"/metadata/finalizers/%d","value":%q},{"op":"remove","path":"/metadata/finalizers/%d"}]`, i, f, i)
			_, err := cms.Patch(ctx, name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{})
			return err
		},
		"merge-patch": func(name string, current []string, f string) error {
			rest, _ := json.Marshal(slices.DeleteFunc(slices.Clone(current), func(x string) bool { return x == f }))
			_, err := cms.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":`+string(rest)+`}}`), metav1.PatchOptions{})
			return err
		},
		"kubectl": func(name string, current []string, f string) error {
			i := slices.Index(current, f)
			out, err := k.kubectl("-n", ns, "patch", "configmap", name, "--type=json", "-p", fmt.Sprintf(`[{"op":"remove","path":"/metadata/finalizers/%d"}]`, i))
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		},
	}
	for _, c := range []struct {
		how   string
		order []string
	}{
		{"update", []string{holdA, holdB, holdC}},
		{"json-patch", []string{holdC, holdA, holdB}},
		{"merge-patch", []string{holdB, holdC, holdA}},
		{"kubectl", []string{holdC, holdB, holdA}},
		{"update", []string{holdB, holdA, holdC}},
		{"json-patch", []string{holdA, holdC, holdB}},
	} {
		name := c.how + "-"
		for _, f := range c.order {
			name += strings.TrimPrefix(f, "example.com/")
		}
		t.Run(name, func(t *testing.T) {
			if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: all}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			deleting, err := cms.Get(ctx, name, metav1.GetOptions{})
			if err != nil || deleting.DeletionTimestamp == nil || !slices.Equal(deleting.Finalizers, all) {
				t.Fatalf("after delete: %v, %+v; want it kept with its finalizers", err, deleting)
			}
			w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: deleting.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()

			// No finalizer may be added now, in any way.
			refused := fmt.Sprintf(`ConfigMap %q is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/x"}`, name)
			added := deleting.DeepCopy()
			added.Finalizers = append(added.Finalizers, "example.com/x")
			if _, err := cms.Update(ctx, added, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || err.Error() != refused {
				t.Errorf("adding a finalizer by update: %v\nwant %s", err, refused)
			}
			_, err = cms.Patch(ctx, name, types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/x"}]`), metav1.PatchOptions{})
			if !apierrors.IsInvalid(err) || err.Error() != refused {
				t.Errorf("adding a finalizer by JSON patch: %v\nwant %s", err, refused)
			}
			swapped := deleting.DeepCopy()
			swapped.Finalizers = []string{holdA, holdB, "example.com/x"}
			if _, err := cms.Update(ctx, swapped, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || err.Error() != refused {
				t.Errorf("replacing a finalizer by another: %v\nwant %s", err, refused)
			}
			// Reordering is no addition.
			reordered := deleting.DeepCopy()
			reordered.Finalizers = []string{holdC, holdB, holdA}
			got, err := cms.Update(ctx, reordered, metav1.UpdateOptions{})
			if err != nil || !slices.Equal(got.Finalizers, reordered.Finalizers) || !got.DeletionTimestamp.Equal(deleting.DeletionTimestamp) {
				t.Fatalf("reordering the finalizers: %v, %+v", err, got)
			}
			if ev := lcNextEvent(t, w, name); ev.Type != watch.Modified || !slices.Equal(lcMeta(t, ev.Object).GetFinalizers(), reordered.Finalizers) {
				t.Fatalf("event after reordering: %s %v", ev.Type, lcMeta(t, ev.Object).GetFinalizers())
			}

			left := slices.Clone(reordered.Finalizers)
			for i, f := range c.order {
				if err := removers[c.how](name, left, f); err != nil {
					t.Fatalf("removing %s: %v", f, err)
				}
				left = slices.DeleteFunc(left, func(x string) bool { return x == f })
				ev := lcNextEvent(t, w, name)
				m := lcMeta(t, ev.Object)
				if i < len(c.order)-1 {
					if ev.Type != watch.Modified || !slices.Equal(m.GetFinalizers(), left) {
						t.Fatalf("after removing %s: %s with finalizers %v, want MODIFIED with %v", f, ev.Type, m.GetFinalizers(), left)
					}
					cm, err := cms.Get(ctx, name, metav1.GetOptions{})
					if err != nil || !cm.DeletionTimestamp.Equal(deleting.DeletionTimestamp) || !slices.Equal(cm.Finalizers, left) {
						t.Fatalf("after removing %s: %v, %+v; want it kept, deletionTimestamp unchanged", f, err, cm)
					}
					continue
				}
				if ev.Type != watch.Deleted || m.GetUID() != deleting.UID {
					t.Fatalf("after removing the last finalizer: %s %s, want DELETED", ev.Type, m.GetName())
				}
				if _, err := cms.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Fatalf("after the last finalizer: %v, want NotFound", err)
				}
			}
		})
	}
}

// lcKind is how many objects of one resource TestLifecycleNamespace*
// creates, from a JSON template with %[1]d for the index and %[2]s for
// the namespace; the first held objects get the finalizers hold.
type lcKind struct {
	gvr      schema.GroupVersionResource
	count    int
	template string
	held     int
	hold     []string
}

var lcCrowd = []lcKind{
	{lcConfigMaps, 60, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%[1]d"},"data":{"k":"v"}}`, 5, []string{holdA}},
	{lcSecrets, 60, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"secret-%[1]d"},"stringData":{"k":"v"}}`, 3, []string{holdB}},
	{schema.GroupVersionResource{Version: "v1", Resource: "services"}, 20,
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc-%[1]d"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}}`, 0, nil},
	{schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, 20,
		`{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa-%[1]d"}}`, 0, nil},
	{lcRoles, 20,
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"role-%[1]d"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get"]}]}`,
		2, []string{holdA, holdB}},
	{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, 20,
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"rb-%[1]d"},
		  "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"role-%[1]d"},
		  "subjects":[{"kind":"ServiceAccount","name":"sa-%[1]d","namespace":"%[2]s"}]}`, 0, nil},
	{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, 20,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod-%[1]d","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`, 0, nil},
	{lcDeploys, 6,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"deploy-%[1]d"},"spec":{"replicas":1,
		  "selector":{"matchLabels":{"deploy":"d%[1]d"}},
		  "template":{"metadata":{"labels":{"deploy":"d%[1]d"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`,
		2, []string{holdB}},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, 3,
		`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"sts-%[1]d"},"spec":{"replicas":0,"serviceName":"svc-%[1]d",
		  "selector":{"matchLabels":{"sts":"s%[1]d"}},
		  "template":{"metadata":{"labels":{"sts":"s%[1]d"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`, 0, nil},
	{schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, 4,
		`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"job-%[1]d"},"spec":{"suspend":true,
		  "template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`, 0, nil},
	{schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}, 4,
		`{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"cron-%[1]d"},"spec":{"suspend":true,"schedule":"*/5 * * * *",
		  "jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}}}`, 0, nil},
	{schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, 10,
		`{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"pvc-%[1]d"},
		  "spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`, 0, nil},
	{schema.GroupVersionResource{Version: "v1", Resource: "podtemplates"}, 10,
		`{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"pt-%[1]d"},"template":{"spec":{"containers":[{"name":"c","image":"nginx"}]}}}`, 0, nil},
	{schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}, 5,
		`{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"ep-%[1]d"},"subsets":[{"addresses":[{"ip":"10.1.0.%[1]d"}],"ports":[{"port":80}]}]}`, 0, nil},
	{schema.GroupVersionResource{Version: "v1", Resource: "events"}, 10,
		`{"apiVersion":"v1","kind":"Event","metadata":{"name":"ev-%[1]d"},"involvedObject":{"kind":"Pod","name":"pod-%[1]d","namespace":"%[2]s"},
		  "reason":"Tested","message":"an event","type":"Normal","source":{"component":"lifecycle-test"}}`, 0, nil},
	{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}, 10,
		`{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"np-%[1]d"},"spec":{"podSelector":{}}}`, 0, nil},
	{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, 5,
		`{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"ing-%[1]d"},
		  "spec":{"defaultBackend":{"service":{"name":"svc-%[1]d","port":{"number":80}}}}}`, 0, nil},
	{schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, 5,
		`{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"pdb-%[1]d"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}}}`, 0, nil},
	{schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, 10,
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"lease-%[1]d"},"spec":{"holderIdentity":"me"}}`, 0, nil},
	{schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}, 5,
		`{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"hpa-%[1]d"},
		  "spec":{"maxReplicas":3,"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"deploy-%[1]d"}}}`, 0, nil},
	{schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}, 2,
		`{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"quota-%[1]d"},"spec":{"hard":{"configmaps":"1000"}}}`, 0, nil},
	{schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}, 2,
		`{"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"limits-%[1]d"},"spec":{"limits":[{"type":"Container","defaultRequest":{"cpu":"10m"}}]}}`, 0, nil},
}

// lcFill creates the objects of kinds in namespace ns and returns how many.
func lcFill(t *testing.T, dyn dynamic.Interface, ns string, kinds []lcKind) int {
	t.Helper()
	n := 0
	for _, kind := range kinds {
		for i := 0; i < kind.count; i++ {
			var obj unstructured.Unstructured
			if err := json.Unmarshal([]byte(fmt.Sprintf(kind.template, i, ns)), &obj.Object); err != nil {
				t.Fatalf("%s template: %v", kind.gvr.Resource, err)
			}
			if i < kind.held {
				obj.SetFinalizers(kind.hold)
			}
			if _, err := dyn.Resource(kind.gvr).Namespace(ns).Create(ctx, &obj, metav1.CreateOptions{}); err != nil {
				t.Fatalf("creating %s %s: %v", kind.gvr.Resource, obj.GetName(), err)
			}
			n++
		}
	}
	return n
}

// lcCheckTerminating checks that a namespace being deleted is Terminating
// and that creating in it is refused with kube-apiserver's 403.
func lcCheckTerminating(t *testing.T, cs kubernetes.Interface, ns string) *corev1.Namespace {
	t.Helper()
	got, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != corev1.NamespaceTerminating || got.DeletionTimestamp == nil || !slices.Equal(got.Spec.Finalizers, []corev1.FinalizerName{corev1.FinalizerKubernetes}) {
		t.Fatalf("namespace being deleted: phase %q deletionTimestamp %v spec.finalizers %v", got.Status.Phase, got.DeletionTimestamp, got.Spec.Finalizers)
	}
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{})
	want := fmt.Sprintf(`configmaps "late" is forbidden: unable to create new content in namespace %s because it is being terminated`, ns)
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("creating in a terminating namespace: %v\nwant 403 %s", err, want)
	}
	// A name still to be generated is named by its prefix, as kube's
	// admission names it.
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "late-"}}, metav1.CreateOptions{})
	if want := strings.Replace(want, `"late"`, `"late-"`, 1); !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("creating with a generated name in a terminating namespace: %v\nwant 403 %s", err, want)
	}
	return got
}

// lcWaitRemaining waits until the namespace controller reports exactly
// the content and finalizers given as remaining (kube's conditions), and
// that it could delete everything else.
func lcWaitRemaining(t *testing.T, cs kubernetes.Interface, ns, content, finalizers string) {
	t.Helper()
	var last []corev1.NamespaceCondition
	deadline := time.Now().Add(lcTimeout)
	for {
		got, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last = got.Status.Conditions
		ok := true
		for typ, want := range map[corev1.NamespaceConditionType]struct{ status, reason, message string }{
			corev1.NamespaceContentRemaining: {"True", "SomeResourcesRemain", "Some resources are remaining: " + content},
			corev1.NamespaceFinalizersRemaining: {"True", "SomeFinalizersRemain",
				"Some content in the namespace has finalizers remaining: " + finalizers},
			corev1.NamespaceDeletionDiscoveryFailure: {"False", "ResourcesDiscovered", "All resources successfully discovered"},
			corev1.NamespaceDeletionGVParsingFailure: {"False", "ParsedGroupVersions", "All legacy kube types successfully parsed"},
			corev1.NamespaceDeletionContentFailure:   {"False", "ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
		} {
			c := lcNamespaceCondition(got, typ)
			if c == nil || string(c.Status) != want.status || c.Reason != want.reason || c.Message != want.message {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespace %s conditions after %v: %+v\nwant content remaining %q, finalizers remaining %q", ns, lcTimeout, last, content, finalizers)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestLifecycleNamespaceDeletionWithHundredsOfObjects: a namespace holding
// a few hundred objects of twenty-odd types (and what the workload
// controllers make of them), some held by finalizers, is deleted: it is
// Terminating at once, refuses new content with kube-apiserver's 403,
// the namespace controller deletes everything it can and reports the
// rest in kube's conditions; once the test removes the finalizers, the
// content and the namespace go, and ClusterIPs are given back.
func TestLifecycleNamespaceDeletionWithHundredsOfObjects(t *testing.T) {
	k := startKapi(t)
	cs, dyn := lcClients(t, k)
	const ns = "crowded"
	lcNamespace(t, cs, ns)
	start := time.Now()
	n := lcFill(t, dyn, ns, lcCrowd)
	t.Logf("created %d objects in %v", n, time.Since(start).Round(time.Millisecond))
	waitFor(t, lcTimeout, "the deployments' pods", func() bool {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "deploy"})
		return err == nil && len(pods.Items) == 6
	})

	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	lcCheckTerminating(t, cs, ns)
	out, err := k.kubectl("-n", ns, "create", "configmap", "late-kubectl")
	if err == nil || !strings.Contains(out, `configmaps "late-kubectl" is forbidden: unable to create new content in namespace crowded because it is being terminated`) {
		t.Errorf("kubectl create in a terminating namespace: %v\n%s", err, out)
	}
	lcWaitRemaining(t, cs, ns,
		"configmaps. has 5 resource instances, deployments.apps has 2 resource instances, roles.rbac.authorization.k8s.io has 2 resource instances, secrets. has 3 resource instances",
		"example.com/a in 7 resource instances, example.com/b in 7 resource instances")

	// Only the held objects are left, each marked for deletion.
	remaining := append(slices.Clone(lcCrowd),
		lcKind{gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}},
		lcKind{gvr: schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}})
	for _, kind := range remaining {
		list, err := dyn.Resource(kind.gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != kind.held {
			t.Errorf("%d %s left, want the %d held", len(list.Items), kind.gvr.Resource, kind.held)
		}
		for _, item := range list.Items {
			if item.GetDeletionTimestamp() == nil || !slices.Equal(item.GetFinalizers(), kind.hold) {
				t.Errorf("%s %s left with deletionTimestamp %v finalizers %v", kind.gvr.Resource, item.GetName(), item.GetDeletionTimestamp(), item.GetFinalizers())
			}
		}
	}

	for _, kind := range lcCrowd {
		for i := 0; i < kind.held; i++ {
			var obj unstructured.Unstructured
			if err := json.Unmarshal([]byte(fmt.Sprintf(kind.template, i, ns)), &obj.Object); err != nil {
				t.Fatal(err)
			}
			lcDropFinalizers(t, dyn, kind.gvr, ns, obj.GetName())
		}
	}
	lcWaitGone(t, "namespace "+ns, func() error {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return err
	})
	// The Services' ClusterIPs are free again: only the kubernetes
	// Service's is held.
	waitFor(t, lcTimeout, "the deleted Services' IPAddresses to go", func() bool {
		list, err := cs.NetworkingV1().IPAddresses().List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 1 && list.Items[0].Name == "10.96.0.1"
	})
	// A namespace of the same name starts empty.
	lcNamespace(t, cs, ns)
	for _, kind := range lcCrowd {
		list, err := dyn.Resource(kind.gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range list.Items {
			if item.GetName() != "kube-root-ca.crt" && item.GetName() != "default" {
				t.Errorf("the new namespace has %s %s", kind.gvr.Resource, item.GetName())
			}
		}
	}
}

// TestLifecycleRestartDuringNamespaceDeletion: kapi stops (gracefully, and
// later with SIGKILL) while a namespace is being deleted and objects in it
// hold finalizers; after each restart the namespace is still Terminating,
// still refuses content, and once the finalizers are removed it goes.
func TestLifecycleRestartDuringNamespaceDeletion(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	cs, dyn := lcClients(t, k)
	const ns = "restarting"
	lcNamespace(t, cs, ns)
	kinds := []lcKind{
		{lcConfigMaps, 30, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%[1]d"}}`, 1, []string{holdA}},
		{lcSecrets, 30, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"secret-%[1]d"}}`, 1, []string{holdB}},
	}
	lcFill(t, dyn, ns, kinds)
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	before := lcCheckTerminating(t, cs, ns)
	lcWaitRemaining(t, cs, ns, "configmaps. has 1 resource instances, secrets. has 1 resource instances",
		"example.com/a in 1 resource instances, example.com/b in 1 resource instances")

	lcRestart(t, k, false)
	cs, dyn = lcClients(t, k)
	after := lcCheckTerminating(t, cs, ns)
	if after.UID != before.UID || !after.DeletionTimestamp.Equal(before.DeletionTimestamp) {
		t.Fatalf("after a restart: uid %s deletionTimestamp %v, want %s %v", after.UID, after.DeletionTimestamp, before.UID, before.DeletionTimestamp)
	}
	lcDropFinalizers(t, dyn, lcConfigMaps, ns, "cm-0")
	lcWaitRemaining(t, cs, ns, "secrets. has 1 resource instances", "example.com/b in 1 resource instances")

	lcRestart(t, k, true)
	cs, dyn = lcClients(t, k)
	lcCheckTerminating(t, cs, ns)
	if lcGet(t, dyn, lcConfigMaps, ns, "cm-0") != nil {
		t.Fatal("a configmap deleted before the crash is back")
	}
	lcDropFinalizers(t, dyn, lcSecrets, ns, "secret-0")
	lcWaitGone(t, "namespace "+ns, func() error {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return err
	})
}

// TestLifecycleRestartDuringForegroundDeletion: kapi crashes (SIGKILL) and
// then restarts gracefully while an owner waits in foreground deletion
// for a chain of dependents whose last is held by a finalizer; the held
// dependent stays, and once its finalizer is removed all go.
func TestLifecycleRestartDuringForegroundDeletion(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	cs, dyn := lcClients(t, k)
	const ns = "foreground"
	lcNamespace(t, cs, ns)
	ch := lcMakeChain(t, cs, ns, "owner", holdA)
	free, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:            "free-dependent",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: ch.a.Name, UID: ch.a.UID, BlockOwnerDeletion: ptr.To(true)}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, ch.a.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatal(err)
	}
	lcWaitDeleting(t, dyn, lcSecrets, ns, ch.b.Name, metav1.FinalizerDeleteDependents)
	lcWaitDeleting(t, dyn, lcConfigMaps, ns, ch.c.Name, holdA)
	lcWaitObjectGone(t, dyn, lcConfigMaps, ns, free.Name)
	if a := lcGet(t, dyn, lcConfigMaps, ns, ch.a.Name); a == nil || a.GetDeletionTimestamp() == nil ||
		!slices.Equal(a.GetFinalizers(), []string{metav1.FinalizerDeleteDependents}) {
		t.Fatalf("the owner while its dependents are held: %v", a)
	}

	// After a restart the garbage collector rebuilds its graph of owners
	// from its watches, and may act on A or B before it has seen their
	// dependents again: it then takes their deletion for finished early
	// (kube-controller-manager's collector does the same when it
	// restarts). What holds: C stays while held, A and B stay marked
	// while they are there, and all three go once C's finalizer does.
	for _, crash := range []bool{true, false} {
		lcRestart(t, k, crash)
		cs, dyn = lcClients(t, k)
		c := lcGet(t, dyn, lcConfigMaps, ns, ch.c.Name)
		if c == nil || c.GetDeletionTimestamp() == nil || !slices.Equal(c.GetFinalizers(), []string{holdA}) {
			t.Fatalf("the held dependent after a restart: %v", c)
		}
		for _, o := range []struct {
			gvr schema.GroupVersionResource
			obj metav1.Object
		}{{lcConfigMaps, ch.a}, {lcSecrets, ch.b}} {
			got := lcGet(t, dyn, o.gvr, ns, o.obj.GetName())
			if got == nil {
				// Gone early (deleted: its creation, long acknowledged,
				// cannot have been lost).
				t.Logf("after a restart, the garbage collector finished the foreground deletion of %s before it saw its dependents again", o.obj.GetName())
				continue
			}
			if got.GetDeletionTimestamp() == nil || !slices.Equal(got.GetFinalizers(), []string{metav1.FinalizerDeleteDependents}) {
				t.Fatalf("%s %s after a restart: deletionTimestamp %v finalizers %v", o.gvr.Resource, got.GetName(), got.GetDeletionTimestamp(), got.GetFinalizers())
			}
		}
	}
	lcDropFinalizers(t, dyn, lcConfigMaps, ns, ch.c.Name)
	lcWaitObjectGone(t, dyn, lcConfigMaps, ns, ch.c.Name)
	lcWaitObjectGone(t, dyn, lcSecrets, ns, ch.b.Name)
	lcWaitObjectGone(t, dyn, lcConfigMaps, ns, ch.a.Name)
}

// TestLifecyclePerClusterObjects: the objects kube-apiserver and
// kube-controller-manager keep in every cluster are there and come back
// when deleted: the default/kubernetes Service (10.96.0.1:443 to kapi's
// port), its Endpoints and EndpointSlice naming --advertise-address and
// kapi's port (repaired every 10 s), and in every namespace a default
// ServiceAccount and a kube-root-ca.crt ConfigMap with the cluster's CA
// (repaired by their controllers, also when changed).
func TestLifecyclePerClusterObjects(t *testing.T) {
	t.Parallel() // spends most of its time waiting for controllers, so it waits beside the other such tests
	k := startKapi(t, "--advertise-address", "192.0.2.10")
	cs, _ := lcClients(t, k)
	port := k.config.Host[strings.LastIndex(k.config.Host, ":")+1:]
	portNumber, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("kapi's address %s: %v", k.config.Host, err)
	}

	serviceOK := func() (types.UID, string) {
		svc, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return "", err.Error()
		}
		want := []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(int32(portNumber))}}
		if svc.Spec.ClusterIP != "10.96.0.1" || !slices.Equal(svc.Spec.ClusterIPs, []string{"10.96.0.1"}) || svc.Spec.Type != corev1.ServiceTypeClusterIP ||
			!slices.Equal(svc.Spec.Ports, want) || svc.Labels["component"] != "apiserver" || svc.Labels["provider"] != "kubernetes" {
			return "", fmt.Sprintf("service %+v %+v", svc.Spec, svc.Labels)
		}
		// Created as kube's controller creates it: it sets the policy.
		if len(svc.ManagedFields) == 0 || !strings.Contains(string(svc.ManagedFields[0].FieldsV1.Raw), `"f:ipFamilyPolicy"`) {
			return "", fmt.Sprintf("service managed fields %+v", svc.ManagedFields)
		}
		return svc.UID, ""
	}
	endpointsOK := func() (types.UID, string) {
		ep, err := cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return "", err.Error()
		}
		if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 1 || ep.Subsets[0].Addresses[0].IP != "192.0.2.10" ||
			!slices.Equal(ep.Subsets[0].Ports, []corev1.EndpointPort{{Name: "https", Port: int32(portNumber), Protocol: corev1.ProtocolTCP}}) {
			return "", fmt.Sprintf("endpoints %+v", ep.Subsets)
		}
		return ep.UID, ""
	}
	sliceOK := func() (types.UID, string) {
		s, err := cs.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return "", err.Error()
		}
		if s.AddressType != discoveryv1.AddressTypeIPv4 || len(s.Endpoints) != 1 || !slices.Equal(s.Endpoints[0].Addresses, []string{"192.0.2.10"}) ||
			len(s.Ports) != 1 || ptr.Deref(s.Ports[0].Name, "") != "https" || ptr.Deref(s.Ports[0].Port, 0) != int32(portNumber) ||
			ptr.Deref(s.Ports[0].Protocol, "") != corev1.ProtocolTCP || s.Labels[discoveryv1.LabelServiceName] != "kubernetes" {
			return "", fmt.Sprintf("endpointslice %+v %+v %+v", s.Endpoints, s.Ports, s.Labels)
		}
		return s.UID, ""
	}
	// waitRepaired waits until check holds of an object other than the
	// one with uid old.
	waitRepaired := func(what string, old types.UID, check func() (types.UID, string)) types.UID {
		t.Helper()
		var uid types.UID
		var problem string
		deadline := time.Now().Add(lcTimeout)
		for {
			uid, problem = check()
			if problem == "" && uid != old {
				return uid
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not (re)created as expected within %v: %s", what, lcTimeout, problem)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	svcUID := waitRepaired("the kubernetes Service", "", serviceOK)
	epUID := waitRepaired("the kubernetes Endpoints", "", endpointsOK)
	sliceUID := waitRepaired("the kubernetes EndpointSlice", "", sliceOK)

	// The server's identity Lease names the advertised address and port,
	// as kube-apiserver's does.
	leases, err := cs.CoordinationV1().Leases("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "apiserver.kubernetes.io/identity=kube-apiserver"})
	if err != nil || len(leases.Items) != 1 || leases.Items[0].Annotations["kubernetes.io/peer-advertise-address"] != "192.0.2.10:"+port {
		t.Errorf("identity leases %+v (%v), want one naming 192.0.2.10:%s", leases, err, port)
	}

	// The endpoints deleted come back at the next repair.
	if err := cs.CoreV1().Endpoints("default").Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.DiscoveryV1().EndpointSlices("default").Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	epUID = waitRepaired("the deleted kubernetes Endpoints", epUID, endpointsOK)
	sliceUID = waitRepaired("the deleted kubernetes EndpointSlice", sliceUID, sliceOK)
	// So does the Service (with the same ClusterIP), and its endpoints,
	// which the endpoints controller deletes with it as in a cluster.
	if err := cs.CoreV1().Services("default").Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRepaired("the deleted kubernetes Service", svcUID, serviceOK)
	waitFor(t, lcTimeout, "the kubernetes Service's endpoints", func() bool {
		_, epProblem := endpointsOK()
		_, sliceProblem := sliceOK()
		return epProblem == "" && sliceProblem == ""
	})

	// Every namespace, old and new, has its default ServiceAccount and
	// the CA bundle.
	lcNamespace(t, cs, "fresh")
	ca := string(k.config.CAData)
	if ca == "" {
		t.Fatal("the kubeconfig has no CA")
	}
	saOK := func(ns string) func() (types.UID, string) {
		return func() (types.UID, string) {
			sa, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			if err != nil {
				return "", err.Error()
			}
			return sa.UID, ""
		}
	}
	caOK := func(ns string) func() (types.UID, string) {
		return func() (types.UID, string) {
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			if err != nil {
				return "", err.Error()
			}
			if len(cm.Data) != 1 || cm.Data["ca.crt"] != ca {
				return "", fmt.Sprintf("kube-root-ca.crt has %d keys, ca.crt of %d bytes", len(cm.Data), len(cm.Data["ca.crt"]))
			}
			return cm.UID, ""
		}
	}
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease", "fresh"} {
		waitRepaired("the default ServiceAccount of "+ns, "", saOK(ns))
		waitRepaired("kube-root-ca.crt in "+ns, "", caOK(ns))
	}
	sa := waitRepaired("the default ServiceAccount", "", saOK("fresh"))
	if err := cs.CoreV1().ServiceAccounts("fresh").Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRepaired("the deleted default ServiceAccount", sa, saOK("fresh"))
	cm := waitRepaired("kube-root-ca.crt", "", caOK("fresh"))
	if err := cs.CoreV1().ConfigMaps("fresh").Delete(ctx, "kube-root-ca.crt", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cm = waitRepaired("the deleted kube-root-ca.crt", cm, caOK("fresh"))
	// A changed bundle is put back (the same object).
	if _, err := cs.CoreV1().ConfigMaps("fresh").Patch(ctx, "kube-root-ca.crt", types.MergePatchType, []byte(`{"data":{"ca.crt":"not a CA"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, lcTimeout, "the changed kube-root-ca.crt to be put back", func() bool {
		uid, problem := caOK("fresh")()
		return problem == "" && uid == cm
	})
}
