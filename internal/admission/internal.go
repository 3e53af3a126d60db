package admission

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	apiadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// carryBack says how the changes a plugin makes to the internal form of a
// write's object reach the object.
type carryBack int

const (
	// noChanges: a validating plugin changes nothing.
	noChanges carryBack = iota
	// onlyChanges: the object is converted back only if the plugin changed
	// it, since the round trip through the internal form is not free of
	// changes (an unset optional number comes back as zero) and not every
	// write makes it.
	onlyChanges
	// always: the write's strategy converts the object through its
	// internal form anyway, so converting back costs less than finding
	// out whether anything changed (a deep copy and comparison).
	always
)

// onInternal runs a kube admission plugin on the internal forms of a
// write's objects, as kube-apiserver admits them, and carries its changes
// back to the written object as carry says.
func onInternal(ctx context.Context, a *Attributes, carry carryBack, plugin func(apiadmission.Attributes) error) error {
	internal := *a
	var err error
	if internal.Object, err = toInternal(a.Object); err != nil {
		return err
	}
	if internal.OldObject, err = toInternal(a.OldObject); err != nil {
		return err
	}
	if internal.Object == a.Object || internal.Object == nil {
		carry = noChanges // no internal form: the plugin changed the object itself
	}
	var before runtime.Object
	if carry == onlyChanges {
		before = internal.Object.DeepCopyObject()
	}
	if err := plugin(kubeAttributes(ctx, &internal)); err != nil {
		return err
	}
	if carry == noChanges || carry == onlyChanges && apiequality.Semantic.DeepEqual(before, internal.Object) {
		return nil
	}
	return legacyscheme.Scheme.Convert(internal.Object, a.Object, nil)
}

// toInternal converts a built-in object to its internal type; others
// (custom resources) and nil stay as they are. The objects of a write are
// the request's own (decoded for it, the current one read from storage
// for it), so they are converted without a copy, as kube-apiserver's
// codec converts what it decodes: the internal object shares their parts,
// and a plugin's change is the written object's too, which is what the
// conversion back makes of it anyway.
func toInternal(obj runtime.Object) (runtime.Object, error) {
	if obj == nil {
		return nil, nil
	}
	if _, ok := obj.(runtime.Unstructured); ok {
		return obj, nil // custom resources have no internal form
	}
	if _, _, err := legacyscheme.Scheme.ObjectKinds(obj); err != nil {
		return obj, nil
	}
	return legacyscheme.Scheme.UnsafeConvertToVersion(obj, runtime.InternalGroupVersioner)
}
