package builtin

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	schedulingapi "k8s.io/kubernetes/pkg/apis/scheduling"
	schedulingapiv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"

	"github.com/kapi-dev/kapi/internal/pipeline"
)

// EnsureSystemPriorityClasses creates the PriorityClasses every cluster
// has (system-node-critical, system-cluster-critical), as kube-apiserver's
// scheduling/bootstrap-system-priority-classes post-start hook does; ones
// that exist are left alone.
func EnsureSystemPriorityClasses(ctx context.Context, p *pipeline.Pipeline) error {
	for _, pc := range schedulingapiv1.SystemPriorityClasses() {
		if err := p.EnsureObject(ctx, pc.DeepCopy(), "kube-apiserver"); err != nil {
			return fmt.Errorf("creating priority class %s: %w", pc.Name, err)
		}
	}
	return nil
}

// refuseSystemPriorityClass refuses to delete a system priority class, as
// kube's PriorityClass storage does (its delete of a collection does not
// check).
func refuseSystemPriorityClass(name string) error {
	for _, pc := range schedulingapiv1.SystemPriorityClasses() {
		if pc.Name == name {
			return apierrors.NewForbidden(schedulingapi.Resource("priorityclasses"), name, errors.New("this is a system priority class and cannot be deleted"))
		}
	}
	return nil
}
