package server

import (
	"context"
	"io"
	"log"
	"net/http"
	"strings"
	"testing"

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
			DataDir: dir, Listen: "127.0.0.1:0", Logger: log.New(io.Discard, "", 0), Controllers: onlyLifecycle,
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
