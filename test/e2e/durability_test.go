package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKillNineKeepsAcknowledgedWrites kills kapi with SIGKILL right after
// a burst of acknowledged writes and checks every one is there afterwards.
func TestKillNineKeepsAcknowledgedWrites(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	cms := k.clientset().CoreV1().ConfigMaps("default")
	const n = 50
	var last string
	for i := 0; i < n; i++ {
		cm, err := cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)},
			Data:       map[string]string{"i": fmt.Sprint(i)},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last = cm.ResourceVersion
	}
	caBefore, err := os.ReadFile(filepath.Join(k.dataDir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	k.kill9()
	k.start()
	caAfter, err := os.ReadFile(filepath.Join(k.dataDir, "pki", "ca.crt"))
	if err != nil || string(caAfter) != string(caBefore) {
		t.Fatalf("the CA was not reused across restarts (%v)", err)
	}

	cms = k.clientset().CoreV1().ConfigMaps("default")
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != n {
		t.Fatalf("%d configmaps after kill -9, want %d", len(list.Items), n)
	}
	for i, cm := range list.Items {
		if cm.Name != fmt.Sprintf("cm-%02d", i) || cm.Data["i"] != fmt.Sprint(i) {
			t.Fatalf("item %d = %s %v", i, cm.Name, cm.Data)
		}
	}
	if rv(t, list.ResourceVersion) < rv(t, last) {
		t.Fatalf("list resourceVersion %s is older than the last acknowledged write %s", list.ResourceVersion, last)
	}
	// Revisions keep increasing after the restart.
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rv(t, cm.ResourceVersion) <= rv(t, last) {
		t.Fatalf("resourceVersion %s after restart is not above %s", cm.ResourceVersion, last)
	}
	// The bootstrap namespaces are not created twice.
	nss, err := k.clientset().CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil || len(nss.Items) != 4 {
		t.Fatalf("namespaces after restart: %d, %v", len(nss.Items), err)
	}
}
