package admission

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	apiadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// onInternal runs a kube admission plugin on the internal forms of a
// write's objects, as kube-apiserver admits them; with mutate, the
// plugin's changes are carried back to the written object. Only changes
// are: the round trip through the internal form is not free of them (an
// unset optional number comes back as zero).
func onInternal(ctx context.Context, a *Attributes, mutate bool, plugin func(apiadmission.Attributes) error) error {
	internal := *a
	var err error
	if internal.Object, err = toInternal(a.Object); err != nil {
		return err
	}
	if internal.OldObject, err = toInternal(a.OldObject); err != nil {
		return err
	}
	var before runtime.Object
	if mutate && internal.Object != a.Object && internal.Object != nil {
		before = internal.Object.DeepCopyObject()
	}
	if err := plugin(kubeAttributes(ctx, &internal)); err != nil {
		return err
	}
	if before == nil || apiequality.Semantic.DeepEqual(before, internal.Object) {
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
