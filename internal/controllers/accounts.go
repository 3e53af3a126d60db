package controllers

import (
	"context"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// ensureServiceAccounts creates the kube-system service accounts the
// controllers act as, those not there yet, as kube-controller-manager's
// client builder creates each controller's before it starts it
// (--use-service-account-credentials): `kubectl get serviceaccounts -n
// kube-system` lists them, and tokens can be requested for them.
func ensureServiceAccounts(ctx context.Context, client kubernetes.Interface, names []string, logger *slog.Logger) {
	accounts := client.CoreV1().ServiceAccounts(metav1.NamespaceSystem)
	slices.Sort(names)
	missing := slices.Compact(names)
	// Those that fail (the server busy as it starts) are tried again.
	_ = wait.PollUntilContextCancel(ctx, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		missing = slices.DeleteFunc(missing, func(name string) bool {
			_, err := accounts.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: name}}
				if _, err = accounts.Create(ctx, sa, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
					err = nil
				}
			}
			if err != nil && ctx.Err() == nil {
				logger.Error("creating a controller's service account", "name", name, "err", err)
			}
			return err == nil
		})
		return len(missing) == 0, nil
	})
}
