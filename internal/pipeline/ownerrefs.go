package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	"k8s.io/apiserver/pkg/warning"
)

// DedupOwnerReferences drops from obj the owner references that repeat an
// earlier one (the same UID, and equal), with kube-apiserver's warning
// naming their UIDs. kube's handlers do it to a created or replaced body
// before its managed fields are recorded, and to every written object
// after mutating admission (afterAdmission), which the warning says.
func DedupOwnerReferences(ctx context.Context, obj runtime.Object, afterAdmission bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	refs := m.GetOwnerReferences()
	// Most writes repeat none: find the first repeat before copying.
	first := -1
	for i := 1; i < len(refs) && first < 0; i++ {
		if repeats(refs[:i], refs[i]) {
			first = i
		}
	}
	if first < 0 {
		return
	}
	kept := slices.Clone(refs[:first])
	var repeated []string
	for _, ref := range refs[first:] {
		if repeats(kept, ref) {
			repeated = append(repeated, string(ref.UID))
			continue
		}
		kept = append(kept, ref)
	}
	format := handlers.DuplicateOwnerReferencesWarningFormat
	if afterAdmission {
		format = handlers.DuplicateOwnerReferencesAfterMutatingAdmissionWarningFormat
	}
	warning.AddWarning(ctx, "", fmt.Sprintf(format, strings.Join(repeated, ", ")))
	m.SetOwnerReferences(kept)
}

// repeats tells whether refs holds ref already: the same UID, and equal.
func repeats(refs []metav1.OwnerReference, ref metav1.OwnerReference) bool {
	return slices.ContainsFunc(refs, func(k metav1.OwnerReference) bool { return k.UID == ref.UID && apiequality.Semantic.DeepEqual(k, ref) })
}
