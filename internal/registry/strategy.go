package registry

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/resources"
)

// Strategy is a type's rules for writes, as kube-apiserver's registry
// strategies hold them: the defaults of its versioned type, what a create
// resets and an update (of the object or of a sub-resource) may change,
// generation, validation and warnings. The write pipeline calls it at its
// stages; objects are in the version of the Write's Info.
type Strategy interface {
	// Default sets the defaults a request body gets when it is decoded.
	Default(obj runtime.Object)
	// Create prepares and validates a new object, returning the object to
	// store or kube-apiserver's error (an Invalid Status for a validation
	// failure).
	Create(ctx context.Context, w Write, obj runtime.Object) (runtime.Object, error)
	// Update prepares and validates obj as the next state of old through
	// w.Subresource ("" for the object itself).
	Update(ctx context.Context, w Write, obj, old runtime.Object) (runtime.Object, error)
	// AllowUnconditionalUpdate reports whether an update through the
	// sub-resource may leave out the resourceVersion (and so apply to
	// whatever is current).
	AllowUnconditionalUpdate(ctx context.Context, subresource string) bool
	// AllowCreateOnUpdate reports whether a PUT of an object that does
	// not exist creates it.
	AllowCreateOnUpdate(ctx context.Context) bool
	// GarbageCollectionPolicy is what deletes do with the dependents of
	// an object by default (pipeline.DeleteDependents, OrphanDependents or
	// GCUnsupported).
	GarbageCollectionPolicy(ctx context.Context, w Write) string
}

// NameGenerator is a Strategy that makes names of generateName its own
// way; without it a name is the base and five random characters.
type NameGenerator interface {
	GenerateName(base string) string
}

// GracefulDeleter is a Strategy whose type may keep deleted objects for a
// grace period (pods, which their kubelet deletes once stopped), with
// kube-apiserver's rules (rest.BeforeDelete and the type's
// CheckGracefulDelete). It returns obj marked for deletion: graceful when
// the delete sets (or shortens) a grace period, in opts.GracePeriodSeconds;
// pending when obj is already being deleted gracefully and this delete
// changes nothing. obj itself is left as it is.
type GracefulDeleter interface {
	BeforeDelete(ctx context.Context, w Write, obj runtime.Object, opts *metav1.DeleteOptions) (marked runtime.Object, graceful, pending bool, err error)
}

// Write says what is written: which version of which resource, through
// which sub-resource, in which namespace ("" for cluster-scoped ones).
type Write struct {
	Info        *resources.Info
	Subresource string
	Namespace   string
	Name        string
	Verb        string // create, update or patch
}
