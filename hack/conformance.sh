#!/usr/bin/env bash
# hack/conformance.sh: run the upstream Kubernetes e2e tests of sig-api-machinery,
# and the conformance tests of other SIGs that need no container runtime,
# against a fresh kapi and write docs/CONFORMANCE.md from the results.
#
#   hack/conformance.sh                 # JSON then protobuf, 2 ginkgo processes
#   CONTENT_TYPES=application/json hack/conformance.sh
#   BUILD_ONLY=1 hack/conformance.sh    # only build (or find) e2e.test and ginkgo
#   LIST_ONLY=1 hack/conformance.sh     # print what FOCUS and SKIP select, run nothing
#   SUMMARIZE_ONLY=1 CONFORMANCE_WORKDIR=DIR hack/conformance.sh
#                                       # rewrite the summary from DIR's reports, run nothing
#
# What it does:
#  1. builds the upstream e2e test binary (k8s.io/kubernetes/test/e2e) and the
#     ginkgo CLI of the Kubernetes release kapi emulates, in a scratch Go module
#     whose go.mod requires k8s.io/kubernetes at the version in kapi's go.mod and
#     copies kapi's replace lines; the binaries are kept in a cache directory
#     and reused by later runs;
#  2. builds kapi and, for each content type, starts a fresh one on a free
#     loopback port with in-memory storage;
#  3. gives it two simulated nodes (--simulated-nodes): pods run, without containers;
#  4. runs FOCUS minus SKIP with ginkgo, a JUnit report per content type;
#  5. summarises the reports into docs/CONFORMANCE.md (hack/conformance/summarize).
#
# Environment knobs (defaults below):
#  FOCUS, SKIP            ginkgo regular expressions over the spec names (FOCUS
#                         by default: sig-api-machinery and the tests listed in
#                         hack/conformance/no-runtime.txt)
#  CONTENT_TYPES          space-separated --kube-api-content-type values
#  NODES                  ginkgo parallel processes
#  VERIFY_SERVICE_ACCOUNT the e2e framework's wait for each namespace's default
#                         ServiceAccount and kube-root-ca.crt (default: on when kapi
#                         creates the default namespace's, off otherwise)
#  KAPI_BIN               a kapi binary to test instead of building ./cmd/kapi
#  SUITE_TIMEOUT          ginkgo --timeout for one content type's whole run
#  CONFORMANCE_CACHE      where the scratch module and binaries live
#  CONFORMANCE_WORKDIR    where kapi, its data and the reports go (default: a new temp dir)
#  REPORT_DIR             where the JUnit reports go (default: $CONFORMANCE_WORKDIR/reports)
#  OUTPUT                 the Markdown summary (default: docs/CONFORMANCE.md; empty: none)
#
# It is not part of `go test ./...`. Run heavy parts niced on small machines:
#  nice -n 19 hack/conformance.sh
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO_ROOT"

log() { printf '%s conformance: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------------------
# Settings.
# ---------------------------------------------------------------------------

# The default focus: every sig-api-machinery test, and the [Conformance]
# tests of the other SIGs listed in hack/conformance/no-runtime.txt (the
# ones that need no container runtime: API operations, controllers,
# scheduling onto the simulated nodes), matched by name.
NO_RUNTIME_LIST=hack/conformance/no-runtime.txt
no_runtime_focus() {
	grep -v -e '^#' -e '^[[:space:]]*$' "$NO_RUNTIME_LIST" | sed 's/[][\.*^$(){}?+|]/\\&/g' | paste -sd'|'
}
if [[ -z ${FOCUS:-} ]]; then
	FOCUS='\[sig-api-machinery\]|'"$(no_runtime_focus)"
	FOCUS_DOC="\`\\[sig-api-machinery\\]\`, and the [Conformance] tests of other SIGs listed in \`$NO_RUNTIME_LIST\` (those that need no container runtime)"
else
	FOCUS_DOC="\`$FOCUS\`"
fi

# Skip categories: "regex<TAB>why". Each is a group of the focused tests
# that cannot pass on kapi alone whatever kapi does (they need a container
# runtime, or break the cluster on purpose, or need optional features), with
# the reason recorded in CONFORMANCE.md. SKIP (when not given) is the
# alternation of all of them. Tests that need a controller kapi does not run
# (garbage collector, quota, replication) are not skipped: they are kapi's to
# fix. [Serial] tests are not skipped either: ginkgo runs them alone after the
# parallel ones. [Slow] is not skipped: its one api-machinery test (a list
# continued after compaction) needs no pod. With these, 138 of the 188
# [sig-api-machinery] specs of v1.37 are selected.
SKIP_CATEGORIES=$(cat <<'EOF'
AdmissionWebhook	admission webhooks: the webhook server is a Deployment of a container image (agnhost) that must run
CustomResourceConversionWebhook|CustomResourceFieldSelectors	CRD conversion webhooks: the conversion webhook is a Deployment of a container image that must run
Aggregator|Aggregated APIServer|sample-apiserver	aggregated APIs: the sample API server is a Deployment of a container image that must run
Etcd failure	etcd failure: kills or partitions etcd on the control-plane host (disruptive; kapi has no etcd)
\[Disruptive\]	disruptive: restarts or breaks the server or its hosts
\[Flaky\]	marked flaky upstream
\[Feature:[^\]]+\]|\[Alpha\]	optional features ([Feature:...], incl. [Feature:OffByDefault] beta gates) and alpha feature gates, off in a default cluster
EOF
)
# The default SKIP is built from the categories' regexes.
default_skip() {
	local out='' re
	while IFS=$'\t' read -r re _; do
		[[ -n $re ]] || continue
		out+="${out:+|}${re}"
	done <<<"$SKIP_CATEGORIES"
	printf '%s' "$out"
}
SKIP=${SKIP:-$(default_skip)}
CONTENT_TYPES=${CONTENT_TYPES:-application/json application/vnd.kubernetes.protobuf}
NODES=${NODES:-2}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-90m}
OUTPUT=${OUTPUT-docs/CONFORMANCE.md}

# The release kapi emulates: the k8s.io/kubernetes version its go.mod requires.
K8S_VERSION=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v[0-9]/ { print $2; exit }' go.mod)
[[ -n $K8S_VERSION ]] || die "no k8s.io/kubernetes requirement in go.mod"
GO_DIRECTIVE=$(awk '$1 == "go" { print $2; exit }' go.mod)

CACHE_ROOT=${CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kapi-conformance}
CACHE_DIR=$CACHE_ROOT/kubernetes-$K8S_VERSION
WORKDIR=${CONFORMANCE_WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/kapi-conformance.XXXXXX")}
REPORT_DIR=${REPORT_DIR:-$WORKDIR/reports}
mkdir -p "$CACHE_DIR" "$WORKDIR" "$REPORT_DIR"
# Absolute paths: later steps cd around.
CACHE_DIR=$(cd "$CACHE_DIR" && pwd)
WORKDIR=$(cd "$WORKDIR" && pwd)
REPORT_DIR=$(cd "$REPORT_DIR" && pwd)

E2E_TEST=$CACHE_DIR/e2e.test
GINKGO=$CACHE_DIR/ginkgo

# ---------------------------------------------------------------------------
# 1. The e2e test binary and the ginkgo CLI, from a scratch module.
# ---------------------------------------------------------------------------

# scratch_gomod prints the scratch module's go.mod: k8s.io/kubernetes at kapi's
# version, and kapi's replace directives (both the block and one-line forms)
# copied as they are, since k8s.io/kubernetes requires its staging modules at
# v0.0.0 and only the replaces make it buildable as a dependency.
scratch_gomod() {
	printf 'module kapi.local/conformance\n\ngo %s\n\nrequire k8s.io/kubernetes %s\n\n' "$GO_DIRECTIVE" "$K8S_VERSION"
	awk '
		/^replace[ \t]*\(/ { inblock = 1; print; next }
		inblock { print; if ($0 ~ /^\)/) inblock = 0; next }
		/^replace[ \t]/ { print }
	' "$REPO_ROOT/go.mod"
}

build_e2e() {
	local want
	want=$(scratch_gomod)
	# A changed version or replace set invalidates the cached binaries.
	if [[ -x $E2E_TEST && -x $GINKGO && -f $CACHE_DIR/go.mod.want ]] &&
		[[ $(cat "$CACHE_DIR/go.mod.want") == "$want" ]]; then
		log "reusing $E2E_TEST and $GINKGO"
		return
	fi
	log "building the e2e test binary of Kubernetes $K8S_VERSION in $CACHE_DIR (this takes long the first time)"
	local start=$SECONDS
	(
		cd "$CACHE_DIR"
		rm -f e2e.test ginkgo go.mod.want
		printf '%s\n' "$want" >go.mod
		# A tools file makes tidy keep ginkgo and the e2e package's dependencies.
		cat >tools.go <<'EOF'
//go:build tools

package tools

import (
	_ "github.com/onsi/ginkgo/v2/ginkgo"
	_ "k8s.io/kubernetes/test/e2e"
)
EOF
		export GOFLAGS="${GOFLAGS:-} -mod=mod"
		go mod tidy
		# -t: the test-only imports of test/e2e (e2e_test.go) too.
		go get -t "k8s.io/kubernetes/test/e2e@$K8S_VERSION"
		go test -c -o e2e.test.tmp k8s.io/kubernetes/test/e2e
		# ginkgo at the version the scratch module resolved, the one linked into e2e.test.
		go build -o ginkgo.tmp github.com/onsi/ginkgo/v2/ginkgo
		mv e2e.test.tmp e2e.test
		mv ginkgo.tmp ginkgo
		printf '%s\n' "$want" >go.mod.want
	)
	log "built e2e.test and ginkgo in $((SECONDS - start))s"
}

build_e2e
if [[ ${BUILD_ONLY:-} == 1 ]]; then
	exit 0
fi

# LIST_ONLY: what FOCUS and SKIP select, without a server.
if [[ ${LIST_ONLY:-} == 1 ]]; then
	"$E2E_TEST" --ginkgo.dry-run --ginkgo.v --ginkgo.no-color \
		--ginkgo.focus="$FOCUS" --ginkgo.skip="$SKIP" --provider=skeleton \
		--kubeconfig=/dev/null 2>&1 |
		# A spec is printed as its name, then its source file:line; keep the
		# names of the selected ones (not the suite nodes) and the count.
		awk '/^\[(Report|Synchronized)/ { prev = ""; next }
			/\.go:[0-9]+$/ && prev != "" { print prev }
			/^Ran [0-9]+ of/ { print }
			{ prev = $0 }' || true
	exit 0
fi

# ---------------------------------------------------------------------------
# 2. kapi: built once, started fresh per content type, stopped by PID on exit.
# ---------------------------------------------------------------------------

KAPI=$WORKDIR/kapi
if [[ -n ${KAPI_BIN:-} ]]; then
	KAPI=$(cd "$(dirname "$KAPI_BIN")" && pwd)/$(basename "$KAPI_BIN")
	[[ -x $KAPI ]] || die "KAPI_BIN $KAPI_BIN is not an executable"
elif [[ ${SUMMARIZE_ONLY:-} != 1 ]]; then
	log "building kapi"
	go build -tags grpcnotrace -o "$KAPI" ./cmd/kapi
fi

KAPI_PID=''
KAPI_DATA=''
E2E_PID=''
# stop_e2e ends a ginkgo run still going (the script was interrupted): TERM
# to timeout is passed on to ginkgo's process group, and ginkgo stops its
# test processes.
stop_e2e() {
	if [[ -n $E2E_PID ]]; then
		kill -TERM "$E2E_PID" 2>/dev/null || true
		wait "$E2E_PID" 2>/dev/null || true
		E2E_PID=''
	fi
}
stop_kapi() {
	if [[ -n $KAPI_PID ]]; then
		kill -TERM "$KAPI_PID" 2>/dev/null || true
		# Give it the time to shut down cleanly, then insist.
		for _ in $(seq 1 50); do
			kill -0 "$KAPI_PID" 2>/dev/null || break
			sleep 0.2
		done
		kill -KILL "$KAPI_PID" 2>/dev/null || true
		wait "$KAPI_PID" 2>/dev/null || true
		KAPI_PID=''
	fi
	if [[ -n $KAPI_DATA ]]; then
		rm -rf "$KAPI_DATA"
		KAPI_DATA=''
	fi
}
trap 'stop_e2e; stop_kapi' EXIT
trap 'exit 130' INT TERM

# free_port prints a loopback port nothing is listening on.
free_port() {
	local port
	for _ in $(seq 1 100); do
		port=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			printf '%s' "$port"
			return
		fi
	done
	die "no free port found"
}

KUBECONFIG_FILE=''
KAPI_PORT=''
start_kapi() {
	local label=$1 port
	port=$(free_port)
	KAPI_DATA=$WORKDIR/data-$label
	rm -rf "$KAPI_DATA"
	mkdir -p "$KAPI_DATA"
	"$KAPI" serve --storage=memory --data-dir "$KAPI_DATA" --listen "127.0.0.1:$port" --simulated-nodes 2 \
		>"$REPORT_DIR/kapi-$label.log" 2>&1 &
	KAPI_PID=$!
	KAPI_PORT=$port
	KUBECONFIG_FILE=$KAPI_DATA/kubeconfig
	log "kapi (pid $KAPI_PID) on 127.0.0.1:$port, log in $REPORT_DIR/kapi-$label.log"
	# Wait for the kubeconfig and /readyz.
	for _ in $(seq 1 120); do
		kill -0 "$KAPI_PID" 2>/dev/null || die "kapi exited; see $REPORT_DIR/kapi-$label.log"
		if [[ -f $KUBECONFIG_FILE ]] &&
			kubectl --kubeconfig "$KUBECONFIG_FILE" get --raw /readyz >/dev/null 2>&1; then
			return
		fi
		sleep 0.5
	done
	die "kapi not ready after 60s"
}

# kube-apiserver creates the default/kubernetes Service itself, and the e2e
# suite reads it before any test (for the cluster's IP family). If kapi has
# not, the script does, and CONFORMANCE.md says so (from
# $REPORT_DIR/setup-notes.txt).
ensure_kubernetes_service() {
	local kc=(kubectl --kubeconfig "$KUBECONFIG_FILE") port=$1
	if "${kc[@]}" -n default get service kubernetes >/dev/null 2>&1; then
		return
	fi
	"${kc[@]}" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata:
  name: kubernetes
  namespace: default
  labels:
    component: apiserver
    provider: kubernetes
spec:
  type: ClusterIP
  ports:
  - name: https
    port: 443
    protocol: TCP
    targetPort: $port
EOF
	log "created the default/kubernetes Service (kapi did not)"
	add_note "kapi did not create the default/kubernetes Service (kube-apiserver does): the script created it"
}

# ---------------------------------------------------------------------------
# 4. The e2e run, once per content type.
# ---------------------------------------------------------------------------

# short_label names a content type in file names and the summary.
short_label() {
	case $1 in
	application/json) echo json ;;
	application/vnd.kubernetes.protobuf) echo protobuf ;;
	*) echo "${1##*/}" | tr -c 'a-zA-Z0-9\n' '-' ;;
	esac
}

# Flags for the e2e binary besides kubeconfig, provider, content type and
# --e2e-verify-service-account (decided per run, see verify_service_account).
# Startup waits are short since no system pods or daemonsets exist; no log dumps.
E2E_ARGS=(
	--node-schedulable-timeout=2m
	--system-pods-startup-timeout=1m
	--system-daemonsets-startup-timeout=1m
	--dump-logs-on-failure=false
	--disable-log-dump=true
)

# verify_service_account prints the --e2e-verify-service-account value: the
# framework waits in every new namespace for the "default" ServiceAccount and
# the kube-root-ca.crt ConfigMap, which kube-controller-manager creates. If
# kapi has not created them in the default namespace within 10s, it does not
# run those controllers, and the wait is turned off (and noted).
verify_service_account() {
	if [[ -n ${VERIFY_SERVICE_ACCOUNT:-} ]]; then
		printf '%s' "$VERIFY_SERVICE_ACCOUNT"
		return
	fi
	local kc=(kubectl --kubeconfig "$KUBECONFIG_FILE" -n default)
	for _ in $(seq 1 20); do
		if "${kc[@]}" get serviceaccount default >/dev/null 2>&1 &&
			"${kc[@]}" get configmap kube-root-ca.crt >/dev/null 2>&1; then
			printf true
			return
		fi
		sleep 0.5
	done
	add_note "no default ServiceAccount or kube-root-ca.crt ConfigMap appears in new namespaces, so the e2e framework's wait for them was turned off (--e2e-verify-service-account=false)"
	printf false
}

# add_note records, once, something the run had to make up for.
add_note() {
	grep -qxF "$1" "$REPORT_DIR/setup-notes.txt" 2>/dev/null ||
		printf '%s\n' "$1" >>"$REPORT_DIR/setup-notes.txt"
}

# record_memory writes what kapi holds once the suite is done to
# memory-LABEL.txt: its resident and anonymous memory and live heap at once
# and after 20 s (when free heap has gone back to the system), and a heap
# profile (memory-LABEL.heap, for go tool pprof) of what is still live.
record_memory() {
	local label=$1 out=$REPORT_DIR/memory-$1.txt
	kill -0 "$KAPI_PID" 2>/dev/null || return 0
	sample() {
		printf '%s: ' "$1"
		awk '/^(VmRSS|RssAnon):/ {printf "%s %d MiB  ", $1, $2/1024}' "/proc/$KAPI_PID/status" || true
		kubectl --kubeconfig "$KUBECONFIG_FILE" get --raw '/debug/pprof/goroutine?debug=1' 2>/dev/null | head -n 1 || printf '\n'
	}
	sample "suite done" >"$out"
	sleep 20
	sample "20 s later" >>"$out"
	if kubectl --kubeconfig "$KUBECONFIG_FILE" get --raw '/debug/pprof/heap?gc=1' >"$REPORT_DIR/memory-$label.heap" 2>/dev/null; then
		printf 'live heap: ' >>"$out"
		go tool pprof -sample_index=inuse_space -top "$REPORT_DIR/memory-$label.heap" 2>/dev/null |
			sed -n 's/.* of \(.*\) total.*/\1/p' >>"$out" || true
	fi
	log "memory after the suite ($label): $(grep -v '^$' "$out" | paste -sd'|')"
}

SUMMARY_ARGS=()
run_e2e() {
	local ctype=$1 label rc=0 start=$SECONDS
	label=$(short_label "$ctype")
	start_kapi "$label"
	ensure_kubernetes_service "$KAPI_PORT"
	local verify
	verify=$(verify_service_account)
	log "running e2e ($ctype, $NODES processes, suite timeout $SUITE_TIMEOUT, verify service account: $verify)"
	# ginkgo --timeout ends the suite; the outer timeout is a backstop should
	# ginkgo itself hang. Within a test, the framework's own timeouts bound every
	# wait; a progress report is printed for a spec still running after 5m.
	# It runs in the background so that the exit trap can stop it (timeout
	# puts itself and ginkgo in a process group of their own).
	timeout --kill-after=2m "$(( $(to_seconds "$SUITE_TIMEOUT") + 300 ))" \
		"$GINKGO" --nodes="$NODES" --no-color \
		--focus="$FOCUS" --skip="$SKIP" \
		--timeout="$SUITE_TIMEOUT" --poll-progress-after=5m --poll-progress-interval=5m \
		--output-dir="$REPORT_DIR" --junit-report="junit-$label.xml" \
		"$E2E_TEST" -- \
		--kubeconfig="$KUBECONFIG_FILE" \
		--provider=skeleton \
		--kube-api-content-type="$ctype" \
		--e2e-verify-service-account="$verify" \
		"${E2E_ARGS[@]}" \
		>"$REPORT_DIR/e2e-$label.log" 2>&1 &
	E2E_PID=$!
	wait "$E2E_PID" || rc=$?
	E2E_PID=''
	log "e2e ($ctype) finished with exit code $rc in $((SECONDS - start))s; log in $REPORT_DIR/e2e-$label.log"
	tail -n 5 "$REPORT_DIR/e2e-$label.log" >&2 || true
	record_memory "$label"
	stop_kapi
	if [[ -f $REPORT_DIR/junit-$label.xml ]]; then
		SUMMARY_ARGS+=(-report "$ctype=$REPORT_DIR/junit-$label.xml")
	else
		log "no JUnit report for $ctype"
	fi
}

# to_seconds turns a Go-style duration of hours, minutes and seconds (90m, 1h30m, 45s) into seconds.
to_seconds() {
	local d=$1 total=0 n unit
	while [[ $d =~ ^([0-9]+)([hms])(.*)$ ]]; do
		n=${BASH_REMATCH[1]} unit=${BASH_REMATCH[2]} d=${BASH_REMATCH[3]}
		case $unit in h) total=$((total + n * 3600)) ;; m) total=$((total + n * 60)) ;; s) total=$((total + n)) ;; esac
	done
	[[ -z $d ]] || die "cannot read duration $1"
	printf '%s' "$total"
}

if [[ ${SUMMARIZE_ONLY:-} == 1 ]]; then
	# Only summarise the reports an earlier run left in REPORT_DIR.
	for ctype in $CONTENT_TYPES; do
		f=$REPORT_DIR/junit-$(short_label "$ctype").xml
		[[ -f $f ]] || die "no report $f"
		SUMMARY_ARGS+=(-report "$ctype=$f")
	done
else
	rm -f "$REPORT_DIR/setup-notes.txt"
	RUN_START=$SECONDS
	for ctype in $CONTENT_TYPES; do
		run_e2e "$ctype"
	done
	log "all runs took $((SECONDS - RUN_START))s"
fi

# ---------------------------------------------------------------------------
# 5. docs/CONFORMANCE.md from the JUnit reports.
# ---------------------------------------------------------------------------

if [[ -n $OUTPUT && ${#SUMMARY_ARGS[@]} -gt 0 ]]; then
	categories_file=$WORKDIR/skip-categories.tsv
	printf '%s\n' "$SKIP_CATEGORIES" >"$categories_file"
	go run ./hack/conformance/summarize \
		-release "$K8S_VERSION" -focus "$FOCUS" -focus-doc "$FOCUS_DOC" -skip "$SKIP" -nodes "$NODES" \
		-categories "$categories_file" -e2e-args "${E2E_ARGS[*]}" \
		-setup "$(paste -sd';' "$REPORT_DIR/setup-notes.txt" 2>/dev/null || true)" -out "$OUTPUT" "${SUMMARY_ARGS[@]}"
	log "wrote $OUTPUT"
fi
log "reports in $REPORT_DIR"
