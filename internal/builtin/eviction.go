package builtin

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	pdbhelper "k8s.io/component-helpers/apps/poddisruptionbudget"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"

	"github.com/kapi-dev/kapi/internal/pipeline"
)

var pdbsGVR = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}

// maxDisruptedPods is how many evictions a budget may hold that its
// controller has not yet seen, as kube-apiserver limits them.
const maxDisruptedPods = 2000

// evictor serves pods/eviction as kube-apiserver does: a pod that a
// PodDisruptionBudget protects is deleted only if the budget allows a
// disruption (which the eviction takes, in the budget's status), else the
// eviction is refused with a 429; pods that cannot count against a budget
// (pending, finished, being deleted) are deleted at once. The pod gets the
// DisruptionTarget condition before it is deleted.
type evictor struct{ p *pipeline.Pipeline }

func (e *evictor) evict(ctx context.Context, namespace, _ string, obj runtime.Object, dry bool) (runtime.Object, error) {
	eviction := obj.(*policyv1.Eviction)
	opts := &metav1.DeleteOptions{}
	if eviction.DeleteOptions != nil {
		opts = eviction.DeleteOptions.DeepCopy()
	}
	if opts.IgnoreStoreReadErrorWithClusterBreakingPotential != nil && *opts.IgnoreStoreReadErrorWithClusterBreakingPotential {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: "policy", Kind: "Eviction"}, eviction.Name, field.ErrorList{
			field.Invalid(field.NewPath("deleteOptions", "ignoreStoreReadErrorWithClusterBreakingPotential"), true,
				"can not be set for pod eviction, try after removing the option"),
		})
	}
	dry = dry || len(opts.DryRun) > 0
	pod, deleted, err := e.deleteIfBudgetIgnored(ctx, namespace, eviction.Name, opts, dry)
	if err != nil {
		return nil, err
	}
	if deleted {
		return success(), nil
	}
	budgets, err := e.budgetsOf(ctx, pod)
	if err != nil {
		return nil, err
	}
	switch {
	case len(budgets) > 1:
		return &metav1.Status{Status: metav1.StatusFailure, Code: 500,
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}, nil
	case len(budgets) == 0:
		return success(), e.deletePod(ctx, pod, opts, dry)
	}
	budget := budgets[0]
	if !podutil.IsPodReady(pod) && unhealthyEvictable(budget) {
		// An unhealthy pod does not take a disruption; it must still be
		// the pod the budget's decision saw, whatever version the client
		// named (kube-apiserver replaces it).
		err := e.deletePod(ctx, pod, atVersion(opts, pod.ResourceVersion), dry)
		if apierrors.IsConflict(err) && versionUnset(opts) {
			return nil, stillProcessing(budget.Name)
		}
		return success(), err
	}
	if err := e.takeDisruption(ctx, pod, budget, dry); err != nil {
		return nil, err
	}
	return success(), e.deletePod(ctx, pod, opts, dry)
}

// versionUnset tells whether a deletion names no resourceVersion
// precondition (an empty one is named, and checked as none).
func versionUnset(opts *metav1.DeleteOptions) bool {
	return opts.Preconditions == nil || opts.Preconditions.ResourceVersion == nil
}

// atVersion is opts with a precondition on the resource version rv.
func atVersion(opts *metav1.DeleteOptions, rv string) *metav1.DeleteOptions {
	opts = opts.DeepCopy()
	if opts.Preconditions == nil {
		opts.Preconditions = &metav1.Preconditions{}
	}
	opts.Preconditions.ResourceVersion = &rv
	return opts
}

func success() *metav1.Status { return &metav1.Status{Status: metav1.StatusSuccess} }

// evictionRetry is kube-apiserver's backoff for an eviction whose pod
// changed under it (policy's EvictionsRetry).
var evictionRetry = wait.Backoff{Steps: 20, Duration: 500 * time.Millisecond, Factor: 1, Jitter: 0.1}

// deleteIfBudgetIgnored reads the pod and deletes it if no budget can
// count it (see canIgnoreBudget). A pod that changes between the read and
// the deletion is read again, as kube-apiserver does, unless the client
// named the version to delete.
func (e *evictor) deleteIfBudgetIgnored(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions, dry bool) (pod *corev1.Pod, deleted bool, err error) {
	retryOn := apierrors.IsConflict
	if !versionUnset(opts) {
		retryOn = func(error) bool { return false }
	}
	pods := e.p.Registry().Snapshot().Lookup(podsGVR)
	err = retry.OnError(evictionRetry, retryOn, func() error {
		current, err := pods.Get(ctx, namespace, name)
		if err != nil {
			return err
		}
		pod = current.(*corev1.Pod)
		if !canIgnoreBudget(pod) {
			return nil
		}
		deleteOpts := opts
		if enforceResourceVersion(pod) && versionUnset(opts) {
			// A version the client named, though older, is kept.
			deleteOpts = atVersion(opts, pod.ResourceVersion)
		}
		if err := e.deletePod(ctx, pod, deleteOpts, dry); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	return pod, deleted, err
}

// canIgnoreBudget: pods that are pending, finished or being deleted do
// not count against a budget.
func canIgnoreBudget(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return true
	}
	return pod.DeletionTimestamp != nil
}

// enforceResourceVersion: a pod that could still become ready is deleted
// only at the version the eviction decided on.
func enforceResourceVersion(pod *corev1.Pod) bool {
	return pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed && pod.DeletionTimestamp == nil
}

// unhealthyEvictable reports whether a budget lets an unready pod go
// without taking a disruption.
func unhealthyEvictable(budget *policyv1.PodDisruptionBudget) bool {
	if p := budget.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
		return true
	}
	return budget.Status.CurrentHealthy >= budget.Status.DesiredHealthy && budget.Status.DesiredHealthy > 0
}

// budgetsOf lists the budgets whose selector matches the pod.
func (e *evictor) budgetsOf(ctx context.Context, pod *corev1.Pod) ([]*policyv1.PodDisruptionBudget, error) {
	list, err := e.p.Registry().Snapshot().Lookup(pdbsGVR).List(ctx, pod.Namespace, nil)
	if err != nil {
		return nil, err
	}
	var out []*policyv1.PodDisruptionBudget
	for _, item := range list.(*policyv1.PodDisruptionBudgetList).Items {
		selector, err := metav1.LabelSelectorAsSelector(item.Spec.Selector)
		if err != nil || selector.Empty() || !selector.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, item.DeepCopy())
	}
	return out, nil
}

// takeDisruption takes one of the disruptions the budget allows, noting
// the pod among its disrupted pods, or refuses the eviction.
func (e *evictor) takeDisruption(ctx context.Context, pod *corev1.Pod, budget *policyv1.PodDisruptionBudget, dry bool) error {
	if dry {
		// As kube's, a dry run checks the budget as read and writes
		// nothing (no admission sees a status write).
		return budgetAllows(budget)
	}
	store := e.p.Registry().Snapshot().Lookup(pdbsGVR)
	// kube-apiserver writes the budget's status through its loopback
	// client, whose writes are the manager kube-apiserver's.
	_, err := e.p.Update(ctx, store, budget.Namespace, budget.Name, pipeline.Options{Subresource: "status", Manager: "kube-apiserver"},
		func(obj runtime.Object) (runtime.Object, error) {
			pdb := obj.(*policyv1.PodDisruptionBudget).DeepCopy()
			if err := budgetAllows(pdb); err != nil {
				return nil, err
			}
			pdb.Status.DisruptionsAllowed--
			if pdb.Status.DisruptionsAllowed == 0 {
				pdbhelper.UpdateDisruptionAllowedCondition(pdb)
			}
			if pdb.Status.DisruptedPods == nil {
				pdb.Status.DisruptedPods = map[string]metav1.Time{}
			}
			pdb.Status.DisruptedPods[pod.Name] = metav1.Time{Time: time.Now()}
			return pdb, nil
		})
	return err
}

// budgetAllows returns kube-apiserver's refusal when a budget allows no
// disruption now.
func budgetAllows(pdb *policyv1.PodDisruptionBudget) error {
	pdbResource := schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}
	forbidden := func(reason, cause string) error {
		err := apierrors.NewForbidden(pdbResource, pdb.Name, errors.New(reason))
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
			Type: policyv1.DisruptionBudgetCause, Message: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: %s", pdb.Name, cause),
		})
		return err
	}
	switch {
	case pdb.Status.ObservedGeneration < pdb.Generation:
		return stillProcessing(pdb.Name)
	case pdb.Status.DisruptionsAllowed < 0:
		return forbidden("pdb disruptions allowed is negative", "pdb disruptions allowed is negative")
	case len(pdb.Status.DisruptedPods) > maxDisruptedPods:
		return forbidden("DisruptedPods map too big - too many evictions not confirmed by PDB controller",
			"too many pending evictions not confirmed by PDB controller")
	case pdb.Status.DisruptionsAllowed == 0:
		err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
			Type: policyv1.DisruptionBudgetCause, Message: noDisruptionMessage(pdb),
		})
		return err
	}
	return nil
}

// noDisruptionMessage says why a budget allows no disruption.
func noDisruptionMessage(pdb *policyv1.PodDisruptionBudget) string {
	condition := meta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	failed := condition != nil && condition.Status == metav1.ConditionFalse && condition.Message != ""
	switch {
	case failed && condition.Reason == policyv1.SyncFailedReason:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", pdb.Name, condition.Message)
	case pdb.Status.CurrentHealthy <= pdb.Status.DesiredHealthy:
		return fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)
	case failed:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", pdb.Name, condition.Reason, condition.Message)
	}
	return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name)
}

// stillProcessing is the refusal while a budget's controller has not
// caught up with it.
func stillProcessing(name string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: policyv1.DisruptionBudgetCause, Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", name),
	})
	return err
}

// deletePod marks the pod as a disruption target and deletes it with the
// eviction's options, as kube-apiserver's eviction storage does: the
// options' preconditions are checked on the pod the condition goes onto
// (an empty one is none), and a version they name moves on with the
// condition's write.
func (e *evictor) deletePod(ctx context.Context, pod *corev1.Pod, opts *metav1.DeleteOptions, dry bool) error {
	store := e.p.Registry().Snapshot().Lookup(podsGVR)
	if !dry {
		// The pipeline retries its own write conflicts; a precondition that
		// no longer holds is the eviction's conflict to report.
		updated, err := e.p.Update(ctx, store, pod.Namespace, pod.Name, pipeline.Options{Subresource: "status", Unadmitted: true}, func(obj runtime.Object) (runtime.Object, error) {
			current := obj.(*corev1.Pod).DeepCopy()
			if err := checkPreconditions(opts.Preconditions, current); err != nil {
				return nil, err
			}
			podutil.UpdatePodCondition(&current.Status, &corev1.PodCondition{
				Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: metav1.Now(),
			})
			return current, nil
		})
		if err != nil {
			return err
		}
		if !versionUnset(opts) {
			opts = atVersion(opts, updated.(*corev1.Pod).ResourceVersion)
		}
	}
	// As kube's eviction storage, the pod's storage deletes it past admission.
	_, _, err := e.p.Delete(ctx, store, pod.Namespace, pod.Name, opts, pipeline.Options{DryRun: dry, Unadmitted: true})
	return err
}

// checkPreconditions is kube's check of an eviction's preconditions on
// the pod it is about to mark, naming the kind as kube-apiserver's does.
func checkPreconditions(pre *metav1.Preconditions, pod *corev1.Pod) error {
	if pre == nil {
		return nil
	}
	podKind := schema.GroupResource{Resource: "Pod"}
	if uid := pre.UID; uid != nil && *uid != "" && *uid != pod.UID {
		return apierrors.NewConflict(podKind, pod.Name,
			fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *uid, pod.UID))
	}
	if rv := pre.ResourceVersion; rv != nil && *rv != "" && *rv != pod.ResourceVersion {
		return apierrors.NewConflict(podKind, pod.Name,
			fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *rv, pod.ResourceVersion))
	}
	return nil
}
