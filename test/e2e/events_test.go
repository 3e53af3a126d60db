package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// TestEventTTL: events go some time after their last write
// (--event-ttl), as kube-apiserver's expire with their etcd lease, in
// both APIs that serve them; an event written again meanwhile stays.
func TestEventTTL(t *testing.T) {
	t.Parallel() // spends most of its time waiting for events to expire, so it waits beside the tests that wait for controllers
	k := startKapi(t, "--event-ttl=10s")
	cs := k.clientset()
	now := metav1.NowMicro()
	regarding := corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "x", APIVersion: "v1"}
	_, err := cs.CoreV1().Events("default").Create(ctx, &corev1.Event{
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
	// Timestamps say nothing of an event's life: one dated in the future
	// goes as the others.
	future := metav1.NewTime(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
	if _, err := cs.CoreV1().Events("default").Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "future"},
		InvolvedObject: regarding, Reason: "Tested", Message: "m", Type: corev1.EventTypeNormal,
		FirstTimestamp: future, LastTimestamp: future, Count: 1,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	// Any write renews an event, one that changes no timestamp too.
	if _, err := cs.CoreV1().Events("default").Patch(ctx, "core", types.MergePatchType, []byte(`{"metadata":{"labels":{"seen":"again"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the events.k8s.io event and the future one to expire", func() bool {
		_, errNew := cs.EventsV1().Events("default").Get(ctx, "new", metav1.GetOptions{})
		_, errFuture := cs.CoreV1().Events("default").Get(ctx, "future", metav1.GetOptions{})
		return apierrors.IsNotFound(errNew) && apierrors.IsNotFound(errFuture)
	})
	if _, err := cs.CoreV1().Events("default").Get(ctx, "core", metav1.GetOptions{}); err != nil {
		t.Errorf("the event patched 5 s after the others were deleted with them: %v", err)
	}
	waitFor(t, 20*time.Second, "the core event to expire", func() bool {
		_, err := cs.CoreV1().Events("default").Get(ctx, "core", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// TestEventsOfBothAPIs: the scheduler writes events.k8s.io Events and the
// kubelet core ones, and both APIs see both, as kube-apiserver keeps them
// in one store: kubectl describe shows a pod's whole story.
func TestEventsOfBothAPIs(t *testing.T) {
	k := startKapi(t, "--simulated-nodes=1")
	k.mustKubectl("run", "web", "--image=nginx")
	waitFor(t, 30*time.Second, "the pod to run and its events to be written", func() bool {
		out, _ := k.kubectl("describe", "pod", "web")
		return strings.Contains(out, "Container started")
	})
	describe := k.mustKubectl("describe", "pod", "web")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`Normal +Scheduled +\S+ +default-scheduler +Successfully assigned default/web to node-1`),
		regexp.MustCompile(`Normal +Pulled +\S+ +kubelet +Container image "nginx" already present on machine and can be accessed by the pod`),
		regexp.MustCompile(`Normal +Created +\S+ +kubelet +Container created`),
		regexp.MustCompile(`Normal +Started +\S+ +kubelet +Container started`),
	} {
		if !want.MatchString(describe) {
			t.Errorf("kubectl describe pod has no line matching %s:\n%s", want, describe)
		}
	}
	cs := k.clientset()
	newAPI, err := cs.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, e := range newAPI.Items {
		reasons[e.Reason] = e.Regarding.FieldPath
	}
	if _, ok := reasons["Scheduled"]; !ok {
		t.Errorf("events.k8s.io has no Scheduled event: %v", reasons)
	}
	if reasons["Started"] != "spec.containers{web}" {
		t.Errorf("events.k8s.io's kubelet Started event regards %q, want spec.containers{web}", reasons["Started"])
	}

	// Field selectors and watches of events.k8s.io see core events too.
	selected, err := cs.EventsV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=web,reason=Started"})
	if err != nil {
		t.Fatal(err)
	}
	if len(selected.Items) != 1 {
		t.Errorf("events.k8s.io events regarding web with reason Started: %+v", selected.Items)
	}
	w, err := cs.EventsV1().Events("default").Watch(ctx, metav1.ListOptions{
		FieldSelector: "regarding.name=other", ResourceVersion: selected.ResourceVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := cs.CoreV1().Events("default").Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "other.1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "other"},
		Reason:         "Tested", Message: "through the core API", Type: corev1.EventTypeNormal,
		FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		e, ok := ev.Object.(*eventsv1.Event)
		if !ok || ev.Type != watch.Added || e.Note != "through the core API" || e.Regarding.Name != "other" {
			t.Errorf("events.k8s.io watch got %v %#v", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Error("the events.k8s.io watch did not see an event created through the core API")
	}
}
