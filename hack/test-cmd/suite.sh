#!/usr/bin/env bash
# Runs kubectl's own test suite (test/cmd of k8s.io/kubernetes) in the
# Kubernetes source tree KUBE_ROOT, against kapi's kube-apiserver command
# (SERVER=kapi) or against kube-apiserver + kube-controller-manager over
# etcd (SERVER=kube), started as hack/make-rules/test-cmd.sh starts them.
# BIN holds kapi or kube-apiserver and kube-controller-manager; kubectl and
# kubectl-convert are in KUBE_ROOT/_output/bin. hack/test-cmd.sh sets it up.
set -o errexit -o nounset -o pipefail
export KUBE_CACHE_MUTATION_DETECTOR=true KUBE_PANIC_WATCH_DECODE_ERROR=true
cd "${KUBE_ROOT:?}"
KUBE_ROOT=.
source hack/lib/init.sh
source hack/lib/test.sh
source test/cmd/legacy-script.sh
SERVER=${SERVER:-kapi}
make() { :; } # the binaries are built already
if [[ $SERVER == kapi ]]; then
  # kapi keeps its data in memory when given no etcd.
  kube::etcd::start() { :; }
  kube::etcd::cleanup() { :; }
fi
SERVICE_ACCOUNT_KEY=${KUBE_TEMP_ROOT:?}/serviceaccount.key
[[ -f $SERVICE_ACCOUNT_KEY ]] || openssl genrsa -out "${SERVICE_ACCOUNT_KEY}" 2048 2>/dev/null

# run_kube_apiserver starts the server with test-cmd.sh's flags; kapi also
# runs the controllers kube-controller-manager would (not the scheduler:
# the suite runs none). $1 names its log: custom (--version=...-custom) or main.
function run_kube_apiserver() {
  local which=$1 cmd=("${BIN:?}/kube-apiserver") version=() storage=(--etcd-servers="http://${ETCD_HOST}:${ETCD_PORT}") controllers=()
  if [[ $SERVER == kapi ]]; then
    cmd=("${BIN}/kapi" kube-apiserver) storage=()
    [[ $which == main ]] && controllers=(--controllers='*,-kube-scheduler,-simulated-nodes')
  fi
  [[ $which == custom ]] && version=(--version="$("${cmd[@]}" --version | awk '{print $2}')-custom")
  "${cmd[@]}" ${version[@]+"${version[@]}"} \
    --bind-address=127.0.0.1 --authorization-mode=RBAC,AlwaysAllow --secure-port="${SECURE_API_PORT}" \
    --feature-gates= --enable-admission-plugins=LimitRanger,ResourceQuota \
    --disable-admission-plugins=ServiceAccount,DefaultStorageClass,DefaultTolerationSeconds,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,StorageObjectInUseProtection \
    ${storage[@]+"${storage[@]}"} --runtime-config=api/v1 \
    --service-account-key-file="${SERVICE_ACCOUNT_KEY}" --service-account-lookup=true \
    --service-account-issuer=https://kubernetes.default.svc --service-account-signing-key-file="${SERVICE_ACCOUNT_KEY}" \
    --storage-media-type= --cert-dir="${TMPDIR:-/tmp/}" --service-cluster-ip-range=10.0.0.0/24 \
    --client-ca-file=hack/testdata/ca/ca.crt --token-auth-file=hack/testdata/auth-tokens.csv \
    ${controllers[@]+"${controllers[@]}"} >"${LOG_DIR:?}/apiserver-${which}.log" 2>&1 &
  export APISERVER_PID=$!
  kube::util::wait_for_url_with_bearer_token "https://127.0.0.1:${SECURE_API_PORT}/healthz" "admin-token" "apiserver"
}

function run_kube_controller_manager() {
  [[ $SERVER == kapi ]] && return 0
  local config="${LOG_DIR}/controller-manager.kubeconfig"
  cat <<EOC >"$config"
kind: Config
users: [{name: controller-manager, user: {token: admin-token}}]
clusters: [{name: local, cluster: {server: "https://127.0.0.1:${SECURE_API_PORT}", insecure-skip-tls-verify: true}}]
contexts: [{name: local-context, context: {cluster: local, user: controller-manager}}]
current-context: local-context
EOC
  "${BIN}/kube-controller-manager" --cluster-signing-cert-file=hack/testdata/ca/ca.crt \
    --cluster-signing-key-file=hack/testdata/ca/ca.key --kubeconfig="${config}" >"${LOG_DIR}/controller-manager.log" 2>&1 &
  export CTLRMGR_PID=$!
  kube::util::wait_for_url "https://127.0.0.1:${SECURE_CTLRMGR_PORT}/healthz" "controller-manager"
}

function create_node() {
  kubectl create -f - <<'EON'
{"kind": "Node", "apiVersion": "v1", "metadata": {"name": "127.0.0.1", "annotations": {"save-managers": "true"}}, "status": {"capacity": {"memory": "1Gi"}}}
EON
}

setup
run_kube_apiserver custom
kube::test::if_has_string "$(kubectl get --raw /version)" "gitVersion.*-custom"
kill "${APISERVER_PID}" 1>&2 2>/dev/null
wait "${APISERVER_PID}" || true
unset APISERVER_PID
run_kube_apiserver main
run_kube_controller_manager
create_node
export SUPPORTED_RESOURCES=("*")
runTests
kube::log::status "TESTS PASSED"
