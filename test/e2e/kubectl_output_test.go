package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// volatile matches what changes between runs: ages, timestamps, uids,
// resource versions, and the column padding that follows from them.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\b\d+(s|m\d*s?|h\d*m?)\b`), "AGE"},
	{regexp.MustCompile(`"?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"?`), "TIME"},
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "UID"},
	{regexp.MustCompile(`resourceVersion: "\d+"`), `resourceVersion: "RV"`},
	// Column widths follow the widest cell, ages included.
	{regexp.MustCompile(` {2,}`), "  "},
}

func normalize(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

// TestKubectlOutput compares kubectl get, get -o wide and get -o yaml of
// several built-in types with what they print against a real cluster.
func TestKubectlOutput(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	manifest := filepath.Join(t.TempDir(), "objects.yaml")
	os.WriteFile(manifest, []byte(`apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels: {node-role.kubernetes.io/control-plane: ""}
spec:
  unschedulable: true
---
apiVersion: v1
kind: Pod
metadata: {name: web-0, labels: {app: web}}
spec:
  nodeName: node-1
  containers:
  - {name: app, image: "nginx:1.27"}
  - {name: sidecar, image: busybox}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: NodePort
  clusterIP: 10.96.0.20
  selector: {app: web}
  ports:
  - {port: 80, targetPort: 8080, nodePort: 30080, protocol: TCP}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: app, image: "nginx:1.27"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: run, image: busybox}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: "1", b: "2"}
---
apiVersion: v1
kind: Secret
metadata: {name: creds}
type: Opaque
data: {password: c2VjcmV0}
`), 0o644)
	k.mustKubectl("create", "-f", manifest)
	var out string
	for _, args := range [][]string{
		{"get", "nodes"},
		{"get", "nodes", "-o", "wide"},
		{"get", "pods"},
		{"get", "pods", "-o", "wide"},
		{"get", "services", "-o", "wide"},
		{"get", "deployments", "-o", "wide"},
		{"get", "jobs"},
		{"get", "configmaps,secrets"},
		{"get", "namespaces"},
		{"get", "configmap", "settings", "-o", "yaml"},
	} {
		out += "$ kubectl " + joinArgs(args) + "\n" + k.mustKubectl(args...)
	}
	golden(t, "kubectl-get.txt", normalize(out))
}

func joinArgs(args []string) string {
	s := ""
	for i, a := range args {
		if i > 0 {
			s += " "
		}
		s += a
	}
	return s
}
