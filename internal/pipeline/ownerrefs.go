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
	kept := make([]metav1.OwnerReference, 0, len(refs))
	var repeated []string
	for _, ref := range refs {
		if slices.ContainsFunc(kept, func(k metav1.OwnerReference) bool { return k.UID == ref.UID && apiequality.Semantic.DeepEqual(k, ref) }) {
			repeated = append(repeated, string(ref.UID))
			continue
		}
		kept = append(kept, ref)
	}
	if len(repeated) == 0 {
		return
	}
	format := handlers.DuplicateOwnerReferencesWarningFormat
	if afterAdmission {
		format = handlers.DuplicateOwnerReferencesAfterMutatingAdmissionWarningFormat
	}
	warning.AddWarning(ctx, "", fmt.Sprintf(format, strings.Join(repeated, ", ")))
	m.SetOwnerReferences(kept)
}
