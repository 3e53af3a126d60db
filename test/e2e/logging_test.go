package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// slogRecord is a line of log/slog's text format.
var slogRecord = regexp.MustCompile(`^time=\S+ level=[A-Z]+([+-][0-9]+)? msg=`)

// v4Lines are V(4) lines of Kubernetes' controllers that every start at
// --v=4 writes: the garbage collector's, through the logr of its context,
// and kube-aggregator's availability controllers', through klog's global
// logger.
var v4Lines = []string{
	`level=DEBUG msg="using a shared informer"`,
	`level=DEBUG msg="Adding v1.apps"`,
}

// TestLogging: kapi's standard error is one log in log/slog's text format
// (besides the KUBECONFIG hint for humans), its own lines and Kubernetes'
// alike, and --v shows Kubernetes' V(n) lines up to n, as a Kubernetes
// component's flag does: V(4) lines at --v=4 (or v: 4 in the --config
// file), none below V(0) by default.
func TestLogging(t *testing.T) {
	t.Run("v4", func(t *testing.T) {
		k := startKapi(t, onlyLifecycleControllers, "--storage=memory", "--v=4")
		for _, line := range v4Lines {
			waitForLog(t, k, line)
		}
		k.stop()
		checkLogFormat(t, k.log.String())
	})

	t.Run("default", func(t *testing.T) {
		k := startKapi(t, onlyLifecycleControllers, "--storage=memory")
		// The garbage collector writes its V(4) lines before this one.
		waitForLog(t, k, `level=INFO msg="Garbage collector: all resource monitors have synced"`)
		k.stop()
		log := k.log.String()
		checkLogFormat(t, log)
		for _, want := range []string{`level=INFO msg=serving version=`, `level=INFO msg="shutting down"`} {
			if !strings.Contains(log, want) {
				t.Errorf("%s is missing:\n%s", want, log)
			}
		}
		if strings.Contains(log, "level=DEBUG") {
			t.Errorf("lines below V(0) at the default verbosity:\n%s", log)
		}
	})

	// PUT /debug/flags/v changes the verbosity while kapi runs, as
	// kube-apiserver's: its controllers' V(4) lines show from then on.
	t.Run("debug flags", func(t *testing.T) {
		k := startKapi(t, onlyLifecycleControllers, "--storage=memory")
		ctx := context.Background()
		said, err := k.clientset().CoreV1().RESTClient().Put().AbsPath("/debug/flags/v").Body([]byte("4")).DoRaw(ctx)
		if err != nil || strings.TrimSpace(string(said)) != "successfully set klog.logging.verbosity to 4" {
			t.Fatalf("PUT /debug/flags/v: %q, %v", said, err)
		}
		k.mustKubectl("create", "namespace", "verbose")
		waitForLog(t, k, `level=DEBUG msg="Finished syncing namespace" namespace=verbose`)
		if _, err := k.clientset().CoreV1().RESTClient().Put().AbsPath("/debug/flags/v").Body([]byte("four")).DoRaw(ctx); !apierrors.IsBadRequest(err) {
			t.Errorf("PUT /debug/flags/v of no number: %v, want 400", err)
		}
	})

	t.Run("config file", func(t *testing.T) {
		config := filepath.Join(t.TempDir(), "kapi.yaml")
		if err := os.WriteFile(config, []byte("v: 4\nstorage: memory\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		k := startKapi(t, onlyLifecycleControllers, "--config", config)
		for _, line := range v4Lines {
			waitForLog(t, k, line)
		}
	})
}

// waitForLog waits until a line of k's log contains want.
func waitForLog(t *testing.T, k *kapi, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(k.log.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("kapi's log has no %s within 30s:\n%s", want, k.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkLogFormat fails the test for each line of log that is neither a
// slog record nor part of the KUBECONFIG hint kapi serve prints.
func checkLogFormat(t *testing.T, log string) {
	t.Helper()
	hint := map[string]bool{"": true, "To use it with kubectl:": true, "  kubectl get namespaces": true}
	records := 0
	for _, line := range strings.Split(log, "\n") {
		switch {
		case slogRecord.MatchString(line):
			records++
		case hint[line], strings.HasPrefix(line, "  export KUBECONFIG="):
		default:
			t.Errorf("a line not in slog's text format: %q", line)
		}
	}
	if records == 0 {
		t.Errorf("no slog records in kapi's log:\n%s", log)
	}
}
