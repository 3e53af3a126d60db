// Package controllerruntime is an example of a controller-runtime
// reconciler tested against kapi started in the test process
// (kapitest) instead of envtest: see copier_test.go.
//
// The reconciler keeps, for every ConfigMap labelled copy=yes, a Secret
// named after it with the same data, owned by the ConfigMap so that the
// garbage collector deletes the Secret with it.
package controllerruntime

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Copier reconciles ConfigMaps into Secrets.
type Copier struct {
	client.Client
}

// SetupWithManager registers the reconciler for labelled ConfigMaps and
// the Secrets it owns.
func (c *Copier) SetupWithManager(mgr ctrl.Manager) error {
	labelled, err := predicate.LabelSelectorPredicate(metav1.LabelSelector{MatchLabels: map[string]string{"copy": "yes"}})
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}, builder.WithPredicates(labelled)).
		Owns(&corev1.Secret{}).
		Complete(c)
}

// Reconcile makes the ConfigMap's Secret match it.
func (c *Copier) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := c.Get(ctx, req.NamespacedName, &cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: cm.Name + "-copy", Namespace: cm.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, c.Client, secret, func() error {
		secret.StringData = cm.Data
		return controllerutil.SetControllerReference(&cm, secret, c.Scheme())
	})
	if apierrors.IsConflict(err) {
		return ctrl.Result{Requeue: true}, nil
	}
	return ctrl.Result{}, err
}
