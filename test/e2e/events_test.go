package e2e

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestEventTTL: events go some time after their last write
// (--event-ttl), as kube-apiserver's expire with their etcd lease, in
// both APIs that serve them; an event written again meanwhile stays.
func TestEventTTL(t *testing.T) {
	k := startKapi(t, "--event-ttl=10s")
	cs := k.clientset()
	now := metav1.NowMicro()
	regarding := corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "x", APIVersion: "v1"}
	core, err := cs.CoreV1().Events("default").Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "core"},
		InvolvedObject: regarding, Reason: "Tested", Message: "m", Type: corev1.EventTypeNormal,
		FirstTimestamp: metav1.Time(now), LastTimestamp: metav1.Time(now), Count: 1,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.EventsV1().Events("default").Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "new"},
		Regarding:  regarding, Reason: "Tested", Note: "n", Type: corev1.EventTypeNormal,
		EventTime: now, Action: "Test", ReportingController: "kapi.dev/test", ReportingInstance: "t",
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	renewed := func() {
		core.LastTimestamp, core.Count = metav1.Now(), core.Count+1
		if core, err = cs.CoreV1().Events("default").Update(ctx, core, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(5 * time.Second)
	renewed()
	waitFor(t, 20*time.Second, "the events.k8s.io event to expire", func() bool {
		_, err := cs.EventsV1().Events("default").Get(ctx, "new", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if _, err := cs.CoreV1().Events("default").Get(ctx, "core", metav1.GetOptions{}); err != nil {
		t.Errorf("the event written again 5 s after the other was deleted with it: %v", err)
	}
	waitFor(t, 20*time.Second, "the core event to expire", func() bool {
		_, err := cs.CoreV1().Events("default").Get(ctx, "core", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}
