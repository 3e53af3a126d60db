package e2e

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// widgetsCRD is a namespaced CRD with status and scale sub-resources,
// printer columns, defaults, an enum, a CEL rule and a transition rule.
const widgetsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd], categories: [all]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - {rule: "self.size <= 10", message: "size must be at most 10"}
            properties:
              size: {type: integer, default: 3}
              replicas: {type: integer}
              color: {type: string, enum: [red, blue]}
              owner:
                type: string
                x-kubernetes-validations:
                - {rule: "self == oldSelf", message: "owner is immutable"}
          status:
            type: object
            properties:
              replicas: {type: integer}
`

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// createCRD applies a CRD and waits until its resources are served.
func createCRD(t *testing.T, k *kapi, manifest, resource string) {
	t.Helper()
	apply(t, k, manifest)
	waitFor(t, 10*time.Second, resource+" to be established", func() bool {
		out, _ := k.kubectl("get", "crd", resource, "-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`)
		return out == "True"
	})
	waitFor(t, 10*time.Second, resource+" to be served", func() bool {
		_, err := k.kubectl("get", strings.SplitN(resource, ".", 2)[0])
		return err == nil
	})
}

func dynamicClient(t *testing.T, k *kapi) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(k.config)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func widget(name string, spec map[string]interface{}) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]interface{}{"name": name},
		"spec":     spec,
	}}
}

// TestCustomResourcesServed: a CRD's resources are served with discovery,
// defaults, pruning, schema and CEL validation, printer columns and the
// status and scale sub-resources, as kube-apiserver serves them.
func TestCustomResourcesServed(t *testing.T) {
	k := startKapi(t)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	if out := k.mustKubectl("get", "crd", "widgets.example.com", "-o",
		`jsonpath={.status.acceptedNames.kind} {.status.storedVersions} {.status.conditions[?(@.type=="NamesAccepted")].status}`); out != `Widget ["v1"] True` {
		t.Errorf("CRD status = %q", out)
	}
	if out := k.mustKubectl("api-resources", "--api-group=example.com", "--no-headers"); !strings.Contains(out, "widgets") || !strings.Contains(out, "wd") {
		t.Errorf("kubectl api-resources does not list widgets with their short name:\n%s", out)
	}
	if out := k.mustKubectl("get", "apiservice", "v1.example.com", "-o", "jsonpath={.spec.groupPriorityMinimum}/{.spec.versionPriority}"); out != "1000/100" {
		t.Errorf("the CRD's APIService priorities = %s, want 1000/100", out)
	}

	d := dynamicClient(t, k).Resource(widgets).Namespace("default")
	w, err := d.Create(ctx, widget("w1", map[string]interface{}{"color": "red", "replicas": int64(2)}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size"); size != 3 || w.GetGeneration() != 1 {
		t.Errorf("created widget: size %d generation %d, want the default 3 and generation 1", size, w.GetGeneration())
	}

	// Unknown fields: pruned with a warning (Warn), refused (Strict).
	warnings := &warningRecorder{}
	warnCfg := rest.CopyConfig(k.config)
	warnCfg.WarningHandler = warnings
	warnClient, _ := dynamic.NewForConfig(warnCfg)
	w2, err := warnClient.Resource(widgets).Namespace("default").Create(ctx,
		widget("w2", map[string]interface{}{"bogus": "x"}), metav1.CreateOptions{FieldValidation: "Warn"})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(w2.Object, "spec", "bogus"); found {
		t.Errorf("unknown field spec.bogus was stored: %v", w2.Object["spec"])
	}
	if got := warnings.all(); len(got) != 1 || got[0] != `unknown field "spec.bogus"` {
		t.Errorf("warnings = %q, want the unknown field", got)
	}
	_, err = d.Create(ctx, widget("w3", map[string]interface{}{"bogus": "x"}), metav1.CreateOptions{FieldValidation: "Strict"})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `strict decoding error: unknown field "spec.bogus"`) {
		t.Errorf("strict create with an unknown field: %v, want a 400 naming it", err)
	}

	// Schema and CEL validation.
	_, err = d.Create(ctx, widget("w4", map[string]interface{}{"color": "green"}), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.color: Unsupported value: "green": supported values: "red", "blue"`) {
		t.Errorf("create with a color outside the enum: %v", err)
	}
	_, err = d.Create(ctx, widget("w5", map[string]interface{}{"size": int64(11)}), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "size must be at most 10") {
		t.Errorf("create breaking a CEL rule: %v", err)
	}
	owned, err := d.Create(ctx, widget("w6", map[string]interface{}{"owner": "ann"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unstructured.SetNestedField(owned.Object, "bob", "spec", "owner")
	if _, err := d.Update(ctx, owned, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "owner is immutable") {
		t.Errorf("update breaking a transition rule: %v", err)
	}

	// Printer columns through kubectl.
	out := k.mustKubectl("get", "widgets")
	if !hasRow(out, "w1 ", "3", "red") || !strings.HasPrefix(out, "NAME") || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "COLOR") {
		t.Errorf("kubectl get widgets:\n%s", out)
	}
	if out := k.mustKubectl("get", "all", "-o", "name"); !strings.Contains(out, "widget.example.com/w1") {
		t.Errorf("kubectl get all does not include the widgets (category all):\n%s", out)
	}

	// Scale and status sub-resources.
	k.mustKubectl("scale", "widget", "w1", "--replicas=5")
	k.mustKubectl("patch", "widget", "w1", "--subresource=status", "--type=merge", "-p", `{"status":{"replicas":4},"spec":{"replicas":9}}`)
	w, err = d.Get(ctx, "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	replicas, _, _ := unstructured.NestedInt64(w.Object, "spec", "replicas")
	status, _, _ := unstructured.NestedInt64(w.Object, "status", "replicas")
	if replicas != 5 || status != 4 || w.GetGeneration() != 2 {
		t.Errorf("after scale to 5 and a status write: spec.replicas %d, status.replicas %d, generation %d; want 5, 4, 2",
			replicas, status, w.GetGeneration())
	}
}

// listWidgets lists every widget.
func listWidgets(t *testing.T, client dynamic.Interface) *unstructured.UnstructuredList {
	t.Helper()
	l, err := client.Resource(widgets).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestCustomResourceWatchAndCleanup: an informer on custom resources sees
// their events; deleting the CRD deletes every custom resource, then the
// CRD, and its resources are no longer served.
func TestCustomResourceWatchAndCleanup(t *testing.T) {
	t.Parallel() // spends most of its time waiting for controllers, so it waits beside the other such tests
	k := startKapi(t)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	client := dynamicClient(t, k)

	factory := dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
	informer := factory.ForResource(widgets).Informer()
	var mu sync.Mutex
	added := 0
	informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(interface{}) { mu.Lock(); added++; mu.Unlock() }})
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	cache.WaitForCacheSync(stop, informer.HasSynced)

	const n = 200
	for i := 0; i < n; i++ {
		ns := []string{"default", "kube-public"}[i%2]
		if _, err := client.Resource(widgets).Namespace(ns).Create(ctx, widget(fmt.Sprintf("w%03d", i), map[string]interface{}{}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "the informer to see every widget", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return added == n
	})

	// A change of the CRD ends the watches on its resources, as in
	// kube-apiserver; the informer watches again and misses nothing.
	k.mustKubectl("patch", "crd", "widgets.example.com", "--type=json", "-p",
		`[{"op":"add","path":"/spec/versions/0/additionalPrinterColumns/-","value":{"name":"Owner","type":"string","jsonPath":".spec.owner"}}]`)
	waitFor(t, 10*time.Second, "the new column to be served", func() bool {
		out, _ := k.kubectl("get", "widgets", "w000")
		return strings.Contains(out, "OWNER")
	})
	if _, err := client.Resource(widgets).Namespace("default").Create(ctx, widget("late", map[string]interface{}{}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the informer to see a widget made after the CRD changed", func() bool {
		_, exists, _ := informer.GetStore().GetByKey("default/late")
		return exists
	})

	// A watch open as the CRD goes sees its widgets deleted before it
	// ends, as in kube-apiserver (kapi ended it as the CRD began to
	// terminate).
	w := openWatch(t, k, "/apis/example.com/v1/widgets?watch=1&resourceVersion="+listWidgets(t, client).GetResourceVersion())
	k.mustKubectl("delete", "crd", "widgets.example.com", "--wait=true", "--timeout=60s")
	if _, err := k.kubectl("get", "crd", "widgets.example.com"); err == nil {
		t.Error("the CRD is still there after kubectl delete --wait")
	}
	deleted := map[string]bool{}
	for timeout := time.After(20 * time.Second); len(deleted) < n+1; {
		select {
		case ev, ok := <-w.events:
			if !ok {
				t.Fatalf("the watch ended after %d of %d DELETED events: %v", len(deleted), n+1, w.err)
			}
			if ev.Type == "DELETED" {
				deleted[objName(ev.Object)] = true
			}
		case <-timeout:
			t.Fatalf("%d of %d DELETED events came", len(deleted), n+1)
		}
	}
	waitFor(t, 10*time.Second, "widgets to stop being served", func() bool {
		_, err := client.Resource(widgets).List(ctx, metav1.ListOptions{})
		return apierrors.IsNotFound(err)
	})
	// Recreated, the CRD serves an empty collection: the old widgets went.
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	list, err := client.Resource(widgets).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("after recreating the CRD: %d widgets, %v; want none", len(list.Items), err)
	}
}

// TestClusterScopedCustomResource: a cluster-scoped CRD's resources live
// outside namespaces.
func TestClusterScopedCustomResource(t *testing.T) {
	k := startKapi(t)
	createCRD(t, k, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, "gadgets.example.com")
	gadgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	client := dynamicClient(t, k)
	g := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]interface{}{"name": "g1"},
		"anything": map[string]interface{}{"kept": true},
	}}
	if _, err := client.Resource(gadgets).Create(ctx, g, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := client.Resource(gadgets).Get(ctx, "g1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if kept, _, _ := unstructured.NestedBool(got.Object, "anything", "kept"); !kept || got.GetNamespace() != "" {
		t.Errorf("gadget = %v, want its preserved fields and no namespace", got.Object)
	}
	if _, err := client.Resource(gadgets).Namespace("default").Create(ctx, g, metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("creating a cluster-scoped resource in a namespace: %v, want 404", err)
	}
}

// warningRecorder keeps the warnings a client got.
type warningRecorder struct {
	mu       sync.Mutex
	messages []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, message string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.messages = append(w.messages, message)
}

func (w *warningRecorder) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.messages...)
}

// TestCustomResourceSchemaChanges: kubectl explain reads the CRD's schema
// from OpenAPI; server-side apply merges by the schema's list types and
// refuses fields it does not declare; a default added to the schema
// later shows on objects stored before; and an update that leaves an
// invalid value unchanged is let through (validation ratcheting).
func TestCustomResourceSchemaChanges(t *testing.T) {
	k := startKapi(t)
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: rigs.example.com
spec:
  group: example.com
  names: {plural: rigs, singular: rig, kind: Rig}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              name: {type: string, maxLength: %d, description: "The rig's name."}
              mode: {type: string%s}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [port]
                items:
                  type: object
                  required: [port]
                  properties:
                    port: {type: integer}
                    protocol: {type: string}
`
	createCRD(t, k, fmt.Sprintf(crd, 20, ""), "rigs.example.com")
	if out := k.mustKubectl("explain", "rig.spec.name"); !strings.Contains(out, "The rig's name.") {
		t.Errorf("kubectl explain rig.spec.name:\n%s", out)
	}

	apply := func(manager, manifest string) (string, error) {
		path := t.TempDir() + "/rig.yaml"
		if err := writeFile(path, manifest); err != nil {
			t.Fatal(err)
		}
		return k.kubectl("apply", "--server-side", "--field-manager="+manager, "-f", path)
	}
	if out, err := apply("a", "apiVersion: example.com/v1\nkind: Rig\nmetadata: {name: r1}\nspec:\n  name: long-but-fine\n  ports: [{port: 80, protocol: TCP}]\n"); err != nil {
		t.Fatalf("apply a: %v\n%s", err, out)
	}
	if out, err := apply("b", "apiVersion: example.com/v1\nkind: Rig\nmetadata: {name: r1}\nspec:\n  ports: [{port: 443, protocol: TCP}]\n"); err != nil {
		t.Fatalf("apply b: %v\n%s", err, out)
	}
	if out := k.mustKubectl("get", "rig", "r1", "-o", "jsonpath={.spec.ports[*].port}"); out != "80 443" {
		t.Errorf("ports after two appliers = %q, want both entries of the map list", out)
	}
	if out, err := apply("c", "apiVersion: example.com/v1\nkind: Rig\nmetadata: {name: r1}\nspec: {bogus: 1}\n"); err == nil ||
		!strings.Contains(out, ".spec.bogus: field not declared in schema") {
		t.Errorf("apply of an undeclared field: %v\n%s", err, out)
	}

	// Tighten maxLength and add a default: the stored name (13 characters)
	// is now too long, the stored object has no mode.
	apply2 := fmt.Sprintf(crd, 5, ", default: fast")
	path := t.TempDir() + "/crd.yaml"
	if err := writeFile(path, apply2); err != nil {
		t.Fatal(err)
	}
	k.mustKubectl("apply", "-f", path)
	waitFor(t, 10*time.Second, "the default to show on the stored rig", func() bool {
		out, _ := k.kubectl("get", "rig", "r1", "-o", "jsonpath={.spec.mode}")
		return out == "fast"
	})
	if out, err := k.kubectl("label", "rig", "r1", "touched=yes"); err != nil {
		t.Errorf("an update that keeps the too-long name was refused (no ratcheting): %v\n%s", err, out)
	}
	// The update starts from the object as read (the watch cache's copy,
	// defaulted as it was decoded): the label joins the default.
	if out := k.mustKubectl("get", "rig", "r1", "-o", "jsonpath={.spec.mode},{.metadata.labels.touched}"); out != "fast,yes" {
		t.Errorf("rig after the label update: mode and label %q, want fast,yes", out)
	}
	if out, err := k.kubectl("patch", "rig", "r1", "--type=merge", "-p", `{"spec":{"name":"still-too-long"}}`); err == nil ||
		!strings.Contains(out, "spec.name: Too long") {
		t.Errorf("changing the name to another too-long one: %v\n%s", err, out)
	}
}

// TestCustomResourceConversionWebhook: a CRD with two versions converts
// between them through its conversion webhook (a ConversionReview over
// TLS verified with the CRD's caBundle), both ways, for objects and lists;
// a watch whose object the webhook fails to convert ends with an ERROR
// event.
func TestCustomResourceConversionWebhook(t *testing.T) {
	k := startKapi(t)
	caPEM, serving := servingCertificate(t, "127.0.0.1")
	url, stopWebhook := startConversionWebhook(t, serving)
	createCRD(t, k, fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: boxes.example.com
spec:
  group: example.com
  names: {plural: boxes, singular: box, kind: Box}
  scope: Namespaced
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {url: "%s", caBundle: %s}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {width: {type: integer}}}
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: object, properties: {width: {type: integer}}}}}
`, url, base64.StdEncoding.EncodeToString(caPEM)), "boxes.example.com")

	client := dynamicClient(t, k)
	v1 := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "boxes"}
	v2 := schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "boxes"}
	box := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.com/v1", "kind": "Box", "metadata": map[string]interface{}{"name": "b1"},
		"spec": map[string]interface{}{"width": int64(7)},
	}}
	if _, err := client.Resource(v1).Namespace("default").Create(ctx, box, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := client.Resource(v2).Namespace("default").Get(ctx, "b1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w, _, _ := unstructured.NestedInt64(got.Object, "spec", "size", "width"); w != 7 || got.GetAPIVersion() != "example.com/v2" {
		t.Errorf("v1 box read in v2 = %v, want spec.size.width 7", got.Object)
	}
	box2 := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.com/v2", "kind": "Box", "metadata": map[string]interface{}{"name": "b2"},
		"spec": map[string]interface{}{"size": map[string]interface{}{"width": int64(9)}},
	}}
	if _, err := client.Resource(v2).Namespace("default").Create(ctx, box2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err = client.Resource(v1).Namespace("default").Get(ctx, "b2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w, _, _ := unstructured.NestedInt64(got.Object, "spec", "width"); w != 9 {
		t.Errorf("v2 box read in v1 = %v, want spec.width 9", got.Object)
	}
	list, err := client.Resource(v2).Namespace("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("list in v2: %v, %v", list, err)
	}
	for _, item := range list.Items {
		if _, found, _ := unstructured.NestedInt64(item.Object, "spec", "size", "width"); !found || item.GetAPIVersion() != "example.com/v2" {
			t.Errorf("listed in v2: %v", item.Object)
		}
	}
	checkWatchEndsWhenConversionFails(t, client, v1, v2, list.GetResourceVersion(), stopWebhook)
}

// checkWatchEndsWhenConversionFails: once the webhook is gone, a v2
// watch's next event cannot be converted: it is an ERROR event with the
// webhook's failure, and the watch ends (a client relists), rather than
// an event carrying a Status as the box.
func checkWatchEndsWhenConversionFails(t *testing.T, client dynamic.Interface, v1, v2 schema.GroupVersionResource, rv string, stopWebhook func()) {
	t.Helper()
	w, err := client.Resource(v2).Namespace("default").Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	stopWebhook()
	patch := []byte(`{"metadata":{"labels":{"seen":"yes"}}}`)
	if _, err := client.Resource(v1).Namespace("default").Patch(ctx, "b1", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		status, _ := ev.Object.(*metav1.Status)
		if ev.Type != watch.Error || status == nil || !strings.Contains(status.Message, "conversion webhook") {
			t.Fatalf("v2 watch after the webhook stopped: %s %#v, want an ERROR event", ev.Type, ev.Object)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("no event on the v2 watch")
	}
	select {
	case ev, open := <-w.ResultChan():
		if open {
			t.Errorf("the watch went on after its ERROR event: %s %v", ev.Type, ev.Object)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Error("the watch did not end after its ERROR event")
	}
}

// startConversionWebhook serves the boxes' conversion: v1 spec.width is
// v2 spec.size.width. stop closes it.
func startConversionWebhook(t *testing.T, serving tls.Certificate) (url string, stop func()) {
	t.Helper()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review apiextensionsv1.ConversionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
		for _, raw := range review.Request.Objects {
			var obj map[string]interface{}
			json.Unmarshal(raw.Raw, &obj)
			spec, _ := obj["spec"].(map[string]interface{})
			if spec == nil {
				spec = map[string]interface{}{}
			}
			switch review.Request.DesiredAPIVersion {
			case "example.com/v2":
				if width, ok := spec["width"]; ok {
					spec = map[string]interface{}{"size": map[string]interface{}{"width": width}}
				}
			case "example.com/v1":
				if size, ok := spec["size"].(map[string]interface{}); ok {
					spec = map[string]interface{}{"width": size["width"]}
				}
			}
			obj["spec"] = spec
			obj["apiVersion"] = review.Request.DesiredAPIVersion
			out, _ := json.Marshal(obj)
			resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: out})
		}
		review.Response, review.Request = resp, nil
		writeJSON(w, review)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler, TLSConfig: &tls.Config{Certificates: []tls.Certificate{serving}}}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return "https://" + ln.Addr().String() + "/convert", func() { srv.Close() }
}

// TestCustomResourceSelectableFieldsAndDeprecation: a CRD's
// selectableFields work as field selectors (and others are refused as
// kube-apiserver refuses them), and requests to a deprecated version get
// its deprecation warning.
func TestCustomResourceSelectableFieldsAndDeprecation(t *testing.T) {
	k := startKapi(t)
	createCRD(t, k, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crayons.example.com
spec:
  group: example.com
  names: {plural: crayons, singular: crayon, kind: Crayon}
  scope: Namespaced
  versions:
  - name: v1beta1
    served: true
    storage: false
    deprecated: true
    selectableFields: [{jsonPath: .spec.color}]
    schema:
      openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {color: {type: string}}}}}
  - name: v1
    served: true
    storage: true
    selectableFields: [{jsonPath: .spec.color}]
    schema:
      openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {color: {type: string}}}}}
`, "crayons.example.com")
	for _, c := range [][2]string{{"c1", "red"}, {"c2", "blue"}, {"c3", "red"}} {
		k.mustKubectl("create", "-f", writeTemp(t, fmt.Sprintf("apiVersion: example.com/v1\nkind: Crayon\nmetadata: {name: %s}\nspec: {color: %s}\n", c[0], c[1])))
	}
	if out := k.mustKubectl("get", "crayons.v1.example.com", "--field-selector=spec.color=red", "-o", "name"); out != "crayon.example.com/c1\ncrayon.example.com/c3\n" {
		t.Errorf("crayons with spec.color=red:\n%s", out)
	}
	if out, err := k.kubectl("get", "crayons.v1.example.com", "--field-selector=spec.size=1"); err == nil ||
		!strings.Contains(out, `field label not supported: spec.size`) {
		t.Errorf("a field that is not selectable: %v\n%s", err, out)
	}

	warnings := &warningRecorder{}
	cfg := rest.CopyConfig(k.config)
	cfg.WarningHandler = warnings
	client, _ := dynamic.NewForConfig(cfg)
	beta := schema.GroupVersionResource{Group: "example.com", Version: "v1beta1", Resource: "crayons"}
	if _, err := client.Resource(beta).Namespace("default").Get(ctx, "c1", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := warnings.all(); len(got) != 1 || got[0] != "example.com/v1beta1 Crayon is deprecated; use example.com/v1 Crayon" {
		t.Errorf("warnings = %q", got)
	}
	// As apiextensions' handler, the warning comes whatever the path
	// answers: here a sub-resource the version does not have.
	if _, err := client.Resource(beta).Namespace("default").Get(ctx, "c1", metav1.GetOptions{}, "status"); !apierrors.IsNotFound(err) {
		t.Errorf("the status of a version without it: %v", err)
	}
	if got := warnings.all(); len(got) != 2 || got[1] != got[0] {
		t.Errorf("warnings after a missing sub-resource = %q", got)
	}
}

// writeTemp writes content to a new file and returns its path.
func writeTemp(t *testing.T, content string) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(content)
	f.Close()
	return f.Name()
}

// TestCustomResourceRepresentations: custom resources are served in JSON,
// YAML and CBOR, not protobuf (406), and refuse strategic merge patches
// (415), as kube-apiserver serves them; an invalid CRD gets its
// validation errors.
func TestCustomResourceRepresentations(t *testing.T) {
	k := startKapi(t)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	k.mustKubectl("create", "-f", writeTemp(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {color: red}\n"))
	url := k.config.Host + "/apis/example.com/v1/namespaces/default/widgets/w1"
	do := func(method, accept, contentType, body string) *http.Response {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := k.rawClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for accept, want := range map[string]int{
		"application/json": 200, "application/yaml": 200, "application/cbor": 200,
		"application/vnd.kubernetes.protobuf": 406,
	} {
		if resp := do(http.MethodGet, accept, "", ""); resp.StatusCode != want {
			t.Errorf("GET with Accept %s: %s, want %d", accept, resp.Status, want)
		} else if want == 200 && !strings.HasPrefix(resp.Header.Get("Content-Type"), accept) {
			t.Errorf("GET with Accept %s: Content-Type %s", accept, resp.Header.Get("Content-Type"))
		}
	}
	// Metadata in protobuf, as metadata informers ask for it first; never
	// the objects themselves, nor request bodies.
	for _, as := range []string{"PartialObjectMetadata", "PartialObjectMetadataList"} {
		accept := "application/vnd.kubernetes.protobuf;as=" + as + ";g=meta.k8s.io;v=v1"
		if as == "PartialObjectMetadataList" {
			url = strings.TrimSuffix(url, "/w1")
		}
		if resp := do(http.MethodGet, accept, "", ""); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/vnd.kubernetes.protobuf" {
			t.Errorf("GET with Accept %s: %s %s", accept, resp.Status, resp.Header.Get("Content-Type"))
		}
	}
	if resp := do(http.MethodPost, "", "application/vnd.kubernetes.protobuf", "k8s\x00"); resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("a protobuf body: %s, want 415", resp.Status)
	}
	url += "/w1"
	if resp := do(http.MethodPatch, "", "application/strategic-merge-patch+json", `{"spec":{"color":"blue"}}`); resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("strategic merge patch: %s, want 415", resp.Status)
	}

	out, err := k.kubectl("apply", "-f", writeTemp(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: bads.example.com}
spec:
  group: example.com
  names: {plural: bads, singular: bad, kind: Bad}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-validations: [{rule: "self.nope > 1"}]}
`))
	if err == nil || !strings.Contains(out, "must have exactly one version marked as storage version") || !strings.Contains(out, "undefined field 'nope'") {
		t.Errorf("an invalid CRD: %v\n%s", err, out)
	}
	checkListKindAndBrokenColumn(t, k)
}

// checkListKindAndBrokenColumn: a CRD's listKind names its lists, and a
// printer column whose JSONPath does not parse (the CRD's validation lets
// it through) drops that column and those after it from tables, as in
// kube-apiserver; kapi failed every table of the resource with a 500.
func checkListKindAndBrokenColumn(t *testing.T, k *kapi) {
	createCRD(t, k, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetCollection}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Broken, type: string, jsonPath: ".spec["}
    - {name: After, type: string, jsonPath: .spec.after}
`, "gadgets.example.com")
	k.mustKubectl("create", "-f", writeTemp(t, "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1}\nspec: {size: 3, after: x}\n"))
	for _, path := range []string{"/apis/example.com/v1/namespaces/default/gadgets", "/apis/example.com/v1/namespaces/default/gadgets?limit=1", "/apis/example.com/v1/gadgets"} {
		out := k.mustKubectl("get", "--raw", path)
		if !strings.Contains(out, `"kind":"GadgetCollection"`) || strings.Contains(out, "GadgetList") {
			t.Errorf("GET %s: the list's kind is not the CRD's listKind:\n%s", path, out)
		}
	}
	out := k.mustKubectl("get", "gadgets")
	if !strings.Contains(out, "SIZE") || strings.Contains(out, "BROKEN") || strings.Contains(out, "AFTER") || !strings.Contains(out, "g1") {
		t.Errorf("kubectl get with a column whose path does not parse: want NAME and SIZE only:\n%s", out)
	}
}

// TestCustomResourceDiscoveredOnceEstablished: discovery lists a CRD's
// resource only once the CRD is established, as kube-apiserver's does, so
// that a client that waits for discovery (as the upstream e2e tests'
// fixtures do) and then updates the CRD does not race the establishing
// controller's update. Requests are served from the names' acceptance on.
func TestCustomResourceDiscoveredOnceEstablished(t *testing.T) {
	k := startKapi(t)
	crds := apiextensionsclient.NewForConfigOrDie(k.config).ApiextensionsV1().CustomResourceDefinitions()
	disco := discovery.NewDiscoveryClientForConfigOrDie(k.config)
	for i := range 5 {
		plural := fmt.Sprintf("gadgets%d", i)
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + ".example.com"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: fmt.Sprintf("Gadget%d", i)},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
			},
		}
		if _, err := crds.Create(context.Background(), crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// Asked without pause: the time between the names' acceptance
		// and the establishment is short.
		discovered := func() bool {
			list, err := disco.ServerResourcesForGroupVersion("example.com/v1")
			if err != nil {
				return false
			}
			for _, r := range list.APIResources {
				if r.Name == plural {
					return true
				}
			}
			return false
		}
		for deadline := time.Now().Add(10 * time.Second); !discovered(); {
			if time.Now().After(deadline) {
				t.Fatalf("%s is not discovered", crd.Name)
			}
		}
		got, err := crds.Get(context.Background(), crd.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !apiextensionshelpers.IsCRDConditionTrue(got, apiextensionsv1.Established) {
			t.Errorf("%s is discovered but not established: %+v", crd.Name, got.Status.Conditions)
		}
	}
}

// TestCustomResourceOpenAPIDocument: a custom group-version's OpenAPI v3
// document is apiextensions' own (no discovery or deprecated watch paths,
// its title), and the index lists no document for the custom group.
func TestCustomResourceOpenAPIDocument(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	var index struct{ Paths map[string]any }
	if err := json.Unmarshal([]byte(k.mustKubectl("get", "--raw", "/openapi/v3")), &index); err != nil {
		t.Fatal(err)
	}
	if _, ok := index.Paths["apis/example.com/v1"]; !ok {
		t.Fatalf("/openapi/v3 lacks the custom group-version: %v", index.Paths)
	}
	if _, ok := index.Paths["apis/example.com"]; ok {
		t.Errorf("/openapi/v3 lists a document for the custom group")
	}
	var doc struct {
		Info  struct{ Title string }
		Paths map[string]any
	}
	if err := json.Unmarshal([]byte(k.mustKubectl("get", "--raw", "/openapi/v3/apis/example.com/v1")), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Info.Title != "Kubernetes CRD Swagger" || doc.Paths["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"] == nil {
		t.Errorf("the custom group-version's document: title %q, paths %v", doc.Info.Title, slices.Collect(maps.Keys(doc.Paths)))
	}
	for path := range doc.Paths {
		if strings.Contains(path, "/watch/") || path == "/apis/example.com/v1/" {
			t.Errorf("the custom group-version's document has %s", path)
		}
	}
	checkCustomResourceV2Paths(t, k)
}

// checkCustomResourceV2Paths: /openapi/v2 holds apiextensions' paths of
// the widgets, as kube-apiserver merges them: lists described without
// watching, JSON and YAML only, and the scale sub-resource's operations
// naming the Widget's kind.
func checkCustomResourceV2Paths(t *testing.T, k *kapi) {
	t.Helper()
	type operation struct {
		Description string
		Produces    []string
		Consumes    []string
		GVK         map[string]string `json:"x-kubernetes-group-version-kind"`
	}
	var v2 struct {
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(k.mustKubectl("get", "--raw", "/openapi/v2")), &v2); err != nil {
		t.Fatal(err)
	}
	op := func(path, method string) operation {
		var o operation
		if err := json.Unmarshal(v2.Paths[path][method], &o); err != nil {
			t.Fatalf("%s %s in /openapi/v2: %v", method, path, err)
		}
		return o
	}
	jsonAndYAML := []string{"application/json", "application/yaml"}
	list := op("/apis/example.com/v1/namespaces/{namespace}/widgets", "get")
	if list.Description != "list objects of kind Widget" || !slices.Equal(list.Produces, jsonAndYAML) {
		t.Errorf("listing widgets in /openapi/v2: %+v", list)
	}
	scale := op("/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale", "put")
	if scale.GVK["kind"] != "Widget" || !slices.Equal(scale.Consumes, jsonAndYAML) {
		t.Errorf("replacing a widget's scale in /openapi/v2: %+v", scale)
	}
}

// TestCustomResourceStorageVersionChange: objects stored before a CRD's
// storage version changed are read and written through the new one as
// kube-apiserver does: converted to it on their way out of storage (they
// came back in the version they were stored in, and writes through the
// new one were refused). A write through a version whose fields the
// storage version lacks answers as read back from storage, without them.
func TestCustomResourceStorageVersionChange(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	manifest := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: shifts.example.com}
spec:
  group: example.com
  names: {plural: shifts, singular: shift, kind: Shift}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: %t
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {a: {type: string}, old: {type: string, default: gone}}}}}}
  - name: v2
    served: true
    storage: %t
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {a: {type: string}, b: {type: string, default: B2}}}}}}
`
	createCRD(t, k, fmt.Sprintf(manifest, true, false), "shifts.example.com")
	d := dynamicClient(t, k)
	v1 := d.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "shifts"}).Namespace("default")
	v2 := d.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "shifts"}).Namespace("default")
	shift := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Shift",
		"metadata": map[string]any{"name": "early"}, "spec": map[string]any{"a": "x"}}}
	if _, err := v1.Create(ctx, shift, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	apply(t, k, fmt.Sprintf(manifest, false, true))
	waitFor(t, 20*time.Second, "v2 to be the storage version", func() bool {
		got, err := v2.Get(ctx, "early", metav1.GetOptions{})
		return err == nil && got.GetAPIVersion() == "example.com/v2"
	})
	early := mustGet(t, v2, "early")
	if _, found, _ := unstructured.NestedString(early.Object, "spec", "old"); found {
		t.Errorf("read through v2, the object kept v1's field")
	}
	// Stored in v1, it has v1's defaults, not those of v2 it is read as
	// (kube's storage codec defaults in the stored version, then converts).
	if b, found, _ := unstructured.NestedString(early.Object, "spec", "b"); found {
		t.Errorf("stored in v1 and read through v2, the object got v2's default spec.b=%q", b)
	}
	patched, err := v2.Patch(ctx, "early", types.MergePatchType, []byte(`{"spec":{"a":"y"}}`), metav1.PatchOptions{})
	if err != nil || patched.GetAPIVersion() != "example.com/v2" {
		t.Fatalf("a patch through the new storage version: %v", err)
	}

	// v1 defaults "old", which v2, the storage version, does not keep; a
	// dry run answers as the write would.
	shift.SetName("late")
	for _, dryRun := range [][]string{{metav1.DryRunAll}, nil} {
		created, err := v1.Create(ctx, shift, metav1.CreateOptions{DryRun: dryRun})
		if err != nil {
			t.Fatal(err)
		}
		if _, found, _ := unstructured.NestedString(created.Object, "spec", "old"); found {
			t.Errorf("a create through v1 (dry run %v) answered with a field its storage version drops: %v", dryRun, created.Object["spec"])
		}
	}
	patched, err = v1.Patch(ctx, "late", types.MergePatchType, []byte(`{"spec":{"old":"kept?"}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedString(patched.Object, "spec", "old"); found || patched.GetResourceVersion() == "" {
		t.Errorf("a dry-run patch through v1 answered %v (resourceVersion %q): want the field dropped", patched.Object["spec"], patched.GetResourceVersion())
	}
}

func mustGet(t *testing.T, r dynamic.ResourceInterface, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := r.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestCustomResourceScaleOfMalformedReplicas: the scale of a custom
// resource without its replicas field cannot be read, and one whose
// replicas field holds another type (its CRD's scale path moved after it
// was stored) is refused with the accessor's error, a bare 500, as
// apiextensions' scale storage refuses them.
func TestCustomResourceScaleOfMalformedReplicas(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	manifest := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: looses.example.com}
spec:
  group: example.com
  names: {plural: looses, singular: loose, kind: Loose}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {scale: {specReplicasPath: %s, statusReplicasPath: .status.replicas}}
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`
	createCRD(t, k, fmt.Sprintf(manifest, ".spec.replicas"), "looses.example.com")
	apply(t, k, `apiVersion: example.com/v1
kind: Loose
metadata: {name: worded}
spec: {replicas: 3, name: three}
---
apiVersion: example.com/v1
kind: Loose
metadata: {name: unset}
spec: {}
`)
	resp, body := rawDo(t, k, http.MethodGet, "/apis/example.com/v1/namespaces/default/looses/unset/scale", "", "", nil)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), `"message":"Internal error occurred: the spec replicas field \".spec.replicas\" does not exist"`) {
		t.Errorf("the scale of a resource without replicas: %d %s", resp.StatusCode, body)
	}
	apply(t, k, fmt.Sprintf(manifest, ".spec.name"))
	want := `".spec.name accessor error: three is of the type string, expected int64"`
	waitFor(t, 20*time.Second, "the scale to read the moved path", func() bool {
		resp, body := rawDo(t, k, http.MethodGet, "/apis/example.com/v1/namespaces/default/looses/worded/scale", "", "", nil)
		return resp.StatusCode == http.StatusInternalServerError && !strings.Contains(string(body), `"reason"`) && strings.Contains(string(body), want)
	})
}

// TestCustomResourceRouteAnswers: paths the custom resource handler does
// not serve get its answers: a sub-resource the version lacks is the
// object's NotFound, and a cluster-scoped resource asked for in a
// namespace goes to the mux's plain 404.
func TestCustomResourceRouteAnswers(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	createCRD(t, k, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: boards.example.com}
spec:
  group: example.com
  names: {plural: boards, singular: board, kind: Board}
  scope: Cluster
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`, "boards.example.com")
	apply(t, k, "apiVersion: example.com/v1\nkind: Board\nmetadata: {name: b1}\n")
	resp, body := rawDo(t, k, http.MethodGet, "/apis/example.com/v1/boards/b1/status", "", "", nil)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), `"message":"boards.example.com \"b1\" not found"`) {
		t.Errorf("a sub-resource the version lacks: %d %s", resp.StatusCode, body)
	}
	resp, body = rawDo(t, k, http.MethodGet, "/apis/example.com/v1/namespaces/default/boards/b1", "", "", nil)
	if resp.StatusCode != http.StatusNotFound || string(body) != "404 page not found\n" {
		t.Errorf("a cluster-scoped resource in a namespace: %d %q", resp.StatusCode, body)
	}
}

// TestCustomResourceScalePerVersion: each version of a custom resource
// serves the scale sub-resource by its own paths, as apiextensions'
// storage of each version does.
func TestCustomResourceScalePerVersion(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	createCRD(t, k, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: pools.example.com}
spec:
  group: example.com
  names: {plural: pools, singular: pool, kind: Pool}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}}
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  - name: v2
    served: true
    storage: false
    subresources: {scale: {specReplicasPath: .spec.count, statusReplicasPath: .status.count}}
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, "pools.example.com")
	apply(t, k, "apiVersion: example.com/v1\nkind: Pool\nmetadata: {name: p}\nspec: {replicas: 2, count: 5}\n")
	scale := func(version string) string {
		return k.mustKubectl("get", "--raw", "/apis/example.com/"+version+"/namespaces/default/pools/p/scale")
	}
	if v1, v2 := scale("v1"), scale("v2"); !strings.Contains(v1, `"spec":{"replicas":2}`) || !strings.Contains(v2, `"spec":{"replicas":5}`) {
		t.Errorf("the scales of v1 and v2: %s %s", v1, v2)
	}
	resp, body := rawDo(t, k, http.MethodPatch, "/apis/example.com/v2/namespaces/default/pools/p/scale", "application/merge-patch+json", "", []byte(`{"spec":{"replicas":7}}`))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scaling through v2: %d %s", resp.StatusCode, body)
	}
	if spec := k.mustKubectl("get", "pools.v1.example.com", "p", "-o", "jsonpath={.spec}"); spec != `{"count":7,"replicas":2}` {
		t.Errorf("after scaling through v2 the spec is %s, want its count changed", spec)
	}
	// A custom resource's Scale is never protobuf, as the resource is not.
	const protobuf = "application/vnd.kubernetes.protobuf"
	if resp, _ := rawDo(t, k, http.MethodGet, "/apis/example.com/v1/namespaces/default/pools/p/scale", "", protobuf, nil); resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("a custom resource's Scale in protobuf: %d", resp.StatusCode)
	}
	if resp, _ := rawDo(t, k, http.MethodGet, "/apis/example.com/v1/namespaces/default/pools/p/scale", "", protobuf+", application/json", nil); resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("a custom resource's Scale for a protobuf client: %q", resp.Header.Get("Content-Type"))
	}
}

// TestCustomResourceStorageVersionNotServed: a CRD may keep storing in a
// version it no longer serves. That version answers 404 and is left out
// of discovery, as in kube-apiserver; the served one reads and writes the
// objects, and deleting the CRD still deletes them.
func TestCustomResourceStorageVersionNotServed(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	manifest := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: keeps.example.com}
spec:
  group: example.com
  names: {plural: keeps, singular: keep, kind: Keep}
  scope: Namespaced
  versions:
  - name: v1
    served: %t
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  - name: v2
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`
	createCRD(t, k, fmt.Sprintf(manifest, true), "keeps.example.com")
	d := dynamicClient(t, k)
	v1 := d.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "keeps"}).Namespace("default")
	v2 := d.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "keeps"}).Namespace("default")
	keep := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Keep",
		"metadata": map[string]any{"name": "a"}, "data": "x"}}
	if _, err := v1.Create(ctx, keep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	apply(t, k, fmt.Sprintf(manifest, false))
	waitFor(t, 20*time.Second, "v1 to be no longer served", func() bool {
		_, err := v1.Get(ctx, "a", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if got := mustGet(t, v2, "a"); got.Object["data"] != "x" {
		t.Errorf("read through v2: %v", got.Object)
	}
	keep.SetName("b")
	keep.SetAPIVersion("example.com/v2")
	if _, err := v2.Create(ctx, keep, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a create through the served version: %v", err)
	}
	group, err := k.clientset().Discovery().ServerResourcesForGroupVersion("example.com/v1")
	if err == nil {
		t.Errorf("example.com/v1 is still discovered: %v", group.APIResources)
	}
	// Nor is it hashed: apiextensions hashes the storage version only
	// among the served ones.
	if group, err = k.clientset().Discovery().ServerResourcesForGroupVersion("example.com/v2"); err != nil || len(group.APIResources) == 0 ||
		group.APIResources[0].StorageVersionHash != "" {
		t.Errorf("example.com/v2's resources: %v %+v", err, group)
	}

	k.mustKubectl("delete", "crd", "keeps.example.com", "--timeout=30s")
	if out, err := k.kubectl("get", "crd", "keeps.example.com"); err == nil {
		t.Errorf("the CRD is still there after its deletion: %s", out)
	}
}

// TestCustomResourceCleanupPastAdmission: deleting a CRD deletes its
// custom resources from storage, as kube-apiserver's finalizer does: when
// the CRD serves no version any more, and when a policy refuses every
// delete of them through the API.
func TestCustomResourceCleanupPastAdmission(t *testing.T) {
	t.Parallel() // waits for the CRD finalizer, beside the other such tests
	k := startKapi(t, onlyLifecycleControllers)
	manifest := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[1]ss.example.com}
spec:
  group: example.com
  names: {plural: %[1]ss, singular: %[1]s, kind: %[2]s}
  scope: Namespaced
  versions:
  - name: v1
    served: %[3]t
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`
	d := dynamicClient(t, k)
	create := func(plural, kind string) {
		createCRD(t, k, fmt.Sprintf(manifest, plural, kind, true), plural+"s.example.com")
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": kind, "metadata": map[string]any{"name": "a"}}}
		if _, err := d.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: plural + "s"}).Namespace("default").Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(name string) {
		k.mustKubectl("delete", "crd", name, "--wait=false")
		waitFor(t, 40*time.Second, name+" to go", func() bool {
			_, err := k.kubectl("get", "crd", name)
			return err != nil
		})
	}

	create("unserved", "Unserved")
	apply(t, k, fmt.Sprintf(manifest, "unserved", "Unserved", false))
	gone("unserveds.example.com")

	create("guarded", "Guarded")
	apply(t, k, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-deletes}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [example.com], apiVersions: ["*"], operations: [DELETE], resources: [guardeds]}
  validations:
  - {expression: "false", message: "guarded resources stay"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-deletes}
spec:
  policyName: no-deletes
  validationActions: [Deny]
`)
	guarded := d.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "guardeds"}).Namespace("default")
	waitFor(t, 20*time.Second, "the policy to refuse deletes", func() bool {
		err := guarded.Delete(ctx, "a", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "guarded resources stay")
	})
	gone("guardeds.example.com")
}
