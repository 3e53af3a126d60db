package builtin

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/registry"
)

// componentStatuses serves the deprecated componentstatuses as
// kube-apiserver does: made at each read from the components' health, not
// stored.
func componentStatuses(report func(context.Context) []corev1.ComponentStatus) *registry.Computed {
	return &registry.Computed{List: func(ctx context.Context) []runtime.Object {
		if report == nil {
			return nil
		}
		statuses := report(ctx)
		out := make([]runtime.Object, len(statuses))
		for i := range statuses {
			out[i] = &statuses[i]
		}
		return out
	}}
}
