package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestShutdownUnderLoad: SIGTERM while writers create objects and watchers
// follow them: kapi exits cleanly and promptly, ends the watches (their
// streams close without an error event), and after a restart every write
// it acknowledged is there.
func TestShutdownUnderLoad(t *testing.T) {
	k := startKapi(t)
	config := rest.CopyConfig(k.config)
	config.QPS, config.Burst = -1, -1 // load, not client-side throttling
	cs := kubernetes.NewForConfigOrDie(config)

	type watcher struct {
		events int
		errors []string
		closed chan struct{}
	}
	var watchers []*watcher
	for range 4 {
		w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wt := &watcher{closed: make(chan struct{})}
		watchers = append(watchers, wt)
		go func() {
			defer close(wt.closed)
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					wt.errors = append(wt.errors, fmt.Sprint(ev.Object))
					continue
				}
				wt.events++
			}
		}()
	}

	var (
		mu           sync.Mutex
		acknowledged []string
		writers      sync.WaitGroup
	)
	stopWriting := make(chan struct{})
	for i := range 8 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for n := 0; n < 5000; n++ { // bounded; the shutdown ends it sooner
				select {
				case <-stopWriting:
					return
				default:
				}
				name := fmt.Sprintf("w%d-%d", i, n)
				_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"n": name},
				}, metav1.CreateOptions{})
				if err == nil {
					mu.Lock()
					acknowledged = append(acknowledged, name)
					mu.Unlock()
				}
			}
		}()
	}
	waitFor(t, 30*time.Second, "some writes", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acknowledged) >= 200
	})

	stopped := time.Now()
	k.stop()
	took := time.Since(stopped)
	close(stopWriting)
	writers.Wait()
	if code := k.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("kapi exited with %d after SIGTERM; log:\n%s", code, k.log)
	}
	if took > 10*time.Second {
		t.Errorf("kapi took %v to stop", took) // it waits for watches no longer than that
	}
	for i, w := range watchers {
		select {
		case <-w.closed:
		case <-time.After(10 * time.Second):
			t.Fatalf("watch %d still open after the server stopped", i)
		}
		if len(w.errors) > 0 {
			t.Errorf("watch %d ended with errors: %v", i, w.errors)
		}
		if w.events == 0 {
			t.Errorf("watch %d saw no events", i)
		}
	}

	k.start()
	list, err := k.clientset().CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, cm := range list.Items {
		stored[cm.Name] = true
	}
	lost := 0
	for _, name := range acknowledged {
		if !stored[name] {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged writes lost", lost, len(acknowledged))
	}
	t.Logf("%d writes acknowledged, shutdown took %v", len(acknowledged), took)
}
