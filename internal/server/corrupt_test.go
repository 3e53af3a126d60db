package server

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/internal/controllers"
)

// corrupt overwrites the stored bytes of an object with bytes that decode
// into nothing, as a disk error or a bad tool would.
func corrupt(t *testing.T, s *Server, key string) {
	t.Helper()
	ctx := context.Background()
	kv, _, err := s.store.Get(ctx, []byte(key), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.Update(ctx, []byte(key), []byte("\x00not an object"), kv.ModRevision); err != nil {
		t.Fatal(err)
	}
}

func statusOf(t *testing.T, err error) metav1.Status {
	t.Helper()
	var status apierrors.APIStatus
	if !apierrors.IsInternalError(err) && !apierrors.IsConflict(err) && !apierrors.IsInvalid(err) &&
		apierrors.ReasonForError(err) != metav1.StatusReasonStoreReadError {
		t.Fatalf("unexpected error %v", err)
	}
	status, _ = err.(apierrors.APIStatus)
	return status.Status()
}

// TestCorruptObjectDeletion: an object whose stored bytes cannot be
// decoded fails its reads and every list of its resource with
// kube-apiserver's errors, cannot be deleted normally, and is deleted with
// ignoreStoreReadErrorWithClusterBreakingPotential, which refuses other
// delete options and objects that read fine. Watchers that saw the object
// see it deleted.
func TestCorruptObjectDeletion(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, true)
	s := startServer(t, onlyLifecycle...)
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	cms := client.CoreV1().ConfigMaps("default")
	for _, name := range []string{"bad", "good"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: name, Finalizers: []string{"example.com/keep"},
		}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=bad"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := <-w.ResultChan(); ev.Type != watch.Added {
		t.Fatalf("first event %v", ev.Type)
	}
	const key = "/registry/core/configmaps/default/bad"
	corrupt(t, s, key)

	_, err = cms.Get(ctx, "bad", metav1.GetOptions{})
	if st := statusOf(t, err); st.Code != http.StatusInternalServerError || !strings.Contains(st.Message, "corrupt object") {
		t.Errorf("get: %+v", st)
	}
	_, err = cms.List(ctx, metav1.ListOptions{})
	st := statusOf(t, err)
	if st.Reason != metav1.StatusReasonStoreReadError || st.Code != http.StatusInternalServerError ||
		!strings.HasPrefix(st.Message, "failed to read one or more configmaps from the storage") ||
		len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != key {
		t.Errorf("list: %+v", st)
	}
	if err := cms.Delete(ctx, "bad", metav1.DeleteOptions{}); !apierrors.IsInternalError(err) {
		t.Errorf("a plain delete of a corrupt object: %v", err)
	}

	unsafe := metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: ptr.To(true)}
	withGrace := *unsafe.DeepCopy()
	withGrace.GracePeriodSeconds = ptr.To[int64](0)
	err = cms.Delete(ctx, "bad", withGrace)
	if st := statusOf(t, err); st.Code != http.StatusUnprocessableEntity || !strings.Contains(st.Message, "cannot be set together with .gracePeriodSeconds") {
		t.Errorf("with a grace period: %+v", st)
	}
	err = cms.Delete(ctx, "good", unsafe)
	if st := statusOf(t, err); st.Code != http.StatusConflict || !strings.Contains(st.Message, "the object is decodable from storage") {
		t.Errorf("a decodable object: %+v", st)
	}
	err = cms.DeleteCollection(ctx, unsafe, metav1.ListOptions{})
	if st := statusOf(t, err); st.Code != http.StatusUnprocessableEntity || !strings.Contains(st.Message, "DELETECOLLECTION") {
		t.Errorf("deletecollection: %+v", st)
	}
	dryRun := *unsafe.DeepCopy()
	dryRun.DryRun = []string{metav1.DryRunAll}
	if err := cms.Delete(ctx, "bad", dryRun); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if _, err := cms.Get(ctx, "bad", metav1.GetOptions{}); !apierrors.IsInternalError(err) {
		t.Errorf("after the dry run: %v", err)
	}

	if err := cms.Delete(ctx, "bad", unsafe); err != nil {
		t.Fatalf("unsafe delete: %v", err)
	}
	if _, err := cms.Get(ctx, "bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the unsafe delete: %v", err)
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		if cm.Name == "bad" {
			t.Error("the deleted object is still listed")
		}
	}
	if ev := <-w.ResultChan(); ev.Type != watch.Deleted || ev.Object.(*corev1.ConfigMap).Name != "bad" {
		t.Errorf("watch event %v %+v", ev.Type, ev.Object)
	}
	if err := cms.Delete(ctx, "bad", unsafe); !apierrors.IsNotFound(err) {
		t.Errorf("deleting it again: %v", err)
	}
}

// TestCorruptObjectAtStart: a corrupt object found when the server starts
// does not keep its resource from being served; it fails lists until it is
// deleted. Without AllowUnsafeMalformedObjectDeletion the option is
// ignored and the list error is the plain internal error.
func TestCorruptObjectAtStart(t *testing.T) {
	dir := t.TempDir()
	start := func() *Server {
		s, err := Start(context.Background(), Config{
			DataDir: dir, Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler), Controllers: onlyLifecycle,
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ctx := context.Background()
	s := start()
	client := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig))
	if _, err := client.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bad"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	corrupt(t, s, "/registry/core/secrets/default/bad")
	s.Shutdown(ctx)

	s = start()
	defer s.Shutdown(ctx)
	secrets := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig)).CoreV1().Secrets("default")
	unsafe := metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: ptr.To(true)}

	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, false)
	_, err := secrets.List(ctx, metav1.ListOptions{})
	if st := statusOf(t, err); st.Reason != metav1.StatusReasonInternalError {
		t.Errorf("list without the feature: %+v", st)
	}
	if err := secrets.Delete(ctx, "bad", unsafe); !apierrors.IsInternalError(err) {
		t.Errorf("the option without the feature: %v", err)
	}

	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, true)
	_, err = secrets.List(ctx, metav1.ListOptions{})
	if st := statusOf(t, err); st.Reason != metav1.StatusReasonStoreReadError {
		t.Errorf("list with the feature: %+v", st)
	}
	if err := secrets.Delete(ctx, "bad", unsafe); err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list after the delete: %v", err)
	}
}

// onlyLifecycle runs the controllers that decide deletion, for tests that
// other controllers' writes would only slow down.
var onlyLifecycle = controllers.Selection{
	controllers.NamespaceController, controllers.ServiceAccountController, controllers.GarbageCollector,
	controllers.ClusterRoleAggregationController,
}

// TestPodGracefulDeletion: a pod on a node is kept for its grace period
// when deleted (deletionTimestamp at its end, deletionGracePeriodSeconds),
// a later delete may only shorten it, and a delete with no grace period
// removes it; a pod on no node, or one that has finished, goes at once,
// as in kube-apiserver.
func TestPodGracefulDeletion(t *testing.T) {
	s := startServer(t, onlyLifecycle...)
	ctx := context.Background()
	pods := kubernetes.NewForConfigOrDie(restConfig(t, s.Kubeconfig)).CoreV1().Pods("default")
	create := func(name, node string, phase corev1.PodPhase) {
		t.Helper()
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if phase != "" {
			created.Status.Phase = phase
			if _, err := pods.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	grace := func(name string) (int64, *metav1.Time) {
		t.Helper()
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if pod.DeletionGracePeriodSeconds == nil {
			return -1, pod.DeletionTimestamp
		}
		return *pod.DeletionGracePeriodSeconds, pod.DeletionTimestamp
	}

	create("running", "node-1", "")
	before := time.Now()
	if err := pods.Delete(ctx, "running", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	period, at := grace("running")
	if period != 30 || at == nil || at.Time.Before(before.Add(29*time.Second)) {
		t.Errorf("after a delete: grace %d, deletion timestamp %v, want 30 s from now", period, at)
	}
	if err := pods.Delete(ctx, "running", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](60)}); err != nil {
		t.Fatal(err)
	}
	if period, _ := grace("running"); period != 30 {
		t.Errorf("a longer grace period changed it to %d", period)
	}
	if err := pods.Delete(ctx, "running", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](5)}); err != nil {
		t.Fatal(err)
	}
	if period, at := grace("running"); period != 5 || at.Time.After(before.Add(10*time.Second)) {
		t.Errorf("a shorter grace period: %d, %v", period, at)
	}
	if err := pods.Delete(ctx, "running", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "running", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after a delete with no grace period: %v", err)
	}

	create("pending", "", "")
	create("finished", "node-1", corev1.PodSucceeded)
	for _, name := range []string{"pending", "finished"} {
		if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := pods.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s after a delete: %v, want it gone at once", name, err)
		}
	}
}
