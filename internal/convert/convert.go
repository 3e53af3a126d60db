// Package convert turns built-in objects into other versions of their
// group with Kubernetes' own conversion functions, through the internal
// types as kube-apiserver converts them: an autoscaling/v2
// HorizontalPodAutoscaler read through autoscaling/v1 has v1's shape and
// carries what v1 cannot express in the annotations kube uses
// (autoscaling.alpha.kubernetes.io/metrics, .../current-metrics,
// .../conditions, .../behavior), which the way back to v2 reads and drops.
// Lists of a kind convert too (their items are converted one by one).
// Kinds of two groups that share one internal type convert between the
// groups: events.k8s.io/v1 Events are kept as core/v1 Events, as
// kube-apiserver keeps them.
//
// # Defaulting
//
// Convert applies no defaults; it only runs conversion functions. Where
// kube-apiserver defaults (k8s.io/apiserver 1.37, k8s.io/apimachinery's
// versioning codec, whose Decode calls the scheme's defaulter on the
// decoded versioned object before converting it to the internal type):
//
//   - Request bodies (create, update, and the result of a patch) are decoded
//     into the version the request was made in, that version's defaulting
//     functions run, and only then is the object converted to the internal
//     type. For HorizontalPodAutoscalers: autoscaling/v1 sets
//     spec.minReplicas to 1; autoscaling/v2 sets spec.minReplicas to 1, a
//     CPU utilization metric of 80% when spec.metrics is empty, and fills
//     every unset field of spec.behavior.scaleUp/scaleDown when
//     spec.behavior is given.
//   - Reads from etcd go through a decoder of the same kind, so the storage
//     version's defaults are applied to stored objects too (this is how a
//     field defaulted in a newer release appears on old objects). Stored
//     objects were defaulted when written, so this is a no-op unless the
//     defaults changed.
//   - Encoding a response into the version asked for (storage or internal
//     to served version) converts without defaulting, as Convert does.
//
// One default lives in conversion itself and so is applied by Convert as
// by kube: an autoscaling/v1 HorizontalPodAutoscaler without
// targetCPUUtilizationPercentage and without the metrics annotation
// becomes, in autoscaling/v2, one with a CPU utilization metric of 80%
// (autoscaling.DefaultCPUUtilization), and reads back through v1 with
// targetCPUUtilizationPercentage 80.
//
// Importing this package registers the installed groups in
// k8s.io/kubernetes' legacyscheme.Scheme as well (the install packages do
// so in init); this package does not use that scheme.
package convert

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	autoscalinginstall "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	coreinstall "k8s.io/kubernetes/pkg/apis/core/install"
	eventsinstall "k8s.io/kubernetes/pkg/apis/events/install"
)

// installers add a group's internal and versioned types with their
// conversions (and defaulting functions, which Convert does not run); a
// multi-version group, or one whose kinds are stored as another group's,
// needs one line here.
var installers = []func(*runtime.Scheme){
	autoscalinginstall.Install,
	coreinstall.Install,
	eventsinstall.Install,
}

// Converter converts between the versions of the installed groups. It is
// safe for concurrent use.
type Converter struct {
	scheme *runtime.Scheme
}

// New returns a converter for the installed groups.
func New() *Converter {
	scheme := runtime.NewScheme()
	for _, install := range installers {
		install(scheme)
	}
	return &Converter{scheme: scheme}
}

// Handles reports whether a kind is served in several versions of an
// installed group, so that Convert can turn it from one into another.
// List kinds (HorizontalPodAutoscalerList) are handled like their items.
func (c *Converter) Handles(gk schema.GroupKind) bool {
	return c.scheme.IsGroupRegistered(gk.Group) && len(c.scheme.VersionsForGroupKind(gk)) > 1
}

// Convert returns obj in version to of its group: a new object, of the
// Go type k8s.io/api has for that version, with its apiVersion and kind
// set. The result shares no memory with obj, and obj is not changed; to
// obj's own version it is a deep copy. obj's kind comes from its Go type,
// not from its apiVersion and kind fields.
func (c *Converter) Convert(obj runtime.Object, to schema.GroupVersion) (runtime.Object, error) {
	gvks, _, err := c.scheme.ObjectKinds(obj)
	if err != nil {
		return nil, err
	}
	from := gvks[0]
	if to.Version == "" || to.Version == runtime.APIVersionInternal {
		return nil, fmt.Errorf("cannot convert %v to %q: not a served version", from, to.String())
	}
	if to.Group != from.Group && !c.scheme.Recognizes(to.WithKind(from.Kind)) {
		return nil, fmt.Errorf("cannot convert %v to another group, %q", from, to.String())
	}
	if from.Version == runtime.APIVersionInternal {
		return nil, fmt.Errorf("cannot convert internal %v: only versioned objects convert", from.GroupKind())
	}
	if from.GroupVersion() == to {
		out := obj.DeepCopyObject()
		out.GetObjectKind().SetGroupVersionKind(from)
		return out, nil
	}
	// ConvertToVersion deep-copies obj first: generated conversions copy
	// maps and slices by reference (ObjectMeta by value, same-layout
	// fields through unsafe casts), so without a copy the result would
	// share labels, annotations, owner references, ... with obj. The
	// internal object is ours, so the second step may alias it.
	internal, err := c.scheme.ConvertToVersion(obj, runtime.InternalGroupVersioner)
	if err != nil {
		return nil, fmt.Errorf("converting %v to the internal version: %w", from, err)
	}
	out, err := c.scheme.UnsafeConvertToVersion(internal, to)
	if err != nil {
		return nil, fmt.Errorf("converting %v to %v: %w", from, to, err)
	}
	return out, nil
}
