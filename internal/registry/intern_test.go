package registry

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/storage"
)

func TestInternSharesEqualBytes(t *testing.T) {
	table := newInternTable()
	content := strings.Repeat(`{"f:data":{"f:key":{}}}`, 4)
	first := table.intern([]byte(content))
	second := table.intern([]byte(content))
	if &second[0] != &first[0] || string(second) != content || cap(second) != len(second) {
		t.Fatalf("equal bytes were not shared (%p, %p)", first, second)
	}
	other := table.intern([]byte(strings.ToUpper(content)))
	if &other[0] == &first[0] || string(other) != strings.ToUpper(content) {
		t.Fatal("other bytes came back as the first ones")
	}
	small := []byte(`{"f:data":{}}`)
	if got := table.intern(small); &got[0] != &small[0] {
		t.Fatal("small bytes were replaced")
	}
	runtime.KeepAlive(first)
}

// TestInternForgetsUnusedBytes: an entry goes once nothing holds its
// bytes; equal bytes interned afterwards are kept as they come.
func TestInternForgetsUnusedBytes(t *testing.T) {
	table := newInternTable()
	table.intern(bytes.Repeat([]byte("x"), 100))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		runtime.GC()
		table.mu.Lock()
		n := len(table.entries)
		table.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the entry of bytes nothing holds is still there")
		}
	}
	again := bytes.Repeat([]byte("x"), 100)
	if got := table.intern(again); &got[0] != &again[0] {
		t.Fatal("bytes interned after the entry went were replaced")
	}
}

// TestDecodedObjectsShareManagedFields: two objects written alike carry
// the same field set bytes once decoded.
func TestDecodedObjectsShareManagedFields(t *testing.T) {
	store := StoreOfKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	fields := metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:first":{},"f:second":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`)}
	decode := func(name string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: fields.DeepCopy()},
		}}}
		data, err := codecs.EncodeToKeep(store.storageEncoder(), cm)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := store.Decode(&storage.KeyValue{Key: []byte(name), Value: data, ModRevision: 2})
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*corev1.ConfigMap)
	}
	a, b := decode("a"), decode("b")
	ra, rb := a.ManagedFields[0].FieldsV1.Raw, b.ManagedFields[0].FieldsV1.Raw
	if string(ra) != string(fields.Raw) || &ra[0] != &rb[0] {
		t.Fatalf("decoded field sets %q at %p and %p, want one copy of %q", ra, ra, rb, fields.Raw)
	}
}
