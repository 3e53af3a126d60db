package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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

// TestLifecycleDeleteCollectionAnswersWhatItDeleted: a deletecollection
// answers the list of the objects it deleted, in the representation asked
// for (JSON and protobuf, large and gzipped too), and with a limit it
// deletes only that page of the list, as kube-apiserver does.
func TestLifecycleDeleteCollectionAnswersWhatItDeleted(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	cs, _ := lcClients(t, k)
	lcNamespace(t, cs, "dcl")
	cms := cs.CoreV1().ConfigMaps("dcl")
	const n = 300 // the whole answer past kube's gzip threshold
	for i := range n {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i), Labels: map[string]string{"batch": "x"}},
			Data:       map[string]string{"v": strings.Repeat("x", 1000)},
		}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deleteCollection := func(contentType string, limit int) *corev1.ConfigMapList {
		t.Helper()
		cfg := rest.CopyConfig(k.config)
		cfg.ContentType = contentType
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		req := client.CoreV1().RESTClient().Delete().Namespace("dcl").Resource("configmaps").Param("labelSelector", "batch=x")
		if limit > 0 {
			req = req.Param("limit", strconv.Itoa(limit))
		}
		list := &corev1.ConfigMapList{}
		if err := req.Do(ctx).Into(list); err != nil {
			t.Fatalf("deletecollection in %s: %v", contentType, err)
		}
		return list
	}
	left := func() int {
		t.Helper()
		list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "batch=x"})
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Items)
	}

	page := deleteCollection(runtime.ContentTypeJSON, 2)
	if len(page.Items) != 2 || page.Items[0].Name != "cm-000" || page.Items[1].Name != "cm-001" || page.ResourceVersion == "" {
		t.Fatalf("deletecollection with limit 2 answered %d items (rv %q)", len(page.Items), page.ResourceVersion)
	}
	if got := left(); got != n-2 {
		t.Fatalf("deletecollection with limit 2 left %d of %d", got, n)
	}
	remaining := deleteCollection(runtime.ContentTypeProtobuf, 0)
	if len(remaining.Items) != n-2 || remaining.Items[0].Name != "cm-002" || remaining.Items[0].Data["v"] != strings.Repeat("x", 1000) {
		t.Fatalf("deletecollection in protobuf answered %d items, want %d", len(remaining.Items), n-2)
	}
	if got := left(); got != 0 {
		t.Fatalf("deletecollection left %d", got)
	}

	// As a list's: a Table when asked for one, and a representation the
	// client cannot take refused before anything is deleted.
	for _, name := range []string{"t1", "t2", "t3"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"batch": "y"}}}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	path := "/api/v1/namespaces/dcl/configmaps?labelSelector=batch%3Dy"
	resp, _ := rawDo(t, k, "DELETE", path, "", "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", nil)
	if resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("deletecollection answered as a protobuf Table: %d, want 406", resp.StatusCode)
	}
	if list, _ := cms.List(ctx, metav1.ListOptions{LabelSelector: "batch=y"}); len(list.Items) != 3 {
		t.Fatalf("a refused deletecollection deleted: %d of 3 left", len(list.Items))
	}
	resp, data := rawDo(t, k, "DELETE", path+"&limit=2", "", "application/json;as=Table;v=v1;g=meta.k8s.io", nil)
	var table metav1.Table
	if err := json.Unmarshal(data, &table); err != nil || resp.StatusCode != http.StatusOK || table.Kind != "Table" || len(table.Rows) != 2 {
		t.Fatalf("deletecollection as a Table: %d, %v, %s", resp.StatusCode, err, data)
	}
	if table.Continue == "" || table.RemainingItemCount != nil {
		// A selector leaves the count out, as on a list.
		t.Errorf("a limited deletecollection's Table: continue %q, remaining %v", table.Continue, table.RemainingItemCount)
	}
	// t3 is left, and two more.
	for _, name := range []string{"u1", "u2"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	resp, data = rawDo(t, k, "DELETE", "/api/v1/namespaces/dcl/configmaps?limit=1", "", "application/json", nil)
	var cmList corev1.ConfigMapList
	if err := json.Unmarshal(data, &cmList); err != nil || resp.StatusCode != http.StatusOK || len(cmList.Items) != 1 {
		t.Fatalf("deletecollection of one: %d, %v, %s", resp.StatusCode, err, data)
	}
	if cmList.RemainingItemCount == nil || *cmList.RemainingItemCount != 2 {
		t.Errorf("a limited deletecollection without a selector: remainingItemCount %v, want 2", cmList.RemainingItemCount)
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
