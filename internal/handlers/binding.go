package handlers

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
	"github.com/kapi-dev/kapi/internal/resources"
)

// virtualCreate carries out the create of a resource that is an operation
// on other objects rather than a stored object (SPEC R6).
type virtualCreate func(ctx context.Context, namespace string, obj runtime.Object, dry bool) error

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// bindPod assigns a pod to a node, as the scheduler does through
// POST .../bindings: the pod gets spec.nodeName and a PodScheduled
// condition, and a pod already bound is a conflict.
func (a *API) bindPod(ctx context.Context, namespace string, obj runtime.Object, dry bool) error {
	binding := obj.(*corev1.Binding)
	gr := schema.GroupResource{Resource: "pods/binding"}
	if binding.Target.Kind != "" && binding.Target.Kind != "Node" {
		return apierrors.NewInvalid(schema.GroupKind{Kind: "Binding"}, binding.Name, nil)
	}
	if binding.Target.Name == "" {
		return apierrors.NewBadRequest("target.name is required")
	}
	bind := func(current runtime.Object) (runtime.Object, error) {
		pod := current.(*corev1.Pod)
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(gr, binding.Name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(gr, binding.Name, fmt.Errorf("pod %s is already assigned to node %q", pod.Name, pod.Spec.NodeName))
		}
		pod.Spec.NodeName = binding.Target.Name
		for k, v := range binding.Annotations {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[k] = v
		}
		setPodScheduled(pod)
		return pod, nil
	}
	store := a.stores[podsGVR]
	if dry {
		current, err := store.Get(ctx, namespace, binding.Name)
		if err == nil {
			_, err = bind(current)
		}
		return err
	}
	_, err := store.Update(ctx, namespace, binding.Name, bind)
	return err
}

func setPodScheduled(pod *corev1.Pod) {
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodScheduled {
			pod.Status.Conditions[i] = cond
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, cond)
}

// createVirtual serves a create that is an operation, such as a binding
// POSTed to bindings or to pods/NAME/binding.
func (a *API) createVirtual(w http.ResponseWriter, r *http.Request, req *request.Info, dry bool) {
	key := req.Resource
	if req.Subresource != "" {
		key += "/" + req.Subresource
	}
	virtual := a.virtual[key]
	info := a.resources.Lookup(req.Group, req.Version, req.Resource)
	sub := info.Subresource(req.Subresource)
	if virtual == nil || (sub != nil && sub.Kind == "") {
		writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Group: req.Group, Resource: key}, "create"))
		return
	}
	// The body is of the sub-resource's kind, which a resource of that
	// kind serves too (Binding: bindings).
	store := a.storeForKind(info, sub)
	obj, err := decodeBody(w, r, store)
	if err != nil {
		writeError(w, r, err)
		return
	}
	m := mustAccessor(obj)
	if err := matchNamespace(m, req, store); err != nil {
		writeError(w, r, err)
		return
	}
	if req.Name != "" && m.GetName() != req.Name {
		writeError(w, r, apierrors.NewBadRequest("name in URL does not match name in Binding object"))
		return
	}
	if err := virtual(r.Context(), req.Namespace, obj, dry); err != nil {
		writeError(w, r, err)
		return
	}
	writeCreated(w, r)
}

// storeForKind finds the store of the kind a sub-resource exchanges.
func (a *API) storeForKind(info *resources.Info, sub *resources.SubresourceInfo) *registry.Store {
	if sub == nil {
		return a.stores[info.GroupVersionResource()]
	}
	group, version := sub.Group, sub.Version
	if version == "" {
		group, version = info.Group, info.Version
	}
	for _, candidate := range a.resources.Resources(group, version) {
		if candidate.Kind == sub.Kind {
			return a.stores[candidate.GroupVersionResource()]
		}
	}
	return nil
}

// writeCreated answers a virtual create the way kube-apiserver does: a
// success Status with code 201.
func writeCreated(w http.ResponseWriter, r *http.Request) {
	status := &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusCreated}
	writeObject(w, r, http.StatusCreated, status, statusGVK, codecs.Factory.SupportedMediaTypes())
}
