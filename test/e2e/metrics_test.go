package e2e

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMetrics: /metrics serves kube-apiserver's metrics for the requests
// made: request counts by verb, resource, scope and code, long-running
// watches, watch events, and stored objects.
func TestMetrics(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	// kube-apiserver's legacy token tracking records its start in a
	// ConfigMap of its own, as the server starts.
	waitFor(t, 10*time.Second, "the legacy token tracking ConfigMap", func() bool {
		// Listed, not read: a read before it exists would count a 404.
		out, _ := k.kubectl("get", "configmaps", "-n", "kube-system", "-o", "name")
		return strings.Contains(out, "configmap/kube-apiserver-legacy-service-account-token-tracking")
	})
	for _, name := range []string{"a", "b", "c"} {
		k.mustKubectl("create", "configmap", name)
	}
	k.mustKubectl("get", "configmaps")
	k.kubectl("get", "configmap", "nope")
	k.kubectl("get", "configmaps", "--watch", "--request-timeout=1s")
	// A watch from resourceVersion 0 starts with an ADDED event for each
	// (the server's own informers read the caches without a request).
	k.mustKubectl("get", "--raw", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0&timeoutSeconds=1")
	// A streaming list: its initial events' latency is recorded.
	k.mustKubectl("get", "--raw", "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1")
	// A deprecated API.
	k.mustKubectl("get", "componentstatuses")
	// A namespace: a kind kube's built-in admission plugins look at.
	k.mustKubectl("create", "namespace", "metrics")

	metrics := k.mustKubectl("get", "--raw", "/metrics")
	value := func(name string, labels ...string) float64 {
		t.Helper()
		for _, line := range strings.Split(metrics, "\n") {
			if !strings.HasPrefix(line, name+"{") {
				continue
			}
			matches := true
			for _, l := range labels {
				matches = matches && strings.Contains(line, l)
			}
			if matches {
				v, _ := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
				return v
			}
		}
		return -1
	}
	checks := []struct {
		name   string
		labels []string
		want   func(float64) bool
	}{
		{"apiserver_request_total", []string{`code="201"`, `resource="configmaps"`, `verb="POST"`, `scope="resource"`}, func(v float64) bool { return v == 4 }},
		{"apiserver_request_total", []string{`code="200"`, `resource="configmaps"`, `verb="LIST"`, `scope="namespace"`}, func(v float64) bool { return v >= 1 }},
		// At least the test's own 404: once in a loaded run of the whole
		// suite a second was counted, from a client not identified.
		{"apiserver_request_total", []string{`code="404"`, `resource="configmaps"`, `verb="GET"`}, func(v float64) bool { return v >= 1 }},
		{"apiserver_request_total", []string{`resource="configmaps"`, `verb="WATCH"`}, func(v float64) bool { return v >= 1 }},
		{"apiserver_watch_events_total", []string{`resource="configmaps"`, `version="v1"`}, func(v float64) bool { return v >= 3 }},
		{"apiserver_storage_objects", []string{`resource="configmaps"`}, func(v float64) bool { return v == 5 }}, // and extension-apiserver-authentication, the legacy token tracking
		{"apiserver_request_duration_seconds_count", []string{`resource="configmaps"`, `verb="POST"`}, func(v float64) bool { return v == 4 }},
		{"apiserver_watch_cache_events_received_total", []string{`resource="configmaps"`}, func(v float64) bool { return v >= 3 }},
		{"apiserver_watch_cache_initializations_total", []string{`resource="configmaps"`}, func(v float64) bool { return v >= 1 }},
		{"apiserver_watch_cache_resource_version", []string{`resource="configmaps"`}, func(v float64) bool { return v > 0 }},
		{"apiserver_storage_size_bytes", []string{`storage_cluster_id="etcd-0"`}, func(v float64) bool { return v > 0 }},
		// Latencies of the requests' own (SLI) part, their bodies' sizes,
		// and the deprecated APIs asked for.
		{"apiserver_request_sli_duration_seconds_count", []string{`resource="configmaps"`, `verb="POST"`}, func(v float64) bool { return v == 4 }},
		{"apiserver_request_body_size_bytes_count", []string{`resource="configmaps"`, `verb="create"`}, func(v float64) bool { return v == 4 }},
		{"apiserver_requested_deprecated_apis", []string{`resource="componentstatuses"`, `version="v1"`}, func(v float64) bool { return v == 1 }},
		{"apiserver_watch_list_duration_seconds_count", []string{`resource="configmaps"`, `scope="namespace"`}, func(v float64) bool { return v == 1 }},
		// Authentication and authorization.
		{"authentication_attempts", []string{`result="success"`}, func(v float64) bool { return v >= 5 }},
		{"authenticated_user_requests", []string{`username="other"`}, func(v float64) bool { return v >= 5 }},
		{"authentication_duration_seconds_count", []string{`result="success"`}, func(v float64) bool { return v >= 5 }},
		{"authorization_attempts_total", []string{`result="allowed"`}, func(v float64) bool { return v >= 5 }},
		{"authorization_duration_seconds_count", []string{`result="allowed"`}, func(v float64) bool { return v >= 5 }},
		// The watch cache's lists and reads of storage.
		{"apiserver_cache_list_total", []string{`resource="configmaps"`}, func(v float64) bool { return v >= 2 }},
		{"apiserver_cache_list_returned_objects_total", []string{`resource="configmaps"`}, func(v float64) bool { return v >= 3 }},
		{"apiserver_watch_cache_consistent_read_total", []string{`resource="configmaps"`, `success="true"`}, func(v float64) bool { return v >= 1 }},
		{"apiserver_watch_cache_initialization_duration_seconds_count", []string{`resource="configmaps"`}, func(v float64) bool { return v >= 1 }},
		{"apiserver_storage_list_total", []string{`resource="configmaps"`}, func(v float64) bool { return v >= 1 }},
		{"apiserver_storage_events_received_total", []string{`resource="configmaps"`}, func(v float64) bool { return v >= 4 }},
		// Admission: its steps, and kube's built-in plugins.
		{"apiserver_admission_step_admission_duration_seconds_count", []string{`operation="CREATE"`, `rejected="false"`, `type="admit"`}, func(v float64) bool { return v >= 5 }},
		{"apiserver_admission_step_admission_duration_seconds_count", []string{`operation="CREATE"`, `rejected="false"`, `type="validate"`}, func(v float64) bool { return v >= 5 }},
		{"apiserver_admission_controller_admission_duration_seconds_count", []string{`name="DefaultTolerationSeconds"`, `operation="CREATE"`, `type="admit"`}, func(v float64) bool { return v >= 1 }},
		// What the server is.
		{"kubernetes_build_info", []string{`git_version="v1.`, `major="1"`}, func(v float64) bool { return v == 1 }},
		{"version_info", []string{`component="kube"`}, func(v float64) bool { return v == 1 }},
		{"kubernetes_feature_enabled", []string{`name="WatchList"`}, func(v float64) bool { return v == 1 }},
	}
	for _, name := range []string{"kapi_storage_revision", "kapi_storage_compacted_revision"} {
		if !regexp.MustCompile(`(?m)^` + name + ` \d`).MatchString(metrics) {
			t.Errorf("no %s", name)
		}
	}
	for _, c := range checks {
		if v := value(c.name, c.labels...); !c.want(v) {
			t.Errorf("%s%v = %v", c.name, c.labels, v)
		}
	}
	if !regexp.MustCompile(`(?m)^# TYPE apiserver_longrunning_requests gauge$`).MatchString(metrics) {
		t.Error("no apiserver_longrunning_requests gauge")
	}
	// Garbage collection, off while kapi serve started, has Go's defaults
	// back once it serves (unless the environment set them).
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		for _, want := range []string{`(?m)^go_gc_gogc_percent 100$`, `(?m)^go_gc_gomemlimit_bytes 9\.22\d*e\+18$`} {
			if !regexp.MustCompile(want).MatchString(metrics) {
				t.Errorf("/metrics lacks %s: garbage collection kept the start's settings", want)
			}
		}
	}
	// The scrape itself is the one read-only request in flight.
	if v := value("apiserver_current_inflight_requests", `request_kind="readOnly"`); v != 1 {
		t.Errorf("apiserver_current_inflight_requests{readOnly} = %v, want 1 (the scrape)", v)
	}
}

// TestHealthChecks: /readyz?verbose reports kube-apiserver's post-start
// hooks that kapi has an equivalent of, and the system priority classes
// that one of them creates exist.
func TestHealthChecks(t *testing.T) {
	k := startKapi(t)
	out := k.mustKubectl("get", "--raw", "/readyz?verbose")
	for _, check := range []string{"[+]poststarthook/crd-informer-synced ok", "[+]poststarthook/start-apiextensions-controllers ok",
		"[+]poststarthook/scheduling/bootstrap-system-priority-classes ok", "[+]poststarthook/kube-apiserver-autoregistration ok",
		"[+]informer-sync ok", "[+]autoregister-completion ok", "[+]poststarthook/start-service-ip-repair-controllers ok", "readyz check passed"} {
		if !strings.Contains(out, check) {
			t.Errorf("/readyz?verbose lacks %q:\n%s", check, out)
		}
	}
	if out := k.mustKubectl("get", "priorityclasses", "-o", "name"); !strings.Contains(out, "system-node-critical") || !strings.Contains(out, "system-cluster-critical") {
		t.Errorf("system priority classes:\n%s", out)
	}
}
