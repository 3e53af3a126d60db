// Package convert turns built-in objects into other versions of their
// group with Kubernetes' own conversion functions, through the internal
// types as kube-apiserver converts them: an autoscaling/v2
// HorizontalPodAutoscaler read through autoscaling/v1 has v1's shape and
// carries what v1 cannot express in the annotations kube uses.
//
// Conversion applies no defaults: kube-apiserver's storage conversion does
// not default on read either.
package convert

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	autoscalinginstall "k8s.io/kubernetes/pkg/apis/autoscaling/install"
)

// installers add a group's internal and versioned types with their
// conversions; a multi-version group needs one line here.
var installers = []func(*runtime.Scheme){
	autoscalinginstall.Install,
}

// Converter converts between the versions of the installed groups.
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

// Handles reports whether a kind's versions convert into one another.
func (c *Converter) Handles(gk schema.GroupKind) bool {
	return c.scheme.IsGroupRegistered(gk.Group) && len(c.scheme.VersionsForGroupKind(gk)) > 1
}

// Convert returns obj in version to of its group, a new object with its
// apiVersion and kind set; obj is not changed.
func (c *Converter) Convert(obj runtime.Object, to schema.GroupVersion) (runtime.Object, error) {
	gvks, _, err := c.scheme.ObjectKinds(obj)
	if err != nil {
		return nil, err
	}
	from := gvks[0]
	if from.GroupVersion() == to {
		out := obj.DeepCopyObject()
		out.GetObjectKind().SetGroupVersionKind(from)
		return out, nil
	}
	internal, err := c.scheme.New(from.GroupKind().WithVersion(runtime.APIVersionInternal))
	if err != nil {
		return nil, fmt.Errorf("no internal type for %v: %w", from, err)
	}
	if err := c.scheme.Convert(obj, internal, nil); err != nil {
		return nil, err
	}
	out, err := c.scheme.New(to.WithKind(from.Kind))
	if err != nil {
		return nil, err
	}
	if err := c.scheme.Convert(internal, out, nil); err != nil {
		return nil, err
	}
	out.GetObjectKind().SetGroupVersionKind(to.WithKind(from.Kind))
	return out, nil
}
