package codecs

import (
	"bytes"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func jsonSerializers(t testing.TB) (plain, fieldSets runtime.Encoder) {
	for i, info := range Factory.SupportedMediaTypes() {
		if info.MediaType == runtime.ContentTypeJSON {
			return info.Serializer, TypedSerializers[i].Serializer
		}
	}
	t.Fatal("no JSON serializer")
	return nil, nil
}

// podWithFieldSets is a pod whose managers wrote the given field sets.
func podWithFieldSets(sets ...string) *corev1.Pod {
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "<web>"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i", Args: []string{`"fieldsV1":0`}}}},
	}
	for i, set := range sets {
		entry := metav1.ManagedFieldsEntry{Manager: "m" + string(rune('a'+i)), Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1"}
		if set != "" {
			entry.FieldsV1 = &metav1.FieldsV1{Raw: []byte(set)}
		}
		pod.ManagedFields = append(pod.ManagedFields, entry)
	}
	return pod
}

// TestFieldSetsWrittenAsTheSerializerWrites encodes objects whose field
// sets are plain, need escaping, are spaced, invalid or absent: the bytes
// (or the failure) are the plain serializer's, and the object is
// unchanged.
func TestFieldSetsWrittenAsTheSerializerWrites(t *testing.T) {
	plain, fieldSets := jsonSerializers(t)
	cases := map[string]*corev1.Pod{
		"plain":              podWithFieldSets(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{}}}}}`),
		"two managers":       podWithFieldSets(`{"f:spec":{}}`, `{"f:status":{"f:phase":{}}}`),
		"one without a set":  podWithFieldSets("", `{"f:spec":{}}`),
		"escapes for HTML":   podWithFieldSets(`{"f:metadata":{"f:labels":{"f:a<b":{}}}}`),
		"spaced":             podWithFieldSets(`{"f:spec": {}}`),
		"unicode escape":     podWithFieldSets(`{"f:metadata":{"f:labels":{"f:\u00e9":{}}}}`),
		"a value not object": podWithFieldSets(`{"f:spec":1}`),
		"invalid":            podWithFieldSets(`{"f:spec":`),
		"no managed fields":  podWithFieldSets(),
	}
	plainCases := map[string]bool{"plain": true, "two managers": true, "one without a set": true, "unicode escape": true}
	for name, pod := range cases {
		before := pod.DeepCopy()
		var want, got bytes.Buffer
		wantErr := plain.Encode(pod, &want)
		gotErr := fieldSets.Encode(pod, &got)
		if (wantErr == nil) != (gotErr == nil) || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: wrote %q (%v), the serializer %q (%v)", name, got.Bytes(), gotErr, want.Bytes(), wantErr)
		}
		stand, _ := withPlaceholders(pod)
		if wantPlain := plainCases[name]; (stand != nil) != wantPlain {
			t.Errorf("%s: field sets written as they are: %t, want %t", name, stand != nil, wantPlain)
		}
		if !equalJSON(t, before, pod) {
			t.Errorf("%s: encoding changed the object", name)
		}
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// FuzzPlainFieldSet checks that a field set taken as plain is what the
// encoder would write for it: valid, compact, nothing to escape.
func FuzzPlainFieldSet(f *testing.F) {
	for _, seed := range []string{`{}`, `{"f:a":{}}`, `{"k:{\"x\":1}":{".":{}}}`, `{"a":{},"b":{"c":{}}}`, `{"\u00e9\n":{}}`, `{"a" :{}}`, `{"a":{}`, `{"<":{}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !plainFieldSet(raw) {
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			t.Fatalf("%q taken as plain, but it is not valid JSON: %v", raw, err)
		}
		escaped, err := json.Marshal(json.RawMessage(raw))
		if err != nil || !bytes.Equal(compact.Bytes(), raw) || !bytes.Equal(escaped, raw) {
			t.Fatalf("%q taken as plain, but the encoder writes %q", raw, escaped)
		}
	})
}

// FuzzFieldSetsEncoding encodes a pod with any field set: the bytes, or
// the failure, are the plain serializer's.
func FuzzFieldSetsEncoding(f *testing.F) {
	for _, seed := range []string{`{"f:spec":{}}`, `{"f:a<":{}}`, `"fieldsV1":0`, `{"a":{}}  `, `0`} {
		f.Add([]byte(seed))
	}
	plain, fieldSets := jsonSerializers(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		pod := podWithFieldSets(string(raw), `{"f:spec":{}}`)
		var want, got bytes.Buffer
		wantErr := plain.Encode(pod, &want)
		gotErr := fieldSets.Encode(pod, &got)
		if (wantErr == nil) != (gotErr == nil) || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("field set %q: wrote %q (%v), the serializer %q (%v)", raw, got.Bytes(), gotErr, want.Bytes(), wantErr)
		}
	})
}

// BenchmarkEncodePodJSON encodes a pod whose one manager wrote its spec
// (a field set of some 1.3 KB), with the plain serializer and with field
// sets written as they are.
func BenchmarkEncodePodJSON(b *testing.B) {
	set := `{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:tier":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:args":{},"f:env":{".":{},"k:{\"name\":\"MODE\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:imagePullPolicy":{},"f:livenessProbe":{".":{},"f:failureThreshold":{},"f:httpGet":{".":{},"f:path":{},"f:port":{},"f:scheme":{}},"f:periodSeconds":{},"f:successThreshold":{},"f:timeoutSeconds":{}},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}},"f:resources":{".":{},"f:limits":{".":{},"f:cpu":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}`
	pod := podWithFieldSets(set)
	plain, fieldSets := jsonSerializers(b)
	for name, e := range map[string]runtime.Encoder{"serializer": plain, "fieldsets": fieldSets} {
		b.Run(name, func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := e.Encode(pod, &buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
