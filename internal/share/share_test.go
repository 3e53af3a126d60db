package share

import (
	"bytes"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// templatePod is a pod as a Deployment's template and kube's admission
// make them: two containers, the service account's projected volume (its
// name different in every pod), default tolerations.
func templatePod(name string) *corev1.Pod {
	container := func(container, image string, port int32) corev1.Container {
		return corev1.Container{
			Name: container, Image: image, Args: []string{"--port", fmt.Sprint(port)},
			Ports: []corev1.ContainerPort{{Name: container, ContainerPort: port, Protocol: corev1.ProtocolTCP}},
			Env: []corev1.EnvVar{
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
				{Name: "MODE", Value: "production"},
			},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
			},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(port)}}},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "config", MountPath: "/etc/" + container},
				{Name: "kube-api-access-" + name, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
			},
			TerminationMessagePath: "/dev/termination-log", ImagePullPolicy: corev1.PullIfNotPresent,
		}
	}
	seconds := int64(300)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", UID: types.UID("uid-of-" + name),
			Labels:      map[string]string{"app": "server", "pod-template-hash": "5d8f7c9b6d"},
			Annotations: map[string]string{"description": "a pod of the server"},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{container("server", "example.com/server:v1", 8080), container("sidecar", "example.com/sidecar:v1", 9090)},
			Volumes: []corev1.Volume{{Name: "kube-api-access-" + name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}}},
				},
			}}}},
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds},
			},
		},
	}
}

// decoded returns obj as the watch cache holds it: decoded from its
// protobuf encoding, every part its own allocation.
func decoded(t testing.TB, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	data, err := pod.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	out := &corev1.Pod{}
	if err := out.Unmarshal(data); err != nil {
		t.Fatal(err)
	}
	return out
}

func encoded(t testing.TB, pod *corev1.Pod) []byte {
	t.Helper()
	data, err := pod.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// same tells whether a and b are the very same part (the same memory).
func same(a, b any) bool {
	if as, ok := a.(string); ok {
		return unsafe.StringData(as) == unsafe.StringData(b.(string))
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Pointer() == vb.Pointer() && (va.Kind() != reflect.Slice || va.Len() == vb.Len())
}

// The pods of one template share what they have in common, keep what is
// their own, and encode exactly as before.
func TestPodsOfOneTemplateShareTheirEqualParts(t *testing.T) {
	table := NewTable()
	first, second := decoded(t, templatePod("a")), decoded(t, templatePod("b"))
	want := encoded(t, second)
	table.Parts(first)
	table.Parts(second)

	if got := encoded(t, second); !bytes.Equal(got, want) {
		t.Fatalf("sharing changed the pod's encoding")
	}
	shared := map[string][2]any{
		"labels":        {first.Labels, second.Labels},
		"annotations":   {first.Annotations, second.Annotations},
		"node selector": {first.Spec.NodeSelector, second.Spec.NodeSelector},
		"tolerations":   {first.Spec.Tolerations, second.Spec.Tolerations},
		"env":           {first.Spec.Containers[0].Env, second.Spec.Containers[0].Env},
		"args":          {first.Spec.Containers[1].Args, second.Spec.Containers[1].Args},
		"probe":         {first.Spec.Containers[0].ReadinessProbe, second.Spec.Containers[0].ReadinessProbe},
		"projection":    {first.Spec.Volumes[0].Projected, second.Spec.Volumes[0].Projected},
		"resources":     {first.Spec.Containers[0].Resources.Requests, second.Spec.Containers[0].Resources.Requests},
	}
	for part, pair := range shared {
		if !same(pair[0], pair[1]) {
			t.Errorf("the pods' equal %s are not shared", part)
		}
	}
	if same(first.Spec.Containers, second.Spec.Containers) || same(first.Spec.Volumes, second.Spec.Volumes) {
		t.Errorf("containers or volumes that differ (in a volume's name) are shared")
	}
	if !same(first.Spec.Containers[0].VolumeMounts[0].MountPath, second.Spec.Containers[0].VolumeMounts[0].MountPath) {
		t.Errorf("equal strings in parts that differ are not shared")
	}
	if second.Spec.Containers[0].Image != "example.com/server:v1" {
		t.Fatalf("the image changed to %q", second.Spec.Containers[0].Image)
	}
	if !same(first.Spec.Containers[0].Image, second.Spec.Containers[0].Image) {
		t.Errorf("the containers' equal images are not one string")
	}
	if first.Name == second.Name || first.UID == second.UID {
		t.Errorf("names or UIDs were merged")
	}
}

// A part that differs anywhere, however deep, is not shared.
func TestPartsThatDifferAreNotShared(t *testing.T) {
	table := NewTable()
	first, second := decoded(t, templatePod("a")), templatePod("b")
	second.Spec.Tolerations[1].Key = "other"
	second.Spec.Containers[0].Env[0].ValueFrom.FieldRef.FieldPath = "metadata.uid"
	second.Annotations["note"] = "other"
	second = decoded(t, second)
	table.Parts(first)
	table.Parts(second)
	for part, pair := range map[string][2]any{
		"tolerations": {first.Spec.Tolerations, second.Spec.Tolerations},
		"env":         {first.Spec.Containers[0].Env, second.Spec.Containers[0].Env},
		"field ref":   {first.Spec.Containers[0].Env[0].ValueFrom, second.Spec.Containers[0].Env[0].ValueFrom},
		"annotations": {first.Annotations, second.Annotations},
	} {
		if same(pair[0], pair[1]) {
			t.Errorf("the pods' different %s are shared", part)
		}
	}
	if !same(first.Spec.Tolerations[0].TolerationSeconds, second.Spec.Tolerations[0].TolerationSeconds) {
		t.Errorf("equal toleration seconds inside different tolerations are not shared")
	}
	if second.Spec.Tolerations[1].Key != "other" || second.Annotations["note"] != "other" || len(first.Annotations) != 1 {
		t.Errorf("sharing changed a value")
	}
}

// A shared slice has no spare capacity: appending to one object's slice
// never writes into another's.
func TestAppendingToASharedSliceCopies(t *testing.T) {
	table := NewTable()
	first, second := decoded(t, templatePod("a")), decoded(t, templatePod("b"))
	table.Parts(first)
	table.Parts(second)
	args := second.Spec.Containers[0].Args
	if cap(args) != len(args) {
		t.Fatalf("a shared slice has capacity %d for %d elements", cap(args), len(args))
	}
	grown := append(args, "--verbose")
	grown[0] = "--changed"
	if first.Spec.Containers[0].Args[0] != "--port" || len(first.Spec.Containers[0].Args) != 2 {
		t.Errorf("appending to one pod's arguments changed another's: %q", first.Spec.Containers[0].Args)
	}
}

// Pods of one controller share their parts whatever their labels; pods
// of other controllers, or with other labels and no controller, are not
// compared.
func TestSiblingsAreTheObjectsOfOneController(t *testing.T) {
	owned := func(name, owner string, labels map[string]string) *corev1.Pod {
		pod := templatePod(name)
		pod.Labels = labels
		if owner != "" {
			yes := true
			pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner, UID: types.UID(owner), Controller: &yes}}
		}
		return decoded(t, pod)
	}
	table := NewTable()
	first := owned("a", "rs-1", map[string]string{"pod": "a"})
	sibling := owned("b", "rs-1", map[string]string{"pod": "b"})
	stranger := owned("c", "rs-2", map[string]string{"pod": "a"})
	unowned := owned("d", "", map[string]string{"pod": "d"})
	for _, pod := range []*corev1.Pod{first, sibling, stranger, unowned} {
		table.Parts(pod)
	}
	if !same(first.Spec.Tolerations, sibling.Spec.Tolerations) {
		t.Errorf("pods of one controller with different labels do not share")
	}
	if same(first.Spec.Tolerations, stranger.Spec.Tolerations) || same(first.Spec.Tolerations, unowned.Spec.Tolerations) {
		t.Errorf("pods of different controllers, or with different labels, share")
	}
}

// A table holds no object: the last of its siblings goes once nothing
// else holds it.
func TestTableKeepsNoObjectAlive(t *testing.T) {
	table := NewTable()
	gone := make(chan struct{})
	pod := decoded(t, templatePod("a"))
	runtime.AddCleanup(pod, func(ch chan struct{}) { close(ch) }, gone)
	table.Parts(pod)
	pod = nil
	for range 10 {
		runtime.GC()
		select {
		case <-gone:
			table.Parts(decoded(t, templatePod("b"))) // compares with nothing
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("the table keeps the last object given alive")
}

// A table remembers at most maxSiblings kinds of sibling.
func TestTableIsBounded(t *testing.T) {
	table := NewTable()
	held := make([]*corev1.Pod, 0, maxSiblings+10)
	for i := range maxSiblings + 10 {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: fmt.Sprint("ns-", i)}}
		held = append(held, pod)
		table.Parts(pod)
	}
	if len(table.last) > maxSiblings {
		t.Errorf("the table remembers %d kinds of sibling", len(table.last))
	}
	runtime.KeepAlive(held)
}

// Tables serve objects of several caches at once.
func TestPartsConcurrently(t *testing.T) {
	table := NewTable()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				pod := decoded(t, templatePod(fmt.Sprint(w, "-", i)))
				want := encoded(t, pod)
				table.Parts(pod)
				if !bytes.Equal(encoded(t, pod), want) {
					t.Errorf("sharing changed a pod's encoding")
				}
			}
		})
	}
	wg.Wait()
}

// Objects of other shapes: what is in unexported fields or interfaces,
// and the values in maps, are compared but never set.
func TestPartsOfOtherShapes(t *testing.T) {
	type inner struct {
		Value   any
		private *int
		Times   []metav1.Time
		hidden  map[string]string
		nested  map[string][]int
	}
	type object struct {
		metav1.ObjectMeta
		Items   []inner
		Ptr     *inner
		ByName  map[string]inner
		Numbers []int64
		Raw     []byte
	}
	n := 1
	now := metav1.Now()
	build := func(private int) *object {
		return &object{
			Items: []inner{{Value: "x", private: &n, Times: []metav1.Time{now}}},
			Ptr: &inner{
				private: &private, Times: []metav1.Time{now},
				hidden: map[string]string{"k": "v"}, nested: map[string][]int{"k": {private}},
			},
			ByName:  map[string]inner{"a": {Times: []metav1.Time{now}}},
			Numbers: []int64{1, 2, 3},
			Raw:     []byte("raw bytes"),
		}
	}
	table := NewTable()
	a, b := build(1), build(1)
	table.Parts(a)
	table.Parts(b)
	if same(a.Items, b.Items) {
		t.Errorf("items holding a value in an interface are shared")
	}
	if !same(a.Items[0].Times, b.Items[0].Times) || !same(a.Ptr, b.Ptr) || !same(a.Numbers, b.Numbers) || !same(a.Raw, b.Raw) {
		t.Errorf("equal times, pointed-to structs, numbers or bytes are not shared")
	}
	if !same(a.ByName, b.ByName) {
		t.Errorf("maps of equal structs are not shared")
	}
	c := build(2)
	table.Parts(c)
	if same(b.Ptr, c.Ptr) || *c.Ptr.private != 2 {
		t.Errorf("structs differing in an unexported field are shared")
	}
	table.Parts(nil)
	table.Parts(object{})
	table.Parts(&struct{ X int }{})
}

// BenchmarkPartsPod measures sharing the parts of a decoded pod of a
// template others were decoded from before.
func BenchmarkPartsPod(b *testing.B) {
	table := NewTable()
	pods := make([]*corev1.Pod, 1000)
	for i := range pods {
		pods[i] = decoded(b, templatePod(fmt.Sprint("pod-", i)))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%len(pods) == 0 && i > 0 {
			b.StopTimer()
			for j := range pods {
				pods[j] = decoded(b, templatePod(fmt.Sprint("pod-", i+j)))
			}
			b.StartTimer()
		}
		table.Parts(pods[i%len(pods)])
	}
}
