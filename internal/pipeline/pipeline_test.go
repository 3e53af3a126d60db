package pipeline_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/internal/admission"
	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/pipeline/pipelinetest"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/resources"
)

// recorder is an admission plugin that records what it was asked, and
// refuses what refuse says.
type recorder struct {
	seen   []string
	refuse func(a *admission.Attributes) error
}

func (r *recorder) Admit(_ context.Context, a *admission.Attributes) error {
	r.seen = append(r.seen, "admit "+string(a.Operation)+" "+a.Resource.Resource)
	if m, ok := a.Object.(interface{ SetLabels(map[string]string) }); ok && a.Operation == admission.Create {
		m.SetLabels(map[string]string{"admitted": "yes"})
	}
	return nil
}

func (r *recorder) Validate(_ context.Context, a *admission.Attributes) error {
	r.seen = append(r.seen, "validate "+string(a.Operation)+" "+a.Resource.Resource)
	if r.refuse != nil {
		return r.refuse(a)
	}
	return nil
}

// newPipeline returns the built-in resources' write pipeline over a fresh
// store, with the default namespace and rec as admission plugin.
func newPipeline(t testing.TB, rec *recorder) *pipeline.Pipeline {
	t.Helper()
	if rec == nil {
		return pipelinetest.New(t, cache.Options{})
	}
	return pipelinetest.New(t, cache.Options{}, rec)
}

func lookup(t *testing.T, p *pipeline.Pipeline, gvr schema.GroupVersionResource) *registry.Store {
	t.Helper()
	store := p.Registry().Snapshot().Lookup(gvr)
	if store == nil {
		t.Fatalf("%v is not served", gvr)
	}
	return store
}

var (
	ctx           = context.Background()
	configmaps    = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces    = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	services      = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	pods          = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	bindings      = schema.GroupVersionResource{Version: "v1", Resource: "bindings"}
	deployments   = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	ipaddresses   = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ipaddresses"}
	configMapMeta = metav1.ObjectMeta{Name: "cm", Namespace: "default"}
)

func TestAdmissionRunsAtItsStages(t *testing.T) {
	rec := &recorder{}
	p := newPipeline(t, rec)
	store := lookup(t, p, configmaps)
	rec.seen = nil
	obj, err := p.Create(ctx, store, &corev1.ConfigMap{ObjectMeta: configMapMeta}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*corev1.ConfigMap).Labels["admitted"]; got != "yes" {
		t.Errorf("mutating admission's change was not stored: labels %v", obj.(*corev1.ConfigMap).Labels)
	}
	update := func(runtime.Object) (runtime.Object, error) {
		return &corev1.ConfigMap{ObjectMeta: configMapMeta, Data: map[string]string{"k": "v"}}, nil
	}
	if _, err := p.Update(ctx, store, "default", "cm", pipeline.Options{}, update); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Delete(ctx, store, "default", "cm", nil, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"admit CREATE configmaps", "validate CREATE configmaps",
		"admit UPDATE configmaps", "validate UPDATE configmaps",
		"admit DELETE configmaps", "validate DELETE configmaps",
	}
	if !slices.Equal(rec.seen, want) {
		t.Errorf("admission calls\n got %q\nwant %q", rec.seen, want)
	}
}

func TestValidatingAdmissionRefusalStoresNothing(t *testing.T) {
	refusal := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "cm", errors.New("no"))
	rec := &recorder{refuse: func(a *admission.Attributes) error {
		if a.Resource == configmaps {
			return refusal
		}
		return nil
	}}
	p := newPipeline(t, rec)
	store := lookup(t, p, configmaps)
	if _, err := p.Create(ctx, store, &corev1.ConfigMap{ObjectMeta: configMapMeta}, pipeline.Options{}); !errors.Is(err, refusal) {
		t.Fatalf("create: %v, want the plugin's refusal", err)
	}
	if _, err := store.Get(ctx, "default", "cm"); !apierrors.IsNotFound(err) {
		t.Fatalf("refused create was stored: %v", err)
	}
}

func TestValidationRunsBeforeValidatingAdmission(t *testing.T) {
	rec := &recorder{}
	p := newPipeline(t, rec)
	rec.seen = nil
	bad := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Not_A_Name", Namespace: "default"}}
	_, err := p.Create(ctx, lookup(t, p, configmaps), bad, pipeline.Options{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("create of an invalid name: %v, want Invalid", err)
	}
	if want := []string{"admit CREATE configmaps"}; !slices.Equal(rec.seen, want) {
		t.Errorf("admission calls %q, want %q", rec.seen, want)
	}
}

func TestNamespaceLifecycle(t *testing.T) {
	p := newPipeline(t, nil)
	store := lookup(t, p, configmaps)
	missing := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "nowhere"}}
	_, err := p.Create(ctx, store, missing, pipeline.Options{})
	if !apierrors.IsNotFound(err) || err.Error() != `namespaces "nowhere" not found` {
		t.Fatalf("create in a missing namespace: %v", err)
	}

	if _, err := p.CreateObject(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "going"}}, "test"); err != nil {
		t.Fatal(err)
	}
	ns, gone, err := p.Delete(ctx, lookup(t, p, namespaces), "", "going", nil, pipeline.Options{})
	if err != nil || gone {
		t.Fatalf("delete namespace: gone %v, err %v; want it kept until emptied", gone, err)
	}
	if phase := ns.(*corev1.Namespace).Status.Phase; phase != corev1.NamespaceTerminating {
		t.Fatalf("deleted namespace phase %q, want Terminating", phase)
	}
	in := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "going"}}
	_, err = p.Create(ctx, store, in, pipeline.Options{})
	want := `configmaps "cm" is forbidden: unable to create new content in namespace going because it is being terminated`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("create in a terminating namespace: %v", err)
	}

	_, _, err = p.Delete(ctx, lookup(t, p, namespaces), "", "default", nil, pipeline.Options{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("delete of namespace default: %v, want Forbidden", err)
	}
}

func TestServiceAllocatesThroughThePipeline(t *testing.T) {
	p := newPipeline(t, nil)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	created, err := p.Create(ctx, lookup(t, p, services), svc, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ip := created.(*corev1.Service).Spec.ClusterIP
	obj, err := lookup(t, p, ipaddresses).Get(ctx, "", ip)
	if err != nil {
		t.Fatalf("the ClusterIP %s has no IPAddress: %v", ip, err)
	}
	address := obj.(*networkingv1.IPAddress)
	if address.UID == "" || len(address.ManagedFields) == 0 || address.Spec.ParentRef.Name != "web" {
		t.Errorf("IPAddress was not written through the pipeline (uid, managed fields, parent): %+v", address)
	}
	if _, _, err := p.Delete(ctx, lookup(t, p, services), "default", "web", nil, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := lookup(t, p, ipaddresses).Get(ctx, "", ip); !apierrors.IsNotFound(err) {
		t.Errorf("IPAddress of a deleted Service: %v, want it released", err)
	}
}

func TestBindingIsAnAction(t *testing.T) {
	p := newPipeline(t, nil)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
	}
	store := lookup(t, p, pods)
	if _, err := p.Create(ctx, store, pod, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}
	if _, err := p.Act(ctx, store, lookup(t, p, bindings), "default", "p", binding, pipeline.Options{Subresource: "binding", Manager: "test"}); err != nil {
		t.Fatal(err)
	}
	obj, _ := store.Get(ctx, "default", "p")
	bound := obj.(*corev1.Pod)
	if bound.Spec.NodeName != "n1" || len(bound.Status.Conditions) != 1 || bound.Status.Conditions[0].Type != corev1.PodScheduled {
		t.Errorf("bound pod: nodeName %q conditions %v", bound.Spec.NodeName, bound.Status.Conditions)
	}
	if _, err := p.Act(ctx, store, lookup(t, p, bindings), "default", "p", binding, pipeline.Options{Subresource: "binding", Manager: "test"}); !apierrors.IsConflict(err) {
		t.Errorf("second binding: %v, want Conflict", err)
	}
}

// TestBehaviourFollowsTheGroup serves a custom "services" resource in
// another group: it must not get the core Service's rules (name rules,
// ClusterIP allocation), which are keyed by group and resource.
func TestBehaviourFollowsTheGroup(t *testing.T) {
	p := newPipeline(t, nil)
	info := &resources.Info{Group: "example.com", Version: "v1", Resource: "services", Singular: "service", Kind: "Service",
		Namespaced: true, Verbs: []string{"create", "get", "list", "watch", "update", "patch", "delete"}}
	if err := p.Registry().Put(registry.Spec{Versions: []*resources.Info{info}, StorageVersion: "v1"}); err != nil {
		t.Fatal(err)
	}
	store := lookup(t, p, info.GroupVersionResource())
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("example.com/v1")
	obj.SetKind("Service")
	obj.SetName("a.dotted.name") // not a DNS-1035 label, as core Services need
	obj.SetNamespace("default")
	created, err := p.Create(ctx, store, obj, pipeline.Options{})
	if err != nil {
		t.Fatalf("create of a custom services object: %v", err)
	}
	if _, found, _ := unstructured.NestedString(created.(*unstructured.Unstructured).Object, "spec", "clusterIP"); found {
		t.Errorf("custom services object got a ClusterIP: %v", created)
	}
}

// TestDeletePreconditionErrors: a delete whose preconditions do not hold
// is kube-apiserver's Conflict: the generic registry's message, naming the
// kind, for most types; the namespace storage's own for namespaces.
func TestDeletePreconditionErrors(t *testing.T) {
	p := newPipeline(t, nil)
	store := lookup(t, p, configmaps)
	obj, err := p.Create(ctx, store, &corev1.ConfigMap{ObjectMeta: configMapMeta}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cm := obj.(*corev1.ConfigMap)
	wrong := types.UID("wrong")
	stale := "1"
	for _, c := range []struct {
		pre  metav1.Preconditions
		want string
	}{
		{metav1.Preconditions{UID: &wrong}, `Operation cannot be fulfilled on ConfigMap "cm": the UID in the precondition (wrong) does not match the UID in record (` +
			string(cm.UID) + `). The object might have been deleted and then recreated`},
		{metav1.Preconditions{ResourceVersion: &stale}, `Operation cannot be fulfilled on ConfigMap "cm": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (` +
			cm.ResourceVersion + `). The object might have been modified`},
	} {
		_, _, err := p.Delete(ctx, store, "default", "cm", &metav1.DeleteOptions{Preconditions: &c.pre}, pipeline.Options{})
		if !apierrors.IsConflict(err) || err.Error() != c.want {
			t.Errorf("delete with %+v: %v\nwant %s", c.pre, err, c.want)
		}
		if status := err.(apierrors.APIStatus).Status(); status.Details == nil || status.Details.Kind != "ConfigMap" {
			t.Errorf("details %+v, want kind ConfigMap", status.Details)
		}
	}

	obj, err = p.CreateObject(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "held"}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	ns := obj.(*corev1.Namespace)
	_, _, err = p.Delete(ctx, lookup(t, p, namespaces), "", "held", &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrong}}, pipeline.Options{})
	want := `Operation cannot be fulfilled on namespaces "held": Precondition failed: UID in precondition: wrong, UID in object meta: ` + string(ns.UID)
	if !apierrors.IsConflict(err) || err.Error() != want {
		t.Errorf("namespace delete with a wrong UID: %v\nwant %s", err, want)
	}
}

// TestDeleteMarkMovesGeneration: an object with a generation that a delete
// keeps (it has finalizers) gets its generation moved on, once, as kube's
// generic registry marks it.
func TestDeleteMarkMovesGeneration(t *testing.T) {
	p := newPipeline(t, nil)
	store := lookup(t, p, deployments)
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "default", Finalizers: []string{"example.com/hold"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}},
			},
		},
	}
	if _, err := p.Create(ctx, store, d, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the second delete finds it marked already
		obj, gone, err := p.Delete(ctx, store, "default", "d", nil, pipeline.Options{})
		if err != nil || gone {
			t.Fatalf("delete %d: gone %v, %v", i, gone, err)
		}
		if m := obj.(*appsv1.Deployment).ObjectMeta; m.Generation != 2 || m.DeletionTimestamp == nil {
			t.Fatalf("delete %d: generation %d, deletionTimestamp %v; want 2 and set", i, m.Generation, m.DeletionTimestamp)
		}
	}
}

// dropFinalizer returns an update of a ConfigMap that removes finalizer f.
func dropFinalizer(f string) registry.UpdateFunc {
	return func(cur runtime.Object) (runtime.Object, error) {
		cm := cur.DeepCopyObject().(*corev1.ConfigMap)
		cm.Finalizers = slices.DeleteFunc(cm.Finalizers, func(x string) bool { return x == f })
		return cm, nil
	}
}

// TestUpdateRemovingLastFinalizerDeletes: the update that removes the last
// finalizer of an object being deleted deletes it without storing it
// first: it answers the object it would have stored, at the version it
// replaced.
func TestUpdateRemovingLastFinalizerDeletes(t *testing.T) {
	p := newPipeline(t, nil)
	store := lookup(t, p, configmaps)
	held := configMapMeta
	held.Finalizers = []string{"example.com/a", "example.com/b"}
	if _, err := p.Create(ctx, store, &corev1.ConfigMap{ObjectMeta: held}, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	obj, gone, err := p.Delete(ctx, store, "default", "cm", nil, pipeline.Options{})
	if err != nil || gone {
		t.Fatalf("delete: gone %v, %v", gone, err)
	}
	one, err := p.Update(ctx, store, "default", "cm", pipeline.Options{}, dropFinalizer("example.com/a"))
	if err != nil || one.(*corev1.ConfigMap).DeletionTimestamp == nil || one.(*corev1.ConfigMap).ResourceVersion == obj.(*corev1.ConfigMap).ResourceVersion {
		t.Fatalf("removing one of two finalizers: %v, %+v; want it stored", err, one)
	}
	last, err := p.Update(ctx, store, "default", "cm", pipeline.Options{}, dropFinalizer("example.com/b"))
	if err != nil {
		t.Fatal(err)
	}
	if m := last.(*corev1.ConfigMap).ObjectMeta; len(m.Finalizers) != 0 || m.DeletionTimestamp == nil || m.ResourceVersion != one.(*corev1.ConfigMap).ResourceVersion {
		t.Fatalf("removing the last finalizer answered %+v; want no finalizers, at version %s", m, one.(*corev1.ConfigMap).ResourceVersion)
	}
	if _, err := store.Get(ctx, "default", "cm"); !apierrors.IsNotFound(err) {
		t.Fatalf("after the last finalizer: %v, want NotFound", err)
	}
}

// TestUpdateUndoesTheHooksAllocations: what a type's BeforeUpdate hook
// allocates is undone when the update is not stored (validating admission
// refuses it, or it is a dry run) and kept once it is, when AfterUpdate
// runs with the objects before and after it.
func TestUpdateUndoesTheHooksAllocations(t *testing.T) {
	rec := &recorder{}
	p := newPipeline(t, rec)
	store := lookup(t, p, configmaps)
	backend := store.Backend()
	var allocated, undone int
	var after []string
	spec := registry.Spec{StorageVersion: backend.StorageVersion, Strategy: backend.Strategy, Hooks: registry.Hooks{
		BeforeUpdate: func(context.Context, runtime.Object, runtime.Object, bool) (func(), error) {
			allocated++
			return func() { undone++ }, nil
		},
		AfterUpdate: func(_ context.Context, old, updated runtime.Object) {
			after = append(after, old.(*corev1.ConfigMap).Data["v"]+">"+updated.(*corev1.ConfigMap).Data["v"])
		},
	}}
	for _, s := range backend.Stores {
		spec.Versions = append(spec.Versions, s.Info)
	}
	if err := p.Registry().Put(spec); err != nil {
		t.Fatal(err)
	}
	if err := p.Registry().WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	store = lookup(t, p, configmaps)
	if _, err := p.Create(ctx, store, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default"}, Data: map[string]string{"v": "1"}}, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	update := func(v string, opts pipeline.Options) error {
		_, err := p.Update(ctx, store, "default", "cm", opts, func(current runtime.Object) (runtime.Object, error) {
			next := current.DeepCopyObject().(*corev1.ConfigMap)
			next.Data["v"] = v
			return next, nil
		})
		return err
	}

	refused := errors.New("refused")
	rec.refuse = func(a *admission.Attributes) error {
		if a.Operation == admission.Update {
			return refused
		}
		return nil
	}
	if err := update("2", pipeline.Options{}); !errors.Is(err, refused) {
		t.Fatalf("a refused update: %v", err)
	}
	if allocated != 1 || undone != 1 || len(after) != 0 {
		t.Errorf("after a refused update: %d allocated, %d undone, after-update hooks %v; want 1, 1, none", allocated, undone, after)
	}
	rec.refuse = nil
	if err := update("3", pipeline.Options{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if err := update("4", pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	if allocated != 3 || undone != 2 || !slices.Equal(after, []string{"1>4"}) {
		t.Errorf("after a dry run and an update: %d allocated, %d undone, after-update hooks %v; want 3, 2, [1>4]", allocated, undone, after)
	}
}

// TestDeleteMarksAnObjectGivenAFinalizerMeanwhile: a finalizer added between
// the delete's read (no finalizers then) and its removal of the object
// keeps the object: the delete starts again from the object as it is now
// and marks it, instead of removing it or answering a conflict the client
// did not ask for with preconditions.
func TestDeleteMarksAnObjectGivenAFinalizerMeanwhile(t *testing.T) {
	var p *pipeline.Pipeline
	var added bool
	rec := &recorder{refuse: func(a *admission.Attributes) error {
		if a.Operation != admission.Delete || added {
			return nil
		}
		added = true
		_, err := p.Update(ctx, lookup(t, p, configmaps), "default", "cm", pipeline.Options{}, func(cur runtime.Object) (runtime.Object, error) {
			cm := cur.DeepCopyObject().(*corev1.ConfigMap)
			cm.Finalizers = append(cm.Finalizers, "example.com/late")
			return cm, nil
		})
		return err
	}}
	p = newPipeline(t, rec)
	store := lookup(t, p, configmaps)
	if _, err := p.Create(ctx, store, &corev1.ConfigMap{ObjectMeta: configMapMeta}, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	obj, gone, err := p.Delete(ctx, store, "default", "cm", nil, pipeline.Options{})
	if err != nil || gone {
		t.Fatalf("delete: gone %v, %v; want the object kept, marked", gone, err)
	}
	if m := obj.(*corev1.ConfigMap).ObjectMeta; m.DeletionTimestamp == nil || !slices.Equal(m.Finalizers, []string{"example.com/late"}) {
		t.Fatalf("delete answered %+v; want the late finalizer and a deletion timestamp", m)
	}
	stored, err := store.Get(ctx, "default", "cm")
	if err != nil || stored.(*corev1.ConfigMap).DeletionTimestamp == nil {
		t.Fatalf("stored: %v, %v; want it marked", stored, err)
	}
}
