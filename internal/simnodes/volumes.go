package simnodes

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// Provisioner is the name of the simulated volumes' provisioner: claims
// of a StorageClass naming it get a volume on the node their pod is
// scheduled to, as a local-path provisioner gives them (a directory that
// is never made), and lose it once released, as the class says.
const Provisioner = "kapi.dev/simulated"

// StandardClass is the default StorageClass kapi makes for simulated
// nodes, as kind's "standard": volumes provisioned once a pod uses them.
var StandardClass = &storagev1.StorageClass{
	ObjectMeta: metav1.ObjectMeta{
		Name:        "standard",
		Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
	},
	Provisioner:       Provisioner,
	ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
	VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
}

// Keys of the volume queue: claims and volumes.
const (
	claimKey  = "claim:"
	volumeKey = "volume:"
)

func (s *simulator) enqueueClaim(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		s.volumeQueue.Add(claimKey + key)
	}
}

func (s *simulator) enqueueVolume(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		s.volumeQueue.Add(volumeKey + key)
	}
}

func (s *simulator) syncVolumeKey(ctx context.Context, key string) error {
	if name, ok := strings.CutPrefix(key, volumeKey); ok {
		return s.syncVolume(ctx, name)
	}
	namespace, name, err := cache.SplitMetaNamespaceKey(strings.TrimPrefix(key, claimKey))
	if err != nil {
		return nil
	}
	return s.syncClaim(ctx, namespace, name)
}

// syncClaim provisions a volume for a claim the persistent volume
// controller has handed to the simulated provisioner, once its pod's node
// is chosen when the class waits for one.
func (s *simulator) syncClaim(ctx context.Context, namespace, name string) error {
	claim, err := s.claims.PersistentVolumeClaims(namespace).Get(name)
	if err != nil {
		return err
	}
	if claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil || claim.Annotations[storagehelpers.AnnStorageProvisioner] != Provisioner {
		return nil
	}
	class, err := s.classes.Get(ptr.Deref(claim.Spec.StorageClassName, ""))
	if err != nil {
		return err
	}
	node := claim.Annotations[storagehelpers.AnnSelectedNode]
	if node == "" && ptr.Deref(class.VolumeBindingMode, storagev1.VolumeBindingImmediate) == storagev1.VolumeBindingWaitForFirstConsumer {
		return nil // until the scheduler picks the node
	}
	_, err = s.client.CoreV1().PersistentVolumes().Create(ctx, volumeFor(claim, class, node), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// volumeFor is the volume provisioned for claim, on node unless it is "".
func volumeFor(claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, node string) *corev1.PersistentVolume {
	name := "pvc-" + string(claim.UID)
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{storagehelpers.AnnDynamicallyProvisioned: Provisioner},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: claim.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   claim.Spec.AccessModes,
			VolumeMode:                    claim.Spec.VolumeMode,
			StorageClassName:              class.Name,
			MountOptions:                  class.MountOptions,
			PersistentVolumeReclaimPolicy: ptr.Deref(class.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete),
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID, ResourceVersion: claim.ResourceVersion,
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: "/var/lib/kapi-simulated/" + name, Type: ptr.To(corev1.HostPathDirectoryOrCreate),
			}},
		},
	}
	if node != "" {
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node},
			}}}},
		}}
	}
	return pv
}

// syncVolume deletes a simulated volume released by its claim when its
// reclaim policy says so, as an external provisioner does.
func (s *simulator) syncVolume(ctx context.Context, name string) error {
	pv, err := s.volumes.Get(name)
	if err != nil {
		return err
	}
	if pv.Annotations[storagehelpers.AnnDynamicallyProvisioned] != Provisioner || pv.DeletionTimestamp != nil ||
		pv.Status.Phase != corev1.VolumeReleased || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		return nil
	}
	return s.client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{
		Preconditions: metav1.NewUIDPreconditions(string(pv.UID)),
	})
}
