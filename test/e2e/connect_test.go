package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	criremotecommand "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// fakeKubelet answers a node's exec, attach and port-forward streams as a
// kubelet does, with the kubelet's own stream handlers: a command prints
// what it was asked to run in which container, echoes its stdin, and a
// command "fail" exits with 3; an attach prints one line; a forwarded
// port answers with one line naming it.
type fakeKubelet struct {
	server *httptest.Server
	mu     sync.Mutex
	paths  []string // the request paths it served
}

func startFakeKubelet(t *testing.T) *fakeKubelet {
	f := &fakeKubelet{}
	f.server = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.server.Close)
	return f
}

func (f *fakeKubelet) port() int32 {
	_, port, _ := net.SplitHostPort(f.server.Listener.Addr().String())
	n, _ := strconv.Atoi(port)
	return int32(n)
}

func (f *fakeKubelet) served() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...)
}

func (f *fakeKubelet) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.paths = append(f.paths, r.URL.Path)
	f.mu.Unlock()
	// /exec/NAMESPACE/POD/CONTAINER, /attach/..., /portForward/NAMESPACE/POD
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case parts[0] == "exec" && len(parts) == 4:
		opts, err := criremotecommand.NewOptions(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		criremotecommand.ServeExec(w, r, kubeletStreams{}, parts[2], "", parts[3], r.URL.Query()["command"], opts,
			time.Minute, 30*time.Second, criremotecommand.SupportedStreamingProtocols)
	case parts[0] == "attach" && len(parts) == 4:
		opts, err := criremotecommand.NewOptions(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		criremotecommand.ServeAttach(w, r, kubeletStreams{}, parts[2], "", parts[3], opts,
			time.Minute, 30*time.Second, criremotecommand.SupportedStreamingProtocols)
	case parts[0] == "portForward" && len(parts) == 3:
		opts, err := portforward.NewV4Options(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		portforward.ServePortForward(w, r, kubeletStreams{}, parts[2], "", opts, time.Minute, 30*time.Second, portforward.SupportedProtocols)
	default:
		http.Error(w, "fake kubelet: no such path", http.StatusNotFound)
	}
}

// kubeletStreams is the fake kubelet's container runtime.
type kubeletStreams struct{}

func (kubeletStreams) ExecInContainer(_ context.Context, pod, _, container string, cmd []string, in io.Reader, out, _ io.WriteCloser, _ bool, _ <-chan criremotecommand.TerminalSize, _ time.Duration) error {
	if len(cmd) == 1 && cmd[0] == "fail" {
		return utilexec.CodeExitError{Err: fmt.Errorf("failed"), Code: 3}
	}
	fmt.Fprintf(out, "ran %q in %s/%s\n", cmd, pod, container)
	if in != nil {
		io.Copy(out, in)
	}
	return nil
}

func (kubeletStreams) AttachContainer(_ context.Context, pod, _, container string, _ io.Reader, out, _ io.WriteCloser, _ bool, _ <-chan criremotecommand.TerminalSize) error {
	fmt.Fprintf(out, "attached to %s/%s\n", pod, container)
	return nil
}

func (kubeletStreams) PortForward(_ context.Context, pod, _ string, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	_, err := fmt.Fprintf(stream, "port %d of %s\n", port, pod)
	return err
}

// TestPodStreamsThroughKubelet runs kubectl exec, attach and port-forward
// and client-go's SPDY executor against a pod on a node whose kubelet (a
// fake one, with the kubelet's stream handlers) kapi reaches as
// kube-apiserver does: kubectl's websocket streams are translated to the
// kubelet's SPDY ones.
func TestPodStreamsThroughKubelet(t *testing.T) {
	k := startKapi(t, "--simulated-nodes=1")
	kubelet := startFakeKubelet(t)
	cs := k.clientset()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "real-node"}, Status: corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: kubelet.port()}},
	}}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "real"}, Spec: corev1.PodSpec{NodeName: "real-node",
		Containers: []corev1.Container{{Name: "app", Image: "nginx", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}}}}
	created, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.Phase = corev1.PodRunning // as its kubelet would report it; kubectl port-forward asks
	if _, err := cs.CoreV1().Pods("default").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Standard output alone: client-go's WebSocket client may log that it
	// discarded a message that came before it had set its streams up (the
	// fake runs its command at once).
	if out, err := exec.Command("kubectl", "--kubeconfig", k.kubeconfig(), "exec", "real", "--", "echo", "hi").Output(); err != nil || string(out) != "ran [\"echo\" \"hi\"] in real/app\n" {
		t.Errorf("kubectl exec: %v %q", err, out)
	}
	cmd := exec.Command("kubectl", "--kubeconfig", k.kubeconfig(), "exec", "-i", "real", "--", "cat")
	cmd.Stdin = strings.NewReader("from stdin\n")
	if out, err := cmd.Output(); err != nil || string(out) != "ran [\"cat\"] in real/app\nfrom stdin\n" {
		t.Errorf("kubectl exec -i: %q %v", out, err)
	}
	out, err := k.kubectl("exec", "real", "--", "fail")
	if exitErr, ok := err.(*exec.ExitError); !ok || exitErr.ExitCode() != 3 || !strings.Contains(out, "command terminated with exit code 3") {
		t.Errorf("kubectl exec of a failing command: %q %v, want exit code 3", out, err)
	}
	if out := k.mustKubectl("attach", "real", "-c", "app"); !strings.Contains(out, "attached to real/app\n") {
		t.Errorf("kubectl attach: %q", out)
	}

	// client-go's SPDY executor, which kapi passes on to the kubelet as it is.
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name("real").SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: "app", Command: []string{"ls", "/"}, Stdout: true}, scheme.ParameterCodec)
	spdy, err := remotecommand.NewSPDYExecutor(k.config, http.MethodPost, req.URL())
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	if err := spdy.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout}); err != nil || stdout.String() != "ran [\"ls\" \"/\"] in real/app\n" {
		t.Errorf("SPDY exec: %q %v", stdout.String(), err)
	}

	if got := portForwardOnce(t, k, "real", 8080); got != "port 8080 of real\n" {
		t.Errorf("through kubectl port-forward: %q", got)
	}
	for _, want := range []string{"/exec/default/real/app", "/attach/default/real/app", "/portForward/default/real"} {
		if !strings.Contains(strings.Join(kubelet.served(), " "), want) {
			t.Errorf("the kubelet served %v, none of them %s", kubelet.served(), want)
		}
	}
}

// portForwardOnce runs kubectl port-forward to a pod's port and returns
// what one connection to the local end reads.
func portForwardOnce(t *testing.T, k *kapi, pod string, port int) string {
	t.Helper()
	cmd := exec.Command("kubectl", "--kubeconfig", k.kubeconfig(), "port-forward", "--address", "127.0.0.1", "pod/"+pod, fmt.Sprintf(":%d", port))
	cmd.Env = append(cmd.Environ(), "KUBECACHEDIR="+filepath.Join(k.dataDir, "kubectl-cache"))
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	// "Forwarding from 127.0.0.1:LOCAL -> PORT"
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "Forwarding from 127.0.0.1:") {
		cmd.Wait()
		t.Fatalf("kubectl port-forward printed %q, %s", lines.Text(), stderr.String())
	}
	local := strings.Fields(strings.TrimPrefix(lines.Text(), "Forwarding from "))[0]
	conn, err := net.DialTimeout("tcp", local, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	got, _ := io.ReadAll(conn)
	return string(got)
}

// TestConnectAnswers: what kapi answers when a connection cannot be made
// or is not allowed: a container on a simulated node runs nothing to
// connect to; a websocket's GET needs the create permission, as
// kube-apiserver 1.37 checks it; an admission policy on CONNECT refuses
// an exec with its message; services without ready pods have no endpoint.
func TestConnectAnswers(t *testing.T) {
	k := startKapi(t, "--simulated-nodes=1")
	k.mustKubectl("run", "sim", "--image=nginx", "--port=80")
	waitFor(t, 30*time.Second, "the pod to run on the simulated node", func() bool {
		p, err := k.clientset().CoreV1().Pods("default").Get(ctx, "sim", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning
	})
	out, err := k.kubectl("exec", "sim", "--", "ls")
	if err == nil || !strings.Contains(out, `is simulated: it has no kubelet and its containers run nothing to connect to`) {
		t.Errorf("kubectl exec into a simulated pod: %q %v", out, err)
	}
	// A pod bound to a node that does not exist: the node is not found
	// under the request's resource, as kube-apiserver words it.
	_, err = k.clientset().CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "astray"},
		Spec:       corev1.PodSpec{NodeName: "gone", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"logs", "astray"}, {"exec", "astray", "--", "ls"}} {
		if out, err := k.kubectl(args...); err == nil || !strings.Contains(out, `Error from server (NotFound): pods "gone" not found`) {
			t.Errorf("kubectl %s on a pod of a missing node: %q %v", args[0], out, err)
		}
	}
	k.mustKubectl("expose", "pod", "sim", "--port=80")
	resp, body := rawDo(t, k, http.MethodGet, "/api/v1/namespaces/default/services/sim:80/proxy/", "", "", nil)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `no endpoints available for service \"sim\"`) {
		t.Errorf("a Service of simulated pods through its proxy: %d %s", resp.StatusCode, body)
	}

	// A user who may get pods/exec but not create it.
	k.mustKubectl("create", "role", "exec-get", "--verb=get", "--resource=pods/exec")
	k.mustKubectl("create", "rolebinding", "exec-get", "--role=exec-get", "--user=limited")
	req, err := http.NewRequest(http.MethodGet, k.config.Host+"/api/v1/namespaces/default/pods/sim/exec?command=ls", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Impersonate-User", "limited")
	waitFor(t, 10*time.Second, "the role to apply", func() bool {
		resp, err := k.rawClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// The GET passes the authorization filter, then the check of create.
		return resp.StatusCode == http.StatusForbidden && string(body) ==
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"sim\" is forbidden: ","reason":"Forbidden","details":{"name":"sim","kind":"pods"},"code":403}`+"\n"
	})

	apply(t, k, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-exec}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CONNECT"], resources: ["pods/exec"]}
  validations:
  - {expression: "!object.command.exists(c, c == 'rm')", message: "no rm in containers"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-exec}
spec: {policyName: no-exec, validationActions: [Deny]}
`)
	waitFor(t, 20*time.Second, "the policy to refuse an exec", func() bool {
		out, _ := k.kubectl("exec", "sim", "--", "rm", "-rf", "/")
		return strings.Contains(out, "no rm in containers")
	})
	if out, _ := k.kubectl("exec", "sim", "--", "ls"); !strings.Contains(out, "is simulated") {
		t.Errorf("an exec the policy lets through: %q", out)
	}
}
