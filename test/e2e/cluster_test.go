package e2e

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/internal/storage/etcd/etcdtest"
)

// kapiCluster is kapi replicas sharing one etcd cluster and one PKI
// directory, as docs/CLUSTER.md sets them up.
type kapiCluster struct {
	t        *testing.T
	etcd     *etcdCluster
	replicas []*kapi
	// mu guards the replicas' addresses, which a restart changes while
	// failover clients dial.
	mu sync.Mutex
}

// startKapiCluster starts a three-member etcd cluster and n kapi replicas
// over it.
func startKapiCluster(t *testing.T, n int, extraArgs ...string) *kapiCluster {
	t.Helper()
	kc := &kapiCluster{t: t, etcd: startEtcdCluster(t, 3)}
	args := append([]string{"--storage", "etcd", "--etcd-servers", kc.etcd.endpoints(), "--pki-dir", t.TempDir()}, extraArgs...)
	for range n {
		// One at a time: the first creates the shared PKI.
		kc.replicas = append(kc.replicas, startKapi(t, args...))
	}
	return kc
}

// address is replica i's host:port.
func (kc *kapiCluster) address(i int) string {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	u, err := url.Parse(kc.replicas[i].config.Host)
	if err != nil {
		panic(err)
	}
	return u.Host
}

// restart starts replica i again after kill9, on its data directory and
// a new port.
func (kc *kapiCluster) restart(i int) {
	kc.mu.Lock()
	old := kc.replicas[i]
	kc.mu.Unlock()
	k := &kapi{t: old.t, dataDir: old.dataDir, args: old.args}
	k.start()
	kc.t.Cleanup(k.stop)
	kc.mu.Lock()
	kc.replicas[i] = k
	kc.mu.Unlock()
}

// client is a clientset of replica i alone.
func (kc *kapiCluster) client(i int) *kubernetes.Clientset {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	return kc.replicas[i].clientset()
}

// failoverClient is a clientset that connects to replica first and, when
// a replica does not answer, to the next: what a load balancer in front
// of the replicas gives a client.
func (kc *kapiCluster) failoverClient(first int) *kubernetes.Clientset {
	kc.mu.Lock()
	config := rest.CopyConfig(kc.replicas[first].config)
	kc.mu.Unlock()
	dialer := &net.Dialer{Timeout: time.Second}
	config.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var lastErr error
		for i := range kc.replicas {
			conn, err := dialer.DialContext(ctx, network, kc.address((first+i)%len(kc.replicas)))
			if err == nil {
				return conn, nil
			}
			lastErr = err
		}
		return nil, lastErr
	}
	config.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(config)
	if err != nil {
		kc.t.Fatal(err)
	}
	return cs
}

// TestClusterReplicasShareState: replicas over one etcd cluster serve the
// same data at once, with the same resource versions; a paged list goes
// on through another replica; a watch through one sees writes through
// another and resumes on a third.
func TestClusterReplicasShareState(t *testing.T) {
	kc := startKapiCluster(t, 3, withoutRootCA)
	a, b, c := kc.client(0), kc.client(1), kc.client(2)
	ns := "shared"
	if _, err := a.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	created, err := a.CoreV1().ConfigMaps(ns).Create(ctx, configMap("first"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A consistent read on another replica sees the write at once.
	got, err := b.CoreV1().ConfigMaps(ns).Get(ctx, "first", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("read through replica 2 of a write through replica 1: %v", err)
	}
	if got.ResourceVersion != created.ResourceVersion || got.UID != created.UID {
		t.Fatalf("replica 2 has resourceVersion %s uid %s, replica 1 wrote %s %s", got.ResourceVersion, got.UID, created.ResourceVersion, created.UID)
	}

	// Paged list: a page from each replica, one snapshot.
	for i := range 8 {
		if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, configMap(fmt.Sprintf("cm-%d", i)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	opts := metav1.ListOptions{Limit: 4}
	listRV := ""
	for i := 0; ; i++ {
		page, err := kc.client(i%3).CoreV1().ConfigMaps(ns).List(ctx, opts)
		if err != nil {
			t.Fatalf("page %d through replica %d: %v", i, i%3+1, err)
		}
		if listRV == "" {
			listRV = page.ResourceVersion
		} else if page.ResourceVersion != listRV {
			t.Fatalf("page %d at resourceVersion %s, the first at %s", i, page.ResourceVersion, listRV)
		}
		for _, cm := range page.Items {
			names = append(names, cm.Name)
		}
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
		if i == 0 {
			// A write between pages is not in the snapshot.
			if _, err := a.CoreV1().ConfigMaps(ns).Create(ctx, configMap("late"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{"cm-0", "cm-1", "cm-2", "cm-3", "cm-4", "cm-5", "cm-6", "cm-7", "first"}
	if !slices.Equal(names, want) {
		t.Fatalf("paged list across replicas: %v, want %v", names, want)
	}

	// A watch through b sees writes through c; it resumes on a.
	w, err := b.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: listRV})
	if err != nil {
		t.Fatal(err)
	}
	var writes []string
	for i := range 3 {
		cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, fmt.Sprintf("cm-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data = map[string]string{"v": "2"}
		updated, err := c.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		writes = append(writes, "MODIFIED "+updated.Name+" "+updated.ResourceVersion)
	}
	seen := []string{}
	last := ""
	for len(seen) < 4 { // "late", then the three updates
		select {
		case ev := <-w.ResultChan():
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok {
				t.Fatalf("watch event %s: %#v", ev.Type, ev.Object)
			}
			seen = append(seen, fmt.Sprintf("%s %s %s", ev.Type, cm.Name, cm.ResourceVersion))
			last = cm.ResourceVersion
		case <-time.After(10 * time.Second):
			t.Fatalf("watch through replica 2 saw %v, writes through replica 3: %v", seen, writes)
		}
	}
	w.Stop()
	if !strings.HasPrefix(seen[0], "ADDED late ") || !slices.Equal(seen[1:], writes) {
		t.Fatalf("watch through replica 2 saw %v, want ADDED late then %v", seen, writes)
	}
	if err := c.CoreV1().ConfigMaps(ns).Delete(ctx, "cm-7", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err = a.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: last})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	select {
	case ev := <-w.ResultChan():
		if cm, ok := ev.Object.(*corev1.ConfigMap); !ok || ev.Type != "DELETED" || cm.Name != "cm-7" {
			t.Fatalf("watch resumed on replica 1 from %s: first event %s %#v, want DELETED cm-7", last, ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch resumed on replica 1 saw nothing")
	}

	// Two Services asking for one node port through two replicas at once:
	// one gets it, the other kube's 422.
	for port := int32(30100); port < 30106; port++ {
		errs := make(chan error, 2)
		for i := range 2 {
			go func() {
				svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("np-%d-%d", port, i)}, Spec: corev1.ServiceSpec{
					Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: port}},
				}}
				_, err := kc.client(i).CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
				errs <- err
			}()
		}
		var created, refused int
		for range 2 {
			switch err := <-errs; {
			case err == nil:
				created++
			case apierrors.IsInvalid(err) && strings.Contains(err.Error(), "provided port is already allocated"):
				refused++
			default:
				t.Errorf("node port %d: %v", port, err)
			}
		}
		if created != 1 || refused != 1 {
			t.Errorf("node port %d asked for through two replicas at once: %d Services got it, %d were refused", port, created, refused)
		}
	}
}

// TestClusterControllersLeadOnce: the controllers and the scheduler run on
// one replica at a time, chosen by their Leases in kube-system; when that
// replica dies another takes over, and when one stops it hands over.
func TestClusterControllersLeadOnce(t *testing.T) {
	kc := startKapiCluster(t, 3)
	client := kc.failoverClient(0)
	holder := func(lease string) string {
		l, err := client.CoordinationV1().Leases("kube-system").Get(ctx, lease, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	leader := func(lease string) int {
		id := holder(lease)
		if id == "" {
			return -1
		}
		found := -1
		for i, k := range kc.replicas {
			if strings.Contains(k.log.String(), "lease="+lease+" identity="+id) {
				found = i
			}
		}
		return found
	}
	for _, lease := range []string{"kube-controller-manager", "kube-scheduler"} {
		waitFor(t, 30*time.Second, lease+" to have a leader", func() bool { return leader(lease) >= 0 })
		leading := 0
		for _, k := range kc.replicas {
			if strings.Contains(k.log.String(), "msg=leading lease="+lease+" ") {
				leading++
			}
		}
		if leading != 1 {
			t.Fatalf("%d replicas lead %s", leading, lease)
		}
	}

	// The controllers run once: one ReplicaSet per Deployment.
	deploy := func(name string) {
		t.Helper()
		replicas := int32(2)
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: appsv1.DeploymentSpec{
				Replicas: &replicas,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
				},
			},
		}
		if _, err := client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 60*time.Second, name+"'s pods", func() bool {
			pods, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
			return err == nil && len(pods.Items) == 2
		})
		rs, err := client.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil || len(rs.Items) != 1 {
			t.Fatalf("ReplicaSets of %s: %v %v", name, rs, err)
		}
	}
	deploy("before")

	// The leader dies: another replica takes the Lease once it expires.
	dead := leader("kube-controller-manager")
	deadID := holder("kube-controller-manager")
	kc.replicas[dead].kill9()
	client = kc.failoverClient((dead + 1) % 3)
	waitFor(t, 60*time.Second, "another replica to lead kube-controller-manager", func() bool {
		id := holder("kube-controller-manager")
		return id != "" && id != deadID
	})
	deploy("after-crash")

	// The new leader stops: it gives the Lease up, and the last replica
	// takes it without waiting for it to expire.
	next := leader("kube-controller-manager")
	if next < 0 || next == dead {
		t.Fatalf("kube-controller-manager led by replica %d after replica %d died", next, dead)
	}
	nextID := holder("kube-controller-manager")
	kc.replicas[next].stop()
	client = kc.failoverClient(3 - dead - next)
	waitFor(t, 60*time.Second, "the last replica to lead kube-controller-manager", func() bool {
		id := holder("kube-controller-manager")
		return id != "" && id != nextID && id != deadID
	})
	deploy("after-stop")
}

// configMap is a ConfigMap named name with a little data.
func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "1"}}
}

// TestEtcdOverTLS: kapi keeps its data in an etcd that serves TLS and asks
// for client certificates, with kube-apiserver's --etcd-cafile,
// --etcd-certfile, --etcd-keyfile and --etcd-prefix.
func TestEtcdOverTLS(t *testing.T) {
	files := etcdtest.NewTLSFiles(t)
	endpoint := etcdtest.StartTLS(t, files)
	k := startKapi(t, "--storage", "etcd", "--etcd-servers", endpoint, "--etcd-cafile", files.CA,
		"--etcd-certfile", files.ClientCert, "--etcd-keyfile", files.ClientKey, "--etcd-prefix", "/kapi-tls")
	k.mustKubectl("create", "configmap", "over-tls", "--from-literal=a=b")
	if out := k.mustKubectl("get", "configmap", "over-tls", "-o", "jsonpath={.data.a}"); out != "b" {
		t.Fatalf("configmap data %q", out)
	}
	tlsConfig, err := (transport.TLSInfo{CertFile: files.ClientCert, KeyFile: files.ClientKey, TrustedCAFile: files.CA}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: tlsConfig, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	resp, err := client.Get(ctx, "/kapi-tls/registry/core/configmaps/default/over-tls")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the ConfigMap under the prefix in etcd: %v %v", resp, err)
	}
}
