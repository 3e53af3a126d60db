package e2e

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("%s differs from kubectl's output:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestKubectlAPIResources(t *testing.T) {
	k := startKapi(t)
	golden(t, "api-resources.txt", k.mustKubectl("api-resources"))
	golden(t, "api-versions.txt", k.mustKubectl("api-versions"))
}

func TestKubectlLifecycle(t *testing.T) {
	k := startKapi(t)
	k.mustKubectl("create", "namespace", "team")
	if out := k.mustKubectl("get", "namespaces", "-o", "name"); !strings.Contains(out, "namespace/team") {
		t.Fatalf("namespaces: %s", out)
	}
	k.mustKubectl("-n", "team", "create", "configmap", "app", "--from-literal=color=blue")
	k.mustKubectl("-n", "team", "create", "secret", "generic", "creds", "--from-literal=user=admin")
	k.mustKubectl("-n", "team", "create", "deployment", "web", "--image=nginx", "--replicas=2")
	k.mustKubectl("-n", "team", "create", "service", "clusterip", "web", "--tcp=80:8080")
	manifest := filepath.Join(t.TempDir(), "pod.yaml")
	os.WriteFile(manifest, []byte(`apiVersion: v1
kind: Pod
metadata:
  name: box
  namespace: team
spec:
  containers:
  - name: c
    image: busybox
`), 0o644)
	k.mustKubectl("create", "-f", manifest)

	if got := k.mustKubectl("-n", "team", "get", "configmap", "app", "-o", "jsonpath={.data.color}"); got != "blue" {
		t.Fatalf("configmap data: %q", got)
	}
	out := k.mustKubectl("-n", "team", "get", "configmaps,secrets,deployments,services,pods", "-o", "name")
	for _, want := range []string{"configmap/app", "secret/creds", "deployment.apps/web", "service/web", "pod/box"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get lists no %s:\n%s", want, out)
		}
	}

	// replace: edit the stored object and PUT it back.
	yaml := k.mustKubectl("-n", "team", "get", "deployment", "web", "-o", "yaml")
	edited := filepath.Join(t.TempDir(), "web.yaml")
	os.WriteFile(edited, []byte(strings.Replace(yaml, "replicas: 2", "replicas: 5", 1)), 0o644)
	k.mustKubectl("replace", "-f", edited)
	if got := k.mustKubectl("-n", "team", "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}/{.metadata.generation}"); got != "5/2" {
		t.Fatalf("after replace replicas/generation = %q, want 5/2", got)
	}
	// Replacing with the old resourceVersion again is a conflict.
	out, err := k.kubectl("replace", "-f", edited)
	if err == nil || !strings.Contains(out, "the object has been modified") {
		t.Fatalf("stale replace: %v\n%s", err, out)
	}

	// Unknown fields: kubectl asks for strict validation by default.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n  namespace: team\nspec: {}\n"), 0o644)
	out, err = k.kubectl("create", "-f", bad)
	if err == nil || !strings.Contains(out, `unknown field "spec"`) {
		t.Fatalf("strict create: %v\n%s", err, out)
	}
	out = k.mustKubectl("create", "-f", bad, "--validate=warn")
	if !strings.Contains(out, `Warning: unknown field "spec"`) {
		t.Fatalf("warn create printed no warning:\n%s", out)
	}

	k.mustKubectl("-n", "team", "delete", "pod", "box")
	k.mustKubectl("-n", "team", "delete", "configmap", "app")
	if out, err := k.kubectl("-n", "team", "get", "configmap", "app"); err == nil || !strings.Contains(out, `configmaps "app" not found`) {
		t.Fatalf("get after delete: %v\n%s", err, out)
	}
	k.mustKubectl("delete", "namespace", "team")
	if out, err := k.kubectl("get", "namespace", "team"); err == nil || !strings.Contains(out, `namespaces "team" not found`) {
		t.Fatalf("namespace after delete: %v\n%s", err, out)
	}
}

// TestConfigFile: kapi serve --config reads flag values from a file (here
// in-memory storage, so a restart loses the data; a large number; a list)
// and refuses a setting it does not know.
func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "kapi.yaml")
	config := "storage: memory\nhistory-window: 1m\nmax-watches: 1000000\nenable-admission-plugins: [AlwaysPullImages, DenyServiceExternalIPs]\n"
	if err := os.WriteFile(good, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	k := startKapi(t, "--config", good)
	outside := writeTemp(t, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"outside"},"spec":{"ports":[{"port":80}],"externalIPs":["192.0.2.1"]}}`)
	if out, err := k.kubectl("create", "-f", outside); err == nil || !strings.Contains(out, "Use of external IPs is denied by admission control") {
		t.Errorf("a Service with an external IP, DenyServiceExternalIPs listed in the config file: %v\n%s", err, out)
	}
	k.mustKubectl("create", "configmap", "kept-in-memory")
	k.stop()
	k.start()
	if out, err := k.kubectl("get", "configmap", "kept-in-memory"); err == nil {
		t.Errorf("the configmap survived a restart with storage: memory from the config file:\n%s", out)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("bogus: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(kapiBinary, "serve", "--config", bad).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `unknown setting "bogus"`) {
		t.Errorf("kapi serve with an unknown setting: %v\n%s", err, out)
	}
}
