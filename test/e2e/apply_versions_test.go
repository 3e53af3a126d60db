package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// TestApplyReadsManagedFieldsInTheirVersion: as kube-apiserver, a custom
// resource's apply reads each managedFields entry in its own version's
// schema, unserved versions included. An applier whose entry is of
// v1beta1, applying again through v1 after v1 defaults a field v1beta1
// does not have, gets kube's 500 "field not declared in schema" (Flux
// looks for it to migrate its entries), as does any other applier, while
// updates go on.
func TestApplyReadsManagedFieldsInTheirVersion(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	extract := func(withDefault bool) string {
		if withDefault {
			return `{key: {type: string}, nullBytePolicy: {type: string, default: Ignore}}`
		}
		return `{key: {type: string}}`
	}
	version := func(name string, served, storage, withDefault bool) string {
		return fmt.Sprintf(`
  - name: %s
    served: %t
    storage: %t
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {dataFrom: {type: array, items: {type: object, properties: {extract: {type: object, properties: %s}}}}}}}}}`,
			name, served, storage, extract(withDefault))
	}
	crd := func(versions ...string) string {
		return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: secrets.mig.example.com}
spec:
  group: mig.example.com
  names: {plural: secrets, singular: secret, kind: Secret}
  scope: Namespaced
  versions:` + strings.Join(versions, "")
	}
	createCRD(t, k, crd(version("v1beta1", true, true, false)), "secrets.mig.example.com")
	d := dynamicClient(t, k)
	resource := func(v string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "mig.example.com", Version: v, Resource: "secrets"}
	}
	config := func(v string) []byte {
		return []byte(`{"apiVersion":"mig.example.com/` + v + `","kind":"Secret","metadata":{"name":"s"},"spec":{"dataFrom":[{"extract":{"key":"bar"}}]}}`)
	}
	if _, err := d.Resource(resource("v1beta1")).Namespace("default").Patch(ctx, "s", types.ApplyPatchType, config("v1beta1"), metav1.PatchOptions{FieldManager: "flux"}); err != nil {
		t.Fatal(err)
	}

	apply(t, k, crd(version("v1beta1", false, false, false), version("v1", true, true, false)))
	v1 := d.Resource(resource("v1")).Namespace("default")
	waitFor(t, 10*time.Second, "v1 to be served", func() bool {
		_, err := v1.Get(ctx, "s", metav1.GetOptions{})
		return err == nil
	})
	// Stored again through v1 by another manager: flux's entry stays v1beta1.
	if _, err := v1.Patch(ctx, "s", types.MergePatchType, []byte(`{"metadata":{"annotations":{"rewritten":"true"}}}`), metav1.PatchOptions{FieldManager: "migrator"}); err != nil {
		t.Fatal(err)
	}
	apply(t, k, crd(version("v1beta1", false, false, false), version("v1", true, true, true)))
	waitFor(t, 10*time.Second, "v1's default to be served", func() bool {
		got, err := v1.Get(ctx, "s", metav1.GetOptions{})
		if err != nil {
			return false
		}
		items, _, _ := unstructured.NestedSlice(got.Object, "spec", "dataFrom")
		return len(items) == 1 && items[0].(map[string]any)["extract"].(map[string]any)["nullBytePolicy"] == "Ignore"
	})

	// Any apply reads flux's entry so, a newcomer's too, as kube-apiserver;
	// an update does not.
	for _, manager := range []string{"flux", "newcomer"} {
		dryRun := metav1.PatchOptions{FieldManager: manager, DryRun: []string{metav1.DryRunAll}}
		_, err := v1.Patch(ctx, "s", types.ApplyPatchType, config("v1"), dryRun)
		want := ".spec.dataFrom[0].extract.nullBytePolicy: field not declared in schema"
		if !apierrors.IsInternalError(err) || err.Error() != want {
			t.Errorf("%s applying over an entry of v1beta1: %v; want kube's 500 %q", manager, err, want)
		}
	}
	if _, err := v1.Patch(ctx, "s", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{FieldManager: "labeller"}); err != nil {
		t.Errorf("an update over an entry of v1beta1: %v", err)
	}
}
