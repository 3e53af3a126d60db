package builtin

import (
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// sharePodResources makes the resource lists of a pod the watch cache
// decoded (its containers' requests and limits, its overhead, the
// resources its status reports) the very maps of equal lists of other
// pods. The pods of one template, or of one LimitRange's defaults, ask
// for the same resources: a list is a Go map of Quantities, some 600 bytes
// each, two per container, a quarter of a decoded pod.
//
// The cache's objects are read only to everyone (informers, admission,
// the controllers, which copy an object before they change it), so a
// shared map is never written; a write path decodes its own copies.
func sharePodResources(obj runtime.Object) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	shareRequirements := func(r *corev1.ResourceRequirements) {
		r.Limits = resourceLists.share(r.Limits)
		r.Requests = resourceLists.share(r.Requests)
	}
	for i := range pod.Spec.InitContainers {
		shareRequirements(&pod.Spec.InitContainers[i].Resources)
	}
	for i := range pod.Spec.Containers {
		shareRequirements(&pod.Spec.Containers[i].Resources)
	}
	for i := range pod.Spec.EphemeralContainers {
		shareRequirements(&pod.Spec.EphemeralContainers[i].Resources)
	}
	if pod.Spec.Resources != nil {
		shareRequirements(pod.Spec.Resources)
	}
	pod.Spec.Overhead = resourceLists.share(pod.Spec.Overhead)
	for _, statuses := range [][]corev1.ContainerStatus{
		pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses, pod.Status.EphemeralContainerStatuses,
	} {
		for i := range statuses {
			statuses[i].AllocatedResources = resourceLists.share(statuses[i].AllocatedResources)
			if statuses[i].Resources != nil {
				shareRequirements(statuses[i].Resources)
			}
		}
	}
}

// maxSharedLists bounds the lists held for sharing: a cluster's pods ask
// for a few hundred distinct ones, and past the bound a list is kept as
// it is (held by its pod alone). The table holds at most some 2.5 MB.
const maxSharedLists = 4096

// resourceLists holds one map of each distinct resource list.
var resourceLists = &listTable{lists: map[string]corev1.ResourceList{}}

type listTable struct {
	mu    sync.Mutex
	lists map[string]corev1.ResourceList
}

// share returns the held list equal to l, holding l if there is none.
func (t *listTable) share(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 {
		return l
	}
	key := listKey(l)
	t.mu.Lock()
	defer t.mu.Unlock()
	if held, ok := t.lists[key]; ok {
		return held
	}
	if len(t.lists) < maxSharedLists {
		t.lists[key] = l
	}
	return l
}

// listKey names a list by its resources and their quantities as they are
// written (and in which format they are kept, which later arithmetic on
// them follows).
func listKey(l corev1.ResourceList) string {
	names := make([]corev1.ResourceName, 0, len(l))
	for name := range l {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		q := l[name]
		b.WriteString(string(name))
		b.WriteByte('=')
		b.WriteString(q.String())
		b.WriteByte('/')
		b.WriteString(string(q.Format))
		b.WriteByte(';')
	}
	return b.String()
}
