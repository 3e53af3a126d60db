package simnodes

import (
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// What a kubelet needs before it starts a pod's containers: the
// ConfigMaps, Secrets and claims its volumes mount, and the ConfigMaps
// and Secrets its containers' environment reads. A pod missing one of them
// waits on its node as on a real one, and starts once it is there. The
// errors are the kubelet's own words.

// unmountable is why a volume of pod cannot be mounted: its name and the
// kubelet's error, or "" and nil when every volume can be.
func (s *simulator) unmountable(pod *corev1.Pod) (string, error) {
	for _, v := range pod.Spec.Volumes {
		if err := s.volumeProblem(pod.Namespace, v); err != nil {
			return v.Name, err
		}
	}
	return "", nil
}

func (s *simulator) volumeProblem(namespace string, v corev1.Volume) error {
	switch {
	case v.ConfigMap != nil:
		return s.configMapProblem(namespace, v.ConfigMap.Name, ptr.Deref(v.ConfigMap.Optional, false), v.ConfigMap.Items)
	case v.Secret != nil:
		return s.secretProblem(namespace, v.Secret.SecretName, ptr.Deref(v.Secret.Optional, false), v.Secret.Items)
	case v.Projected != nil:
		var errs []error
		for _, source := range v.Projected.Sources {
			if source.ConfigMap != nil {
				errs = append(errs, s.configMapProblem(namespace, source.ConfigMap.Name, ptr.Deref(source.ConfigMap.Optional, false), source.ConfigMap.Items))
			}
			if source.Secret != nil {
				errs = append(errs, s.secretProblem(namespace, source.Secret.Name, ptr.Deref(source.Secret.Optional, false), source.Secret.Items))
			}
		}
		return utilerrors.NewAggregate(errs)
	case v.PersistentVolumeClaim != nil:
		return s.claimProblem(namespace, v.PersistentVolumeClaim.ClaimName)
	}
	return nil
}

// configMapProblem is the configMap volume plugin's error for a ConfigMap
// it cannot project the keys asked for of.
func (s *simulator) configMapProblem(namespace, name string, optional bool, items []corev1.KeyToPath) error {
	cm, err := s.configMaps.ConfigMaps(namespace).Get(name)
	if err != nil {
		return missing(err, optional)
	}
	for _, item := range items {
		_, inData := cm.Data[item.Key]
		_, inBinary := cm.BinaryData[item.Key]
		if !inData && !inBinary && !optional {
			return fmt.Errorf("configmap references non-existent config key: %s", item.Key)
		}
	}
	return nil
}

// secretProblem is the secret volume plugin's error for a Secret it cannot
// project the keys asked for of.
func (s *simulator) secretProblem(namespace, name string, optional bool, items []corev1.KeyToPath) error {
	secret, err := s.secrets.Secrets(namespace).Get(name)
	if err != nil {
		return missing(err, optional)
	}
	for _, item := range items {
		if _, ok := secret.Data[item.Key]; !ok && !optional {
			return fmt.Errorf("references non-existent secret key: %s", item.Key)
		}
	}
	return nil
}

// errUnboundClaim stands for a claim the kubelet waits for: missing, or
// not bound to a volume yet. The kubelet reports it only once its wait
// for the pod's volumes times out, minutes later.
var errUnboundClaim = errors.New("the claim is not bound")

func (s *simulator) claimProblem(namespace, name string) error {
	claim, err := s.claims.PersistentVolumeClaims(namespace).Get(name)
	if err != nil || claim.Status.Phase != corev1.ClaimBound || claim.DeletionTimestamp != nil {
		return errUnboundClaim
	}
	return nil
}

// missing is the error of a ConfigMap or Secret not found (the listers'
// NotFound, in the kubelet's words: `configmap "x" not found`), or nil if
// it was optional.
func missing(err error, optional bool) error {
	if apierrors.IsNotFound(err) && optional {
		return nil
	}
	return err
}

// unconfigurable is why the kubelet cannot make container c's
// environment, as its CreateContainerConfigError says, or nil.
func (s *simulator) unconfigurable(namespace string, c corev1.Container) error {
	for _, from := range c.EnvFrom {
		switch {
		case from.ConfigMapRef != nil:
			if _, err := s.configMaps.ConfigMaps(namespace).Get(from.ConfigMapRef.Name); err != nil {
				if err := missing(err, ptr.Deref(from.ConfigMapRef.Optional, false)); err != nil {
					return err
				}
			}
		case from.SecretRef != nil:
			if _, err := s.secrets.Secrets(namespace).Get(from.SecretRef.Name); err != nil {
				if err := missing(err, ptr.Deref(from.SecretRef.Optional, false)); err != nil {
					return err
				}
			}
		}
	}
	for _, env := range c.Env {
		if env.ValueFrom == nil {
			continue
		}
		if ref := env.ValueFrom.ConfigMapKeyRef; ref != nil {
			optional := ptr.Deref(ref.Optional, false)
			cm, err := s.configMaps.ConfigMaps(namespace).Get(ref.Name)
			if err != nil {
				if err := missing(err, optional); err != nil {
					return err
				}
				continue
			}
			if _, ok := cm.Data[ref.Key]; !ok && !optional {
				return fmt.Errorf("couldn't find key %v in ConfigMap %v/%v", ref.Key, namespace, ref.Name)
			}
		}
		if ref := env.ValueFrom.SecretKeyRef; ref != nil {
			optional := ptr.Deref(ref.Optional, false)
			secret, err := s.secrets.Secrets(namespace).Get(ref.Name)
			if err != nil {
				if err := missing(err, optional); err != nil {
					return err
				}
				continue
			}
			if _, ok := secret.Data[ref.Key]; !ok && !optional {
				return fmt.Errorf("couldn't find key %v in Secret %v/%v", ref.Key, namespace, ref.Name)
			}
		}
	}
	return nil
}

// waitingPods are the pods that wait for something of their namespace,
// by namespace, with what each waits for: a ConfigMap, Secret or claim
// that comes or changes there sends them to be synced again.
type waitingPods struct {
	mu   sync.Mutex
	keys map[string]map[string]string // namespace -> pod key -> what it waits for
}

// add records that the pod of key waits for what, and reports whether it
// waited for something else before (or for nothing).
func (w *waitingPods) add(namespace, key, what string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keys == nil {
		w.keys = map[string]map[string]string{}
	}
	if w.keys[namespace] == nil {
		w.keys[namespace] = map[string]string{}
	}
	before, was := w.keys[namespace][key]
	w.keys[namespace][key] = what
	return !was || before != what
}

func (w *waitingPods) remove(namespace, key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.keys[namespace], key)
	if len(w.keys[namespace]) == 0 {
		delete(w.keys, namespace)
	}
}

func (w *waitingPods) in(namespace string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var keys []string
	for key := range w.keys[namespace] {
		keys = append(keys, key)
	}
	return keys
}

// wakeWaiting sends the pods waiting in obj's namespace to be synced.
func (s *simulator) wakeWaiting(obj any) {
	if o, ok := obj.(metav1.Object); ok {
		for _, key := range s.waiting.in(o.GetNamespace()) {
			s.podQueue.Add(key)
		}
	}
}

func keyOf(obj any) string {
	key, _ := cache.MetaNamespaceKeyFunc(obj)
	return key
}
