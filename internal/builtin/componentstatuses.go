package builtin

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/registry"
)

// componentStatuses serves the deprecated componentstatuses as
// kube-apiserver does: made at each read from the components' health, not
// stored.
func componentStatuses(report func(context.Context) []corev1.ComponentStatus) *registry.Computed {
	list := func(ctx context.Context) []runtime.Object {
		if report == nil {
			return nil
		}
		statuses := report(ctx)
		out := make([]runtime.Object, len(statuses))
		for i := range statuses {
			out[i] = &statuses[i]
		}
		return out
	}
	return &registry.Computed{
		List: list,
		Get: func(ctx context.Context, name string) (runtime.Object, error) {
			for _, obj := range list(ctx) {
				if obj.(*corev1.ComponentStatus).Name == name {
					return obj, nil
				}
			}
			// kube's storage names the resource in the singular here.
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "componentstatus"}, name)
		},
	}
}
