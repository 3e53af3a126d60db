package controllerruntime

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestCopier runs a controller-runtime manager against kapi and checks
// what envtest cannot show: the Secret the reconciler made goes with its
// ConfigMap (garbage collection), and a deleted namespace goes with
// everything in it (namespace controller).
func TestCopier(t *testing.T) {
	env := kapitest.Start(t)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Copier{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}))
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "team", Labels: map[string]string{"copy": "yes"}},
		Data:       map[string]string{"color": "blue"},
	}
	must(t, c.Create(ctx, cm))

	secret := &corev1.Secret{}
	copyKey := types.NamespacedName{Namespace: "team", Name: "settings-copy"}
	eventually(t, "the copy", func() bool { return c.Get(ctx, copyKey, secret) == nil })
	if string(secret.Data["color"]) != "blue" || len(secret.OwnerReferences) != 1 || secret.OwnerReferences[0].UID != cm.UID {
		t.Fatalf("copy = %v owned by %v", secret.Data, secret.OwnerReferences)
	}

	must(t, c.Delete(ctx, cm))
	eventually(t, "the garbage collector to delete the copy", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, copyKey, &corev1.Secret{}))
	})

	must(t, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "more", Namespace: "team", Labels: map[string]string{"copy": "yes"}}}))
	must(t, c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}))
	eventually(t, "the namespace and its content to go", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, types.NamespacedName{Name: "team"}, &corev1.Namespace{}))
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func eventually(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
