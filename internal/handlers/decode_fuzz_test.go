package handlers

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/resources"
)

// FuzzDecodeBody feeds arbitrary request bodies to every body decoder
// (JSON, YAML, protobuf, CBOR; strict and not) of a built-in and of an
// unstructured kind: a client error is fine, a panic or a 5xx is not.
func FuzzDecodeBody(f *testing.F) {
	f.Add(uint8(0), []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c"}]}}`))
	f.Add(uint8(1), []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"))
	f.Add(uint8(2), []byte("k8s\x00\x0a\x0b\x0a\x02v1\x12\x03Pod\x12\x00"))
	f.Add(uint8(3), []byte("\xd9\xd9\xf7\xa1\x44kind\x43Pod"))
	f.Add(uint8(0), []byte(`{"metadata":{"name":1}}`))
	reg := resources.NewBuiltin()
	stores := []*registry.Store{
		registry.NewStore(reg.Lookup("", "v1", "pods"), nil),
		registry.NewStore(reg.Lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions"), nil),
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		for _, store := range stores {
			infos := store.Serializers()
			info := infos[int(which)%len(infos)]
			for _, validation := range []string{metav1.FieldValidationIgnore, metav1.FieldValidationStrict} {
				obj, err := decodeObject(context.Background(), body, info, validation, store)
				if err != nil {
					if code := apiStatus(err).Code; code < 400 || code >= 500 {
						t.Fatalf("%s: error %d: %v", info.MediaType, code, err)
					}
					continue
				}
				mustAccessor(obj)
			}
		}
	})
}

// FuzzPatchBodies applies arbitrary JSON, merge and strategic merge patches
// to a pod.
func FuzzPatchBodies(f *testing.F) {
	f.Add(uint8(0), []byte(`[{"op":"add","path":"/metadata/labels/a","value":"b"}]`))
	f.Add(uint8(1), []byte(`{"metadata":{"labels":null}}`))
	f.Add(uint8(2), []byte(`{"spec":{"containers":[{"name":"c","$patch":"delete"}],"$setElementOrder/containers":[{"name":"c"}]}}`))
	f.Add(uint8(2), []byte(`{"$retainKeys":["spec"],"spec":{"$deleteFromPrimitiveList/x":["a"]}}`))
	store := registry.NewStore(resources.NewBuiltin().Lookup("", "v1", "pods"), nil)
	original := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"x":"y"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}]}}`)
	patchTypes := []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		apply, _, err := patcher(patchTypes[int(which)%len(patchTypes)], body, metav1.FieldValidationStrict, store)
		if err != nil {
			if code := apiStatus(err).Code; code < 400 || code >= 500 {
				t.Fatalf("refusal with %d: %v", code, err)
			}
			return
		}
		patched, err := apply(original)
		if err != nil {
			if code := apiStatus(err).Code; code < 400 || code >= 500 {
				t.Fatalf("apply failed with %d: %v", code, err)
			}
			return
		}
		jsonInfo := store.Serializers()[0]
		if _, err := decodeObject(context.Background(), patched, jsonInfo, metav1.FieldValidationStrict, store); err != nil {
			if code := apiStatus(err).Code; code < 400 || code >= 500 {
				t.Fatalf("decoding the patched object: %d: %v", code, err)
			}
		}
	})
}
