package admission

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// namespaceSources are a storage and a watch cache of namespaces that
// may disagree, the cache behind; reads counts storage's reads.
type namespaceSources struct {
	stored, cached map[string]corev1.NamespacePhase
	reads          int
}

func (s *namespaceSources) live(_ context.Context, name string) (*corev1.Namespace, error) {
	s.reads++
	phase, ok := s.stored[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}}, nil
}

func (s *namespaceSources) cache(name string) *corev1.Namespace {
	phase, ok := s.cached[name]
	if !ok {
		return nil
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}}
}

func createIn(namespace string) *Attributes {
	return &Attributes{Operation: Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: namespace, Name: "cm"}
}

func TestNamespaceLifecycleReadsTheCacheWhenItCan(t *testing.T) {
	const active, terminating = corev1.NamespaceActive, corev1.NamespaceTerminating
	for _, tc := range []struct {
		name           string
		stored, cached map[string]corev1.NamespacePhase
		deleteFirst    bool // the namespace is deleted through the plugin first
		wantReads      int
		want           func(error) bool
	}{
		{"active in the cache", map[string]corev1.NamespacePhase{"ns": active}, map[string]corev1.NamespacePhase{"ns": active}, false, 0, isNil},
		{"created, not yet in the cache", map[string]corev1.NamespacePhase{"ns": active}, nil, false, 1, isNil},
		{"missing", nil, nil, false, 1, apierrors.IsNotFound},
		{"terminating in the cache, recreated in storage", map[string]corev1.NamespacePhase{"ns": active}, map[string]corev1.NamespacePhase{"ns": terminating}, false, 1, isNil},
		{"terminating", map[string]corev1.NamespacePhase{"ns": terminating}, map[string]corev1.NamespacePhase{"ns": terminating}, false, 1, apierrors.IsForbidden},
		{"deleted, the cache behind", map[string]corev1.NamespacePhase{"ns": terminating}, map[string]corev1.NamespacePhase{"ns": active}, true, 1, apierrors.IsForbidden},
		{"deleted and gone, the cache behind", nil, map[string]corev1.NamespacePhase{"ns": active}, true, 1, apierrors.IsNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &namespaceSources{stored: tc.stored, cached: tc.cached}
			l := NewNamespaceLifecycle(s.live, s.cache)
			if tc.deleteFirst {
				del := &Attributes{Operation: Delete, Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Name: "ns"}
				if err := l.Admit(context.Background(), del); err != nil {
					t.Fatal(err)
				}
			}
			err := l.Admit(context.Background(), createIn("ns"))
			if !tc.want(err) {
				t.Errorf("create: %v", err)
			}
			if s.reads != tc.wantReads {
				t.Errorf("storage read %d times, want %d", s.reads, tc.wantReads)
			}
		})
	}
}

func isNil(err error) bool { return err == nil }
