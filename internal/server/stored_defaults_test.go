package server

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestObjectsReadFromStorageAreDefaulted: a new claim's strategy clears
// its status after the request is defaulted, so its phase is not stored;
// kube-apiserver defaults what it reads from storage, and the claim is
// Pending in the create's answer and in every read (the persistent volume
// binder acts on that phase).
func TestObjectsReadFromStorageAreDefaulted(t *testing.T) {
	s := startServer(t, onlyLifecycle...)
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "claim"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	created, err := client.CoreV1().PersistentVolumeClaims("default").Create(ctx, claim, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Status.Phase != corev1.ClaimPending {
		t.Errorf("created claim's phase %q, want Pending", created.Status.Phase)
	}
	read, err := client.CoreV1().PersistentVolumeClaims("default").Get(ctx, "claim", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if read.Status.Phase != corev1.ClaimPending {
		t.Errorf("claim read back with phase %q, want Pending", read.Status.Phase)
	}
	list, err := client.CoreV1().PersistentVolumeClaims("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Status.Phase != corev1.ClaimPending {
		t.Errorf("listed claims %+v, want one Pending", list.Items)
	}
}
