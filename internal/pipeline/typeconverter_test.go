package pipeline

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/kapi-dev/kapi/internal/codecs"
)

func livePod() *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", ResourceVersion: "7", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "nginx", Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}}}},
			Volumes:    []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
}

// liveServiceAccount has a secret reference without a name, the key of its
// list: kube-apiserver's validation lets it in, the schema walk of the
// field manager does not.
func liveServiceAccount() *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "builder", ResourceVersion: "7", Labels: map[string]string{"app": "web"}},
		Secrets:    []corev1.ObjectReference{{Namespace: "default"}},
	}
}

// record creates live's content as manager "a", then updates it as
// manager "b" to what change makes of it, each write's objects typed
// without the schema walk unless validating, and answers the managed
// fields of the result.
func record(t *testing.T, c *recordedObjectTypes, validating bool, live runtime.Object, change func(runtime.Object)) []metav1.ManagedFieldsEntry {
	t.Helper()
	var conv managedfields.TypeConverter = c
	if validating {
		conv = c.TypeConverter
	}
	gvk := live.GetObjectKind().GroupVersionKind()
	fm, err := managedfields.NewDefaultFieldManager(conv, versionConvertor{codecs.Scheme, nil}, noDefaults{}, kindedCreater{}, gvk, gvk.GroupVersion(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	update := func(live, next runtime.Object, manager string) runtime.Object {
		if validating {
			return fm.UpdateNoErrors(live, next, manager)
		}
		return c.whileRecording(live, next, func() runtime.Object { return fm.UpdateNoErrors(live, next, manager) })
	}
	empty, _ := kindedCreater{}.New(gvk)
	live = update(empty, live.DeepCopyObject(), "a")
	next := live.DeepCopyObject()
	change(next)
	m, _ := meta.Accessor(update(live, next, "b"))
	return m.GetManagedFields()
}

func addLabel(obj runtime.Object) {
	m, _ := meta.Accessor(obj)
	m.GetLabels()["tier"] = "front"
}

func TestRecordedObjectsAreTypedAsValidatedOnes(t *testing.T) {
	c, err := builtinTypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	unvalidated := record(t, c, false, livePod(), addLabel)
	validated := record(t, c, true, livePod(), addLabel)
	if len(validated) != 2 {
		t.Fatalf("the validating converter recorded %d managers, want 2", len(validated))
	}
	if len(unvalidated) != len(validated) {
		t.Fatalf("managers: %d, validating converter %d", len(unvalidated), len(validated))
	}
	for i := range validated {
		if string(unvalidated[i].FieldsV1.Raw) != string(validated[i].FieldsV1.Raw) || unvalidated[i].Manager != validated[i].Manager {
			t.Errorf("entry %d: %s %s, validating converter %s %s", i, unvalidated[i].Manager, unvalidated[i].FieldsV1.Raw, validated[i].Manager, validated[i].FieldsV1.Raw)
		}
	}
	n := 0
	c.recorded.Range(func(any, any) bool { n++; return true })
	if n != 0 {
		t.Errorf("%d objects still marked after the writes", n)
	}
}

// Objects the schema walk would refuse fail the comparison just the same,
// and the field manager keeps the managed fields the live object had, as
// it does when typing fails: a create of such an object records none, and
// an update that makes it valid records none either.
func TestInvalidObjectsStillFailTheRecording(t *testing.T) {
	c, err := builtinTypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.TypeConverter.ObjectToTyped(liveServiceAccount(), nil...); err == nil {
		t.Fatal("the validating converter types a secret reference without a name")
	}
	live := liveServiceAccount()
	c.whileRecording(live, live, func() runtime.Object {
		if _, err := c.ObjectToTyped(live, nil...); err != nil {
			t.Errorf("a write's object is walked against its schema: %v", err)
		}
		return nil
	})
	nameSecret := func(obj runtime.Object) {
		addLabel(obj)
		obj.(*corev1.ServiceAccount).Secrets[0].Name = "token"
	}
	unvalidated := record(t, c, false, liveServiceAccount(), nameSecret)
	validated := record(t, c, true, liveServiceAccount(), nameSecret)
	if len(unvalidated) != 0 || len(validated) != 0 {
		t.Errorf("managed fields after an update of an invalid live object: %d entries, validating converter %d; want none", len(unvalidated), len(validated))
	}
}
