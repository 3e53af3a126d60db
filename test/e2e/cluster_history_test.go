package e2e

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// change is one write as a watch reports it: its type, the object's name
// and the resource version (the etcd revision) it was made at.
type change struct {
	typ  watch.EventType
	name string
	rv   int64
}

func (c change) String() string { return fmt.Sprintf("%s %s@%d", c.typ, c.name, c.rv) }

// TestClusterFailoverHistory writes and watches through three replicas
// while a replica is killed and restarted and an etcd member is killed and
// restarted. Writers fail over to the next replica; watchers move to
// another replica at every end of their stream, resuming from their last
// resource version. Then every watcher's history must be etcd's history
// of the namespace exactly (ordered, nothing missed, nothing repeated),
// and every acknowledged write must be in it.
func TestClusterFailoverHistory(t *testing.T) {
	kc := startKapiCluster(t, 3, withoutRootCA, "--bookmark-interval", "1s")
	admin := kc.failoverClient(0)
	const ns = "history"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := admin.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	startRV, _ := strconv.ParseInt(list.ResourceVersion, 10, 64)

	stopWriting := make(chan struct{})
	var writers sync.WaitGroup
	var ackMu sync.Mutex
	var acked []change // writes the server acknowledged
	for w := range 4 {
		writers.Go(func() {
			writes := writeUntil(kc, w, stopWriting)
			ackMu.Lock()
			defer ackMu.Unlock()
			acked = append(acked, writes...)
		})
	}

	endRV := make(chan int64, 1) // the sentinel's revision, once written
	var watchers sync.WaitGroup
	histories := make([][]change, 3)
	resumes := make([]int, 3)
	for w := range 3 {
		watchers.Go(func() { histories[w], resumes[w] = watchUntil(t, kc, w, ns, startRV, endRV) })
	}

	// Chaos, a step every two seconds.
	pause := func() { time.Sleep(2 * time.Second) }
	pause()
	kc.replicas[1].kill9()
	pause()
	kc.restart(1)
	pause()
	kc.etcd.members[1].kill()
	pause()
	kc.etcd.members[1].restart()
	pause()
	close(stopWriting)
	writers.Wait()
	end, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, configMap("zz-end"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	endAt, _ := strconv.ParseInt(end.ResourceVersion, 10, 64)
	endRV <- endAt
	watchers.Wait()

	history := etcdHistory(t, kc.etcd, "/registry/core/configmaps/"+ns+"/", startRV, endAt)
	// The restarted replica serves a watch from before its start, as
	// one moved there from another replica would be.
	if late := watchOne(t, kc.client(1), ns, startRV, endAt); !slices.Equal(late, history) {
		t.Errorf("a watch from %d on the restarted replica differs from etcd's history at %s", startRV, firstDifference(late, history))
	}
	t.Logf("%d acknowledged writes, %d changes in etcd's history; watchers resumed %v times", len(acked), len(history), resumes)
	if len(acked) < 20 {
		t.Fatalf("only %d writes acknowledged", len(acked))
	}
	for w, h := range histories {
		if !slices.Equal(h, history) {
			t.Errorf("watcher %d's history differs from etcd's at %s", w, firstDifference(h, history))
		}
		if resumes[w] < 3 {
			t.Errorf("watcher %d resumed %d times, want it moved between replicas at least 3 times", w, resumes[w])
		}
	}
	inHistory := map[string]bool{}
	for _, c := range history {
		inHistory[c.String()] = true
		inHistory[string(c.typ)+" "+c.name] = true
	}
	for _, a := range acked {
		key := a.String()
		if a.rv == 0 { // deletes answer without the revision
			key = string(a.typ) + " " + a.name
		}
		if !inHistory[key] {
			t.Errorf("acknowledged write %s is not in etcd's history", key)
		}
	}
}

// writeUntil creates, updates twice and deletes ConfigMaps through a
// failover client starting at replica w until stop closes, and returns the
// writes the server acknowledged. A write that fails is given up (it may
// or may not have happened) and the writer goes on with a new object.
func writeUntil(kc *kapiCluster, w int, stop chan struct{}) []change {
	client := kc.failoverClient(w % len(kc.replicas)).CoreV1().ConfigMaps("history")
	var acked []change
	ack := func(typ watch.EventType, name, rv string) {
		n, _ := strconv.ParseInt(rv, 10, 64)
		acked = append(acked, change{typ, name, n})
	}
	for j := 0; ; j++ {
		select {
		case <-stop:
			return acked
		default:
		}
		name := fmt.Sprintf("w%d-%d", w, j)
		cm, err := client.Create(ctx, configMap(name), metav1.CreateOptions{})
		if err != nil {
			continue
		}
		ack(watch.Added, name, cm.ResourceVersion)
		for v := range 2 {
			cm.Data = map[string]string{"v": strconv.Itoa(v + 2)}
			if cm, err = client.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				break
			}
			ack(watch.Modified, name, cm.ResourceVersion)
		}
		if err != nil {
			continue
		}
		if err := client.Delete(ctx, name, metav1.DeleteOptions{}); err == nil {
			ack(watch.Deleted, name, "")
		}
	}
}

// watchUntil watches the namespace's ConfigMaps from startRV, starting at
// replica w and moving to the next replica whenever a stream ends (each
// asks for a short timeout) or a replica does not answer, resuming from
// the last resource version seen (an event's or a bookmark's). It returns
// the changes seen once it has seen the revision endRV delivers, and how
// many times it resumed.
func watchUntil(t *testing.T, kc *kapiCluster, w int, ns string, startRV int64, endRV chan int64) ([]change, int) {
	var seen []change
	last, end := startRV, int64(0)
	resumes := 0
	deadline := time.Now().Add(3 * time.Minute)
	for r := w; end == 0 || last < end; r = (r + 1) % len(kc.replicas) {
		if time.Now().After(deadline) {
			t.Errorf("watcher %d: at %d after 3 minutes, want %d", w, last, end)
			return seen, resumes
		}
		select {
		case end = <-endRV:
			endRV <- end // for the other watchers
		default:
		}
		timeout := int64(1 + (resumes+w)%3)
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		stream, err := kc.client(r).CoreV1().ConfigMaps(ns).Watch(wctx, metav1.ListOptions{
			ResourceVersion: strconv.FormatInt(last, 10), AllowWatchBookmarks: true, TimeoutSeconds: &timeout,
		})
		if err != nil {
			cancel()
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				t.Errorf("watcher %d: resuming from %d on replica %d: %v", w, last, r+1, err)
				return seen, resumes
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		resumes++
		for ev := range stream.ResultChan() {
			if ev.Type == watch.Error {
				if status := apierrors.FromObject(ev.Object); apierrors.IsResourceExpired(status) || apierrors.IsGone(status) {
					t.Errorf("watcher %d: from %d on replica %d: %v", w, last, r+1, status)
				}
				break
			}
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok {
				t.Errorf("watcher %d: %s event of %T", w, ev.Type, ev.Object)
				break
			}
			rv, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64)
			if ev.Type != watch.Bookmark {
				seen = append(seen, change{ev.Type, cm.Name, rv})
			}
			last = rv
		}
		stream.Stop()
		cancel()
	}
	return seen, resumes
}

// watchOne reads one watch stream from rv until it reaches revision end.
func watchOne(t *testing.T, client *kubernetes.Clientset, ns string, rv, end int64) []change {
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	stream, err := client.CoreV1().ConfigMaps(ns).Watch(wctx, metav1.ListOptions{ResourceVersion: strconv.FormatInt(rv, 10)})
	if err != nil {
		t.Errorf("watch from %d: %v", rv, err)
		return nil
	}
	defer stream.Stop()
	var seen []change
	for ev := range stream.ResultChan() {
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if !ok {
			t.Errorf("watch from %d: %s event %v", rv, ev.Type, ev.Object)
			return seen
		}
		n, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64)
		seen = append(seen, change{ev.Type, cm.Name, n})
		if n >= end {
			break
		}
	}
	return seen
}

// etcdHistory reads from etcd every change under prefix after from, up to
// and including revision to, as a watch would report them.
func etcdHistory(t *testing.T, c *etcdCluster, prefix string, from, to int64) []change {
	client := c.client()
	defer client.Close()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var history []change
	for resp := range client.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(from+1)) {
		if err := resp.Err(); err != nil {
			t.Fatalf("reading etcd's history: %v", err)
		}
		for _, ev := range resp.Events {
			c := change{typ: watch.Modified, name: path.Base(string(ev.Kv.Key)), rv: ev.Kv.ModRevision}
			switch {
			case ev.Type == clientv3.EventTypeDelete:
				c.typ = watch.Deleted
			case ev.Kv.CreateRevision == ev.Kv.ModRevision:
				c.typ = watch.Added
			}
			history = append(history, c)
			if c.rv >= to {
				return history
			}
		}
	}
	t.Fatalf("etcd's history ended before revision %d", to)
	return nil
}

// firstDifference describes where two histories part.
func firstDifference(got, want []change) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("change %d: %s, expected %s", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("length: %d changes, expected %d", len(got), len(want))
}
