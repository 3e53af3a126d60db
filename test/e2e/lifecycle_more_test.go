package e2e

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLifecycleDeleteCollection: deletecollection deletes what its label
// and field selectors pick, keeping the objects that have finalizers
// (marked), leaving the rest, and deleting nothing under dry run.
func TestLifecycleDeleteCollection(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	cs, _ := lcClients(t, k)
	lcNamespace(t, cs, "dc")
	cms := cs.CoreV1().ConfigMaps("dc")
	for name, labels := range map[string]map[string]string{
		"a": {"tier": "web"}, "b": {"tier": "web"}, "c": {"tier": "db"}, "held": {"tier": "web"},
	} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		if name == "held" {
			cm.Finalizers = []string{"example.com/hold"}
		}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	web := metav1.ListOptions{LabelSelector: "tier=web"}
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}, web); err != nil {
		t.Fatal(err)
	}
	if list, _ := cms.List(ctx, metav1.ListOptions{}); len(list.Items) < 4 {
		t.Fatalf("a dry-run deletecollection deleted: %d left", len(list.Items))
	}
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "tier=web", FieldSelector: "metadata.name!=b"}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a": "gone", "b": "there", "c": "there", "held": "marked"} {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		got := "there"
		switch {
		case apierrors.IsNotFound(err):
			got = "gone"
		case err != nil:
			t.Fatal(err)
		case cm.DeletionTimestamp != nil:
			got = "marked"
		}
		if got != want {
			t.Errorf("configmap %s after deletecollection: %s, want %s", name, got, want)
		}
	}
}

// TestLifecycleOwnerEdgeCases: owners that form a cycle do not block a
// foreground deletion; a cluster-scoped dependent that names a namespaced
// owner is not collected and gets kube's OwnerRefInvalidNamespace event.
func TestLifecycleOwnerEdgeCases(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	cs, _ := lcClients(t, k)
	lcNamespace(t, cs, "edges")
	cms := cs.CoreV1().ConfigMaps("edges")
	x, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	owned := func(owner *corev1.ConfigMap) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, BlockOwnerDeletion: &yes}}
	}
	y, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "y", OwnerReferences: owned(x)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x.OwnerReferences = owned(y)
	if _, err := cms.Update(ctx, x, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	foreground := metav1.DeletePropagationForeground
	if err := cms.Delete(ctx, "x", metav1.DeleteOptions{PropagationPolicy: &foreground}); err != nil {
		t.Fatal(err)
	}
	lcWaitGone(t, "the cycle's y", func() error { _, err := cms.Get(ctx, "y", metav1.GetOptions{}); return err })
	lcWaitGone(t, "the cycle's x", func() error { _, err := cms.Get(ctx, "x", metav1.GetOptions{}); return err })

	owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "namespaced-owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pc := &schedulingv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{Name: "owned-by-a-configmap", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
		}}},
		Value: 10,
	}
	created, err := cs.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, lcTimeout, "the OwnerRefInvalidNamespace event", func() bool {
		events, err := cs.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "reason=OwnerRefInvalidNamespace"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			if e.InvolvedObject.UID == created.UID && e.Type == corev1.EventTypeWarning {
				return true
			}
		}
		return false
	})
	time.Sleep(time.Second)
	if _, err := cs.SchedulingV1().PriorityClasses().Get(ctx, pc.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the cluster-scoped dependent of a namespaced owner: %v, want it kept", err)
	}
}

// TestLifecycleCustomResourceOwners: custom resources take part in
// garbage collection once their CRD is served, as owners (a ConfigMap
// owned by a Widget goes with it) and as dependents (a Widget owned by a
// ConfigMap goes with it, in the foreground too).
func TestLifecycleCustomResourceOwners(t *testing.T) {
	t.Parallel() // spends most of its time waiting for controllers, so it waits beside the other such tests
	k := startKapi(t, onlyLifecycleControllers)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	cs, dyn := lcClients(t, k)
	widgetsIn := dyn.Resource(widgets).Namespace("default")
	owner, err := widgetsIn.Create(ctx, widget("owner", map[string]interface{}{}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owned-by-widget", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "example.com/v1", Kind: "Widget", Name: owner.GetName(), UID: owner.GetUID(),
	}}}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := widgetsIn.Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	lcWaitGone(t, "the configmap owned by a widget", func() error {
		_, err := cs.CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{})
		return err
	})

	parent, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "parent"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	child := widget("child", map[string]interface{}{})
	child.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: parent.Name, UID: parent.UID, BlockOwnerDeletion: &yes}})
	if _, err := widgetsIn.Create(ctx, child, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	foreground := metav1.DeletePropagationForeground
	if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, "parent", metav1.DeleteOptions{PropagationPolicy: &foreground}); err != nil {
		t.Fatal(err)
	}
	lcWaitObjectGone(t, dyn, widgets, "default", "child")
	lcWaitGone(t, "the widget's owner", func() error {
		_, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "parent", metav1.GetOptions{})
		return err
	})
}
