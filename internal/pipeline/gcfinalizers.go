package pipeline

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/internal/registry"
)

// The garbage collection policies a type's strategy defaults deletes to.
const (
	// DeleteDependents lets the garbage collector delete dependents in the
	// background (the policy of most types).
	DeleteDependents = "DeleteDependents"
	// OrphanDependents keeps dependents, removing their owner reference.
	OrphanDependents = "OrphanDependents"
	// GCUnsupported: deletes of the type never wait for the garbage
	// collector (events).
	GCUnsupported = "Unsupported"
)

// gcFinalizers returns the finalizers a delete leaves on obj for the
// garbage collector, as kube-apiserver's generic registry computes them:
// "orphan" when dependents are to be orphaned, "foregroundDeletion" when
// they are to be deleted first; changed tells whether that differs from
// the finalizers obj has.
func gcFinalizers(ctx context.Context, strategy registry.Strategy, w registry.Write, opts *metav1.DeleteOptions, obj metav1.Object) (finalizers []string, changed bool) {
	policy := strategy.GarbageCollectionPolicy(ctx, w)
	if policy == GCUnsupported {
		return obj.GetFinalizers(), false
	}
	current := obj.GetFinalizers()
	for _, f := range current {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			finalizers = append(finalizers, f)
		}
	}
	if orphans(policy, opts, current) {
		finalizers = append(finalizers, metav1.FinalizerOrphanDependents)
	}
	if deletesDependentsFirst(opts, current) {
		finalizers = append(finalizers, metav1.FinalizerDeleteDependents)
	}
	return finalizers, !sameSet(current, finalizers)
}

// orphans reports whether the delete orphans the dependents: the request
// says so (orphanDependents, or a propagationPolicy), else a finalizer the
// object has, else the type's default.
func orphans(policy string, opts *metav1.DeleteOptions, finalizers []string) bool {
	if opts != nil && opts.OrphanDependents != nil {
		return *opts.OrphanDependents
	}
	if opts != nil && opts.PropagationPolicy != nil {
		return *opts.PropagationPolicy == metav1.DeletePropagationOrphan
	}
	for _, f := range finalizers {
		switch f {
		case metav1.FinalizerOrphanDependents:
			return true
		case metav1.FinalizerDeleteDependents:
			return false
		}
	}
	return policy == OrphanDependents
}

// deletesDependentsFirst reports whether the delete is in the foreground.
func deletesDependentsFirst(opts *metav1.DeleteOptions, finalizers []string) bool {
	if opts != nil && opts.OrphanDependents != nil {
		return false
	}
	if opts != nil && opts.PropagationPolicy != nil {
		return *opts.PropagationPolicy == metav1.DeletePropagationForeground
	}
	return slices.Contains(finalizers, metav1.FinalizerDeleteDependents)
}

func sameSet(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}
