package admission

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	apiadmission "k8s.io/apiserver/pkg/admission"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/kapi-dev/kapi/internal/auth"
)

// kubeAttributes are a write's attributes as k8s.io/apiserver's plugins
// see them, with the write's shared reinvocation context.
func kubeAttributes(ctx context.Context, a *Attributes) apiadmission.Attributes {
	var userInfo user.Info = &user.DefaultInfo{}
	if u, ok := auth.UserFrom(ctx); ok {
		userInfo = u
	}
	record := apiadmission.NewAttributesRecord(a.Object, a.OldObject, a.Kind, a.Namespace, a.Name, a.Resource,
		a.Subresource, apiadmission.Operation(a.Operation), a.Options, a.DryRun, userInfo)
	if a.reinvocation == nil {
		return record
	}
	return &sharedReinvocation{Attributes: record, reinvocation: a.reinvocation}
}

// sharedReinvocation is an attributes record whose reinvocation context
// is the write's. The annotations plugins add (a policy's audit
// annotations) go to the record, which checks them, and are kept here for
// the audit wrapper, which reads only the record's own type otherwise.
type sharedReinvocation struct {
	apiadmission.Attributes
	reinvocation apiadmission.ReinvocationContext

	mu          sync.Mutex
	annotations map[string]leveledAnnotation
}

type leveledAnnotation struct {
	level auditinternal.Level
	value string
}

func (s *sharedReinvocation) GetReinvocationContext() apiadmission.ReinvocationContext {
	return s.reinvocation
}

func (s *sharedReinvocation) AddAnnotation(key, value string) error {
	return s.AddAnnotationWithLevel(key, value, auditinternal.LevelMetadata)
}

func (s *sharedReinvocation) AddAnnotationWithLevel(key, value string, level auditinternal.Level) error {
	if err := s.Attributes.AddAnnotationWithLevel(key, value, level); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.annotations == nil {
		s.annotations = map[string]leveledAnnotation{}
	}
	s.annotations[key] = leveledAnnotation{level: level, value: value}
	return nil
}

// GetAnnotations returns the annotations an audit event of maxLevel
// carries, as the record's own method does.
func (s *sharedReinvocation) GetAnnotations(maxLevel auditinternal.Level) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.annotations == nil {
		return nil
	}
	out := make(map[string]string, len(s.annotations))
	for key, a := range s.annotations {
		if !maxLevel.Less(a.level) {
			out[key] = a.value
		}
	}
	return out
}

// newReinvocationContext is kube's reinvocation context, as a new
// attributes record holds it.
func newReinvocationContext() apiadmission.ReinvocationContext {
	return apiadmission.NewAttributesRecord(nil, nil, schema.GroupVersionKind{}, "", "", schema.GroupVersionResource{},
		"", "", nil, false, nil).GetReinvocationContext()
}
