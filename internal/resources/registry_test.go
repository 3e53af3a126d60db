package resources

import (
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func lookup(t *testing.T, r *Registry, group, version, resource string) *Info {
	t.Helper()
	info := r.Lookup(group, version, resource)
	if info == nil {
		t.Fatalf("Lookup(%q, %q, %q) = nil", group, version, resource)
	}
	return info
}

func TestLookup(t *testing.T) {
	r := NewBuiltin()
	tests := []struct {
		group, version, resource string
		kind                     string
		namespaced               bool
	}{
		{"", "v1", "pods", "Pod", true},
		{"", "v1", "configmaps", "ConfigMap", true},
		{"", "v1", "namespaces", "Namespace", false},
		{"", "v1", "nodes", "Node", false},
		{"apps", "v1", "deployments", "Deployment", true},
		{"autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true},
		{"autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true},
		{"rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false},
		{"apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false},
	}
	for _, tc := range tests {
		info := lookup(t, r, tc.group, tc.version, tc.resource)
		if info.Kind != tc.kind || info.Namespaced != tc.namespaced {
			t.Errorf("%s/%s %s: kind %q namespaced %v, want %q %v", tc.group, tc.version, tc.resource, info.Kind, info.Namespaced, tc.kind, tc.namespaced)
		}
		if gvr := info.GroupVersionResource(); gvr.Group != tc.group || gvr.Version != tc.version || gvr.Resource != tc.resource {
			t.Errorf("GroupVersionResource() = %v", gvr)
		}
		if gvk := info.GroupVersionKind(); gvk.Group != tc.group || gvk.Version != tc.version || gvk.Kind != tc.kind {
			t.Errorf("GroupVersionKind() = %v", gvk)
		}
	}

	for _, miss := range [][3]string{
		{"", "v1", "deployments"},          // wrong group
		{"apps", "v1beta1", "deployments"}, // unserved version
		{"", "v1", "pod"},                  // singular
		{"", "v1", "Pods"},                 // case
		{"", "v2", "pods"},
		{"extensions", "v1beta1", "ingresses"},
	} {
		if info := r.Lookup(miss[0], miss[1], miss[2]); info != nil {
			t.Errorf("Lookup(%q, %q, %q) = %s, want nil", miss[0], miss[1], miss[2], info.Kind)
		}
	}
}

func TestGroupsOrder(t *testing.T) {
	r := NewBuiltin()
	groups := r.Groups()
	if len(groups) < 2 {
		t.Fatalf("Groups() has %d groups", len(groups))
	}
	if groups[0].Group != "" {
		t.Errorf("first group %q, want the core group", groups[0].Group)
	}
	if groups[1].Group != "apiregistration.k8s.io" {
		t.Errorf("second group %q, want apiregistration.k8s.io, which the aggregator lists first under /apis", groups[1].Group)
	}
	seen := map[string]bool{}
	for _, g := range groups {
		if seen[g.Group] {
			t.Errorf("group %q listed twice", g.Group)
		}
		seen[g.Group] = true
		if len(g.Versions) == 0 {
			t.Errorf("group %q has no versions", g.Group)
		}
	}

	autoscaling := r.Group("autoscaling")
	if autoscaling == nil {
		t.Fatal("Group(autoscaling) = nil")
	}
	var versions []string
	for _, v := range autoscaling.Versions {
		versions = append(versions, v.Version)
	}
	if strings.Join(versions, ",") != "v2,v1" {
		t.Errorf("autoscaling versions %v, want [v2 v1]", versions)
	}

	if r.Group("nope.example.com") != nil {
		t.Error("Group of an unknown group is not nil")
	}
	if r.Resources("apps", "v1beta2") != nil {
		t.Error("Resources of an unserved version is not nil")
	}
	if r.Resources("nope.example.com", "v1") != nil {
		t.Error("Resources of an unknown group is not nil")
	}
}

func TestResourcesSortedAndConsistent(t *testing.T) {
	r := NewBuiltin()
	for _, g := range r.Groups() {
		for _, v := range g.Versions {
			list := r.Resources(g.Group, v.Version)
			if len(list) == 0 {
				t.Errorf("Resources(%q, %q) is empty", g.Group, v.Version)
			}
			for k, info := range list {
				if k > 0 && list[k-1].Resource >= info.Resource {
					t.Errorf("%s/%s: %q listed after %q", g.Group, v.Version, info.Resource, list[k-1].Resource)
				}
				if info.Group != g.Group || info.Version != v.Version {
					t.Errorf("%s/%s lists %s/%s %s", g.Group, v.Version, info.Group, info.Version, info.Resource)
				}
				if r.Lookup(info.Group, info.Version, info.Resource) != info {
					t.Errorf("Lookup does not find %s/%s %s", info.Group, info.Version, info.Resource)
				}
			}
		}
	}
}

func TestEveryInfoComplete(t *testing.T) {
	r := NewBuiltin()
	n := 0
	for _, g := range r.Groups() {
		for _, v := range g.Versions {
			for _, info := range v.Resources {
				n++
				id := info.Group + "/" + info.Version + " " + info.Resource
				if info.Kind == "" {
					t.Errorf("%s: empty Kind", id)
				}
				if info.Singular == "" {
					t.Errorf("%s: empty Singular", id)
				}
				if len(info.Verbs) == 0 {
					t.Errorf("%s: no verbs", id)
				}
				if info.ValidateName == nil {
					t.Errorf("%s: no name validator", id)
				}
				if info.Resource != strings.ToLower(info.Resource) || info.Singular != strings.ToLower(info.Singular) {
					t.Errorf("%s: resource %q / singular %q not lower case", id, info.Resource, info.Singular)
				}
				for _, s := range info.Subresources {
					if s.Name == "" || len(s.Verbs) == 0 {
						t.Errorf("%s: sub-resource %+v lacks a name or verbs", id, s)
					}
				}
			}
		}
	}
	if n != len(builtinResources) {
		t.Errorf("registry holds %d resources, builtinResources %d", n, len(builtinResources))
	}
}

func TestBehaviour(t *testing.T) {
	r := NewBuiltin()
	tests := []struct {
		resource, group string
		returnsDeleted  bool
		generation      bool
		status          bool
	}{
		{"pods", "", true, true, true},
		{"namespaces", "", true, false, true},
		{"configmaps", "", false, false, false},
		{"services", "", true, false, true},
		{"deployments", "apps", false, true, true},
		{"customresourcedefinitions", "apiextensions.k8s.io", true, true, true},
	}
	for _, tc := range tests {
		info := lookup(t, r, tc.group, "v1", tc.resource)
		if info.ReturnsDeletedObject != tc.returnsDeleted {
			t.Errorf("%s: ReturnsDeletedObject %v, want %v", tc.resource, info.ReturnsDeletedObject, tc.returnsDeleted)
		}
		if info.Generation != tc.generation {
			t.Errorf("%s: Generation %v, want %v", tc.resource, info.Generation, tc.generation)
		}
		if got := info.Subresource("status") != nil; got != tc.status {
			t.Errorf("%s: has status %v, want %v", tc.resource, got, tc.status)
		}
	}
	// scale is served as an autoscaling/v1 Scale; pods/exec connects with
	// PodExecOptions.
	if s := lookup(t, r, "apps", "v1", "deployments").Subresource("scale"); s == nil || s.Kind != "Scale" || s.Group != "autoscaling" {
		t.Errorf("deployments/scale = %+v", s)
	}
	if s := lookup(t, r, "", "v1", "pods").Subresource("exec"); s == nil || s.Kind != "PodExecOptions" {
		t.Errorf("pods/exec = %+v", s)
	}
	if s := lookup(t, r, "", "v1", "pods").Subresource("nope"); s != nil {
		t.Errorf("pods/nope = %+v", s)
	}
}

// TestRegistriesIndependent: NewBuiltin says each registry owns its copies.
func TestRegistriesIndependent(t *testing.T) {
	a, b := NewBuiltin(), NewBuiltin()
	pa, pb := lookup(t, a, "", "v1", "pods"), lookup(t, b, "", "v1", "pods")
	if pa == pb {
		t.Fatal("two registries share one Info")
	}
	pa.Kind = "Changed"
	if pb.Kind != "Pod" {
		t.Fatalf("changing one registry's Kind changed the other's to %q", pb.Kind)
	}
	status := pa.Subresource("status")
	status.Served = false
	defer func() { status.Served = true }()
	if pb.Subresource("status") == nil {
		t.Error("unserving pods/status in one registry unserved it in another")
	}
}

func deployment() *appsv1.Deployment {
	replicas := int32(2)
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "10", Generation: 3,
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "1"},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, ReadyReplicas: 2},
	}
}

func TestPrepareForCreate(t *testing.T) {
	r := NewBuiltin()

	t.Run("deployment", func(t *testing.T) {
		d := deployment()
		d.Generation = 7
		lookup(t, r, "apps", "v1", "deployments").PrepareForCreate(d)
		if d.Generation != 1 {
			t.Errorf("generation %d, want 1", d.Generation)
		}
		if !reflect.DeepEqual(d.Status, appsv1.DeploymentStatus{}) {
			t.Errorf("status not cleared: %+v", d.Status)
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
			t.Errorf("spec changed: %+v", d.Spec)
		}
	})

	t.Run("configmap", func(t *testing.T) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", Generation: 5}, Data: map[string]string{"k": "v"}}
		lookup(t, r, "", "v1", "configmaps").PrepareForCreate(cm)
		if cm.Generation != 0 {
			t.Errorf("generation %d, want 0", cm.Generation)
		}
		if cm.Data["k"] != "v" {
			t.Errorf("data changed: %v", cm.Data)
		}
	})

	t.Run("unstructured CRD", func(t *testing.T) {
		crd := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]interface{}{"name": "foos.example.com", "generation": int64(4)},
			"spec":     map[string]interface{}{"group": "example.com"},
			"status":   map[string]interface{}{"acceptedNames": map[string]interface{}{"kind": "Foo"}},
		}}
		lookup(t, r, "apiextensions.k8s.io", "v1", "customresourcedefinitions").PrepareForCreate(crd)
		if _, ok := crd.Object["status"]; ok {
			t.Errorf("status kept: %v", crd.Object["status"])
		}
		if crd.GetGeneration() != 1 {
			t.Errorf("generation %d, want 1", crd.GetGeneration())
		}
		if crd.Object["spec"] == nil {
			t.Error("spec dropped")
		}
	})
}

func TestPrepareForUpdate(t *testing.T) {
	info := NewBuiltin().Lookup("apps", "v1", "deployments")
	five := int32(5)
	tests := []struct {
		name           string
		change         func(*appsv1.Deployment)
		wantGeneration int64
		skip           string
	}{
		{name: "no change", change: func(*appsv1.Deployment) {}, wantGeneration: 3},
		{name: "replicas changed", change: func(d *appsv1.Deployment) { d.Spec.Replicas = &five }, wantGeneration: 4},
		{name: "template image changed", change: func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:2" }, wantGeneration: 4},
		{name: "only labels changed", change: func(d *appsv1.Deployment) { d.Labels = map[string]string{"app": "web", "tier": "fe"} }, wantGeneration: 3},
		{name: "only status changed", change: func(d *appsv1.Deployment) { d.Status.Replicas = 9 }, wantGeneration: 3},
		{name: "client-sent generation is ignored", change: func(d *appsv1.Deployment) { d.Generation = 42 }, wantGeneration: 3},
		{name: "client-sent generation is ignored with a spec change", change: func(d *appsv1.Deployment) { d.Generation = 42; d.Spec.Paused = true }, wantGeneration: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			old := deployment()
			obj := deployment()
			obj.Status = appsv1.DeploymentStatus{Replicas: 100, Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable}}}
			tc.change(obj)
			info.PrepareForUpdate(obj, old)
			if obj.Generation != tc.wantGeneration {
				t.Errorf("generation %d, want %d", obj.Generation, tc.wantGeneration)
			}
			if !reflect.DeepEqual(obj.Status, deployment().Status) {
				t.Errorf("status %+v, want the old %+v", obj.Status, deployment().Status)
			}
			if !reflect.DeepEqual(old, deployment()) {
				t.Errorf("old object modified: %+v", old)
			}
		})
	}

	t.Run("carried status is a copy", func(t *testing.T) {
		old, obj := deployment(), deployment()
		old.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Reason: "r"}}
		info.PrepareForUpdate(obj, old)
		obj.Status.Conditions[0].Reason = "changed"
		if old.Status.Conditions[0].Reason != "r" {
			t.Error("new object's status aliases the old one's")
		}
	})

	t.Run("configmap keeps generation", func(t *testing.T) {
		cmInfo := NewBuiltin().Lookup("", "v1", "configmaps")
		old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "d", Generation: 2}, Data: map[string]string{"k": "v"}}
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "d", Generation: 9}, Data: map[string]string{"k": "other"}}
		cmInfo.PrepareForUpdate(obj, old)
		if obj.Generation != 2 {
			t.Errorf("generation %d, want the old 2", obj.Generation)
		}
		if obj.Data["k"] != "other" {
			t.Errorf("data %v, want the new data", obj.Data)
		}
	})

	t.Run("unstructured CRD", func(t *testing.T) {
		crdInfo := NewBuiltin().Lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
		mk := func(group string, status interface{}) *unstructured.Unstructured {
			u := &unstructured.Unstructured{Object: map[string]interface{}{
				"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
				"metadata": map[string]interface{}{"name": "foos.example.com", "generation": int64(2), "labels": map[string]interface{}{"x": group}},
				"spec":     map[string]interface{}{"group": group},
			}}
			if status != nil {
				u.Object["status"] = status
			}
			return u
		}
		oldStatus := map[string]interface{}{"acceptedNames": map[string]interface{}{"kind": "Foo"}}
		old := mk("example.com", oldStatus)
		same := mk("example.com", map[string]interface{}{"other": "x"})
		same.SetLabels(map[string]string{"x": "changed"})
		crdInfo.PrepareForUpdate(same, old)
		if same.GetGeneration() != 2 {
			t.Errorf("metadata-only change: generation %d, want 2", same.GetGeneration())
		}
		if !reflect.DeepEqual(same.Object["status"], oldStatus) {
			t.Errorf("status %v, want the old %v", same.Object["status"], oldStatus)
		}
		changed := mk("other.example.com", nil)
		crdInfo.PrepareForUpdate(changed, old)
		if changed.GetGeneration() != 3 {
			t.Errorf("spec change: generation %d, want 3", changed.GetGeneration())
		}
		noStatus := mk("example.com", map[string]interface{}{"x": "y"})
		crdInfo.PrepareForUpdate(noStatus, mk("example.com", nil))
		if _, ok := noStatus.Object["status"]; ok {
			t.Errorf("status %v kept though the old object had none", noStatus.Object["status"])
		}
	})
}

func TestPrepareForStatusUpdate(t *testing.T) {
	info := NewBuiltin().Lookup("apps", "v1", "deployments")
	old := deployment()
	obj := deployment()
	obj.ResourceVersion = "11"
	seven := int32(7)
	obj.Spec.Replicas = &seven
	obj.Spec.Template.Spec.Containers[0].Image = "evil"
	obj.Status = appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 7, UpdatedReplicas: 7}

	out := info.PrepareForStatusUpdate(obj, old)
	d, ok := out.(*appsv1.Deployment)
	if !ok {
		t.Fatalf("PrepareForStatusUpdate returned %T", out)
	}
	if !reflect.DeepEqual(d.Spec, deployment().Spec) {
		t.Errorf("spec %+v, want the old spec", d.Spec)
	}
	if !reflect.DeepEqual(d.Status, obj.Status) {
		t.Errorf("status %+v, want the new %+v", d.Status, obj.Status)
	}
	if d.ResourceVersion != "11" {
		t.Errorf("resourceVersion %q, want the request's 11", d.ResourceVersion)
	}
	if d.Generation != 3 || d.UID != "uid-1" {
		t.Errorf("generation %d uid %q changed", d.Generation, d.UID)
	}
	if !reflect.DeepEqual(old, deployment()) {
		t.Error("old object modified")
	}
	if d == old || d == obj {
		t.Error("result is not a fresh object")
	}
	obj.Status.Replicas = 1
	if d.Status.Replicas != 7 {
		t.Error("result's status aliases the request's")
	}
}

func fieldErrors(errs field.ErrorList) string {
	var s []string
	for _, e := range errs {
		s = append(s, e.Error())
	}
	return strings.Join(s, "; ")
}

func hasError(errs field.ErrorList, path string, typ field.ErrorType, detail string) bool {
	for _, e := range errs {
		if e.Field == path && e.Type == typ && strings.Contains(e.Error(), detail) {
			return true
		}
	}
	return false
}

func TestValidateCreate(t *testing.T) {
	r := NewBuiltin()
	cm := func(name, ns string) runtime.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	}
	nsObj := func(name string) runtime.Object { return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}} }
	tests := []struct {
		name     string
		resource string
		group    string
		obj      runtime.Object
		path     string // empty: valid
		typ      field.ErrorType
	}{
		{name: "configmap ok", resource: "configmaps", obj: cm("my-config.v1", "default")},
		{name: "configmap bad name", resource: "configmaps", obj: cm("Bad_Name", "default"), path: "metadata.name", typ: field.ErrorTypeInvalid},
		{name: "configmap upper case", resource: "configmaps", obj: cm("Config", "default"), path: "metadata.name", typ: field.ErrorTypeInvalid},
		{name: "configmap no name", resource: "configmaps", obj: cm("", "default"), path: "metadata.name", typ: field.ErrorTypeRequired},
		{name: "configmap too long", resource: "configmaps", obj: cm(strings.Repeat("a", 254), "default"), path: "metadata.name", typ: field.ErrorTypeInvalid},
		{name: "configmap without namespace", resource: "configmaps", obj: cm("c", ""), path: "metadata.namespace", typ: field.ErrorTypeRequired},
		{name: "configmap bad namespace", resource: "configmaps", obj: cm("c", "Bad_NS"), path: "metadata.namespace", typ: field.ErrorTypeInvalid},
		{name: "namespace ok", resource: "namespaces", obj: nsObj("team-a")},
		{name: "namespace upper case", resource: "namespaces", obj: nsObj("Team"), path: "metadata.name", typ: field.ErrorTypeInvalid},
		{name: "namespace with a dot", resource: "namespaces", obj: nsObj("team.a"), path: "metadata.name", typ: field.ErrorTypeInvalid},
		{name: "namespace too long", resource: "namespaces", obj: nsObj(strings.Repeat("a", 64)), path: "metadata.name", typ: field.ErrorTypeInvalid},
		{name: "cluster-scoped with namespace", resource: "namespaces",
			obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default"}}, path: "metadata.namespace", typ: field.ErrorTypeForbidden},
		{name: "service must be a DNS-1035 label", resource: "services",
			obj: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "1svc", Namespace: "default"}}, path: "metadata.name", typ: field.ErrorTypeInvalid},
		{name: "clusterrole may contain a colon", resource: "clusterroles", group: "rbac.authorization.k8s.io",
			obj: &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:Controller"}}},
		{name: "clusterrole may not contain a slash", resource: "clusterroles", group: "rbac.authorization.k8s.io",
			obj: &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "a/b"}}, path: "metadata.name", typ: field.ErrorTypeInvalid},
		{name: "bad label", resource: "configmaps",
			obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "d", Labels: map[string]string{"a b": "c"}}}, path: "metadata.labels", typ: field.ErrorTypeInvalid},
		{name: "generated name", resource: "configmaps",
			obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c-x7k2p", GenerateName: "c-", Namespace: "d"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := lookup(t, r, tc.group, "v1", tc.resource).ValidateCreate(tc.obj)
			if tc.path == "" {
				if len(errs) != 0 {
					t.Fatalf("unexpected errors: %s", fieldErrors(errs))
				}
				return
			}
			if !hasError(errs, tc.path, tc.typ, "") {
				t.Fatalf("want a %s error on %s, got: %s", tc.typ, tc.path, fieldErrors(errs))
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	info := NewBuiltin().Lookup("", "v1", "configmaps")
	base := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: "c", Namespace: "default", UID: "uid-1", ResourceVersion: "5",
			CreationTimestamp: metav1.Unix(1000, 0),
		}}
	}
	tests := []struct {
		name   string
		change func(*corev1.ConfigMap)
		path   string
		detail string
	}{
		{name: "unchanged", change: func(*corev1.ConfigMap) {}},
		{name: "labels changed", change: func(c *corev1.ConfigMap) { c.Labels = map[string]string{"a": "b"} }},
		{name: "uid changed", change: func(c *corev1.ConfigMap) { c.UID = types.UID("uid-2") }, path: "metadata.uid", detail: "field is immutable"},
		{name: "name changed", change: func(c *corev1.ConfigMap) { c.Name = "d" }, path: "metadata.name", detail: "field is immutable"},
		{name: "namespace changed", change: func(c *corev1.ConfigMap) { c.Namespace = "other" }, path: "metadata.namespace", detail: "field is immutable"},
		{name: "creationTimestamp changed", change: func(c *corev1.ConfigMap) { c.CreationTimestamp = metav1.Unix(2000, 0) }, path: "metadata.creationTimestamp", detail: "field is immutable"},
		{name: "bad new label", change: func(c *corev1.ConfigMap) { c.Labels = map[string]string{"a b": "c"} }, path: "metadata.labels", detail: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old, obj := base(), base()
			tc.change(obj)
			errs := info.ValidateUpdate(obj, old)
			if tc.path == "" {
				if len(errs) != 0 {
					t.Fatalf("unexpected errors: %s", fieldErrors(errs))
				}
				return
			}
			if !hasError(errs, tc.path, field.ErrorTypeInvalid, tc.detail) {
				t.Fatalf("want an invalid %s (%q), got: %s", tc.path, tc.detail, fieldErrors(errs))
			}
		})
	}
}

func TestValidateNonObject(t *testing.T) {
	info := NewBuiltin().Lookup("", "v1", "configmaps")
	var notAnObject runtime.Object = &metav1.Status{}
	if errs := info.ValidateCreate(notAnObject); len(errs) == 0 || errs[0].Type != field.ErrorTypeInternal {
		t.Errorf("ValidateCreate(Status) = %v, want an internal error", errs)
	}
}

// TestPrintsTable: the endpoints kube-apiserver prints Tables of.
func TestPrintsTable(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	claims := schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceclaims"}
	for _, c := range []struct {
		gr   schema.GroupResource
		sub  string
		want bool
	}{
		{pods, "", true}, {pods, "status", true}, {pods, "log", false}, {pods, "ephemeralcontainers", false},
		{schema.GroupResource{Group: "apps", Resource: "deployments"}, "scale", true},
		{claims, "", true}, {claims, "status", false},
		{schema.GroupResource{Group: "apiregistration.k8s.io", Resource: "apiservices"}, "status", false},
	} {
		if got := PrintsTable(c.gr, c.sub); got != c.want {
			t.Errorf("%s/%s: %v, want %v", c.gr, c.sub, got, c.want)
		}
	}
}
