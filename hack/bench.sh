#!/usr/bin/env bash
# Runs kapi-load against a fresh kapi and, when asked, against a fresh
# kube-apiserver over etcd on this machine's loopback address, and prints one
# table of both side by side: server CPU per operation (kube-apiserver and
# etcd together), latencies and resident memory.
#
#   hack/bench.sh [kapi-load flags...]              kapi alone
#   KUBE=1 hack/bench.sh [kapi-load flags...]       kapi, then kube-apiserver + etcd
#   KUBE_ONLY=1 hack/bench.sh [kapi-load flags...]  kube-apiserver + etcd, compared with the last kapi run
#
# kube-apiserver and etcd are built from their Go modules (k8s.io/kubernetes
# at the release kapi emulates, pinned by hack/kube-apiserver; the etcd
# server kapi's tests embed), or taken
# from KUBE_APISERVER and ETCD when those name binaries. kapi runs with its
# controllers but without kube-scheduler (KAPI_FLAGS overrides): with no
# nodes the scheduler would write an event and a condition for every pod,
# work kube-apiserver alone is not given. Both servers keep their data on
# disk. Results, logs and data go to ./kapi-bench (BENCH_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mkdir -p "${BENCH_DIR:-kapi-bench}" && cd "${BENCH_DIR:-kapi-bench}" && pwd)
mkdir -p "$dir/bin" "$dir/logs"
kapi_port=16443 etcd_port=16379 kube_port=16444

echo "building kapi and kapi-load" >&2
go build -tags grpcnotrace -o "$dir/bin/kapi" ./cmd/kapi
go build -o "$dir/bin/kapi-load" ./cmd/kapi-load

pids=()
# stop ends the servers this script started, the last started first (so
# kube-apiserver before its etcd), each given 15 s before SIGKILL.
stop() {
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    local pid=${pids[i]}
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 150); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  pids=()
}
trap stop INT TERM EXIT

# wait_ready URL [curl flags...]: until /readyz answers 200, at most 60 s.
wait_ready() {
  local url=$1
  shift
  for _ in $(seq 600); do
    if curl -sfk "$@" "$url/readyz" >/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "$url did not become ready" >&2
  return 1
}

run_kapi() {
  rm -rf "$dir/kapi-data"
  "$dir/bin/kapi" serve --data-dir "$dir/kapi-data" --listen "127.0.0.1:$kapi_port" \
    ${KAPI_FLAGS:---controllers=*,-kube-scheduler} >"$dir/logs/kapi.log" 2>&1 &
  pids+=($!)
  local kapi=$!
  until [ -s "$dir/kapi-data/kubeconfig" ]; do sleep 0.1; done
  wait_ready "https://127.0.0.1:$kapi_port"
  sleep 5 # the controllers' informers sync
  echo "== kapi" >&2
  "$dir/bin/kapi-load" --kubeconfig "$dir/kapi-data/kubeconfig" --pids "$kapi" --out "$dir/kapi.json" "$@" | tee "$dir/kapi.txt"
  stop
}

run_kube() {
  local kube=${KUBE_APISERVER:-} etcd=${ETCD:-}
  if [ -z "$kube" ]; then
    echo "building kube-apiserver (k8s.io/kubernetes/cmd/kube-apiserver, pinned by hack/kube-apiserver)" >&2
    go -C hack/kube-apiserver build -o "$dir/bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
    kube=$dir/bin/kube-apiserver
  fi
  if [ -z "$etcd" ]; then
    echo "building etcd (go.etcd.io/etcd/server/v3)" >&2
    go build -o "$dir/bin/etcd" go.etcd.io/etcd/server/v3
    etcd=$dir/bin/etcd
  fi
  rm -rf "$dir/etcd-data" "$dir/kube"
  mkdir -p "$dir/kube"
  openssl genrsa -out "$dir/kube/sa.key" 2048 2>/dev/null
  openssl rsa -in "$dir/kube/sa.key" -pubout -out "$dir/kube/sa.pub" 2>/dev/null
  local token
  token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  echo "$token,kapi-bench,kapi-bench,system:masters" >"$dir/kube/tokens.csv"

  "$etcd" --data-dir "$dir/etcd-data" --listen-client-urls "http://127.0.0.1:$etcd_port" \
    --advertise-client-urls "http://127.0.0.1:$etcd_port" --listen-peer-urls "http://127.0.0.1:$((etcd_port + 1))" \
    --log-level warn >"$dir/logs/etcd.log" 2>&1 &
  pids+=($!)
  local etcd_pid=$!
  "$kube" --etcd-servers "http://127.0.0.1:$etcd_port" --bind-address 127.0.0.1 --secure-port "$kube_port" \
    --cert-dir "$dir/kube" --token-auth-file "$dir/kube/tokens.csv" --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$dir/kube/sa.pub" \
    --service-account-signing-key-file "$dir/kube/sa.key" --service-cluster-ip-range 10.0.0.0/24 \
    >"$dir/logs/kube-apiserver.log" 2>&1 &
  pids+=($!)
  local kube_pid=$!
  wait_ready "https://127.0.0.1:$kube_port" -H "Authorization: Bearer $token"
  cat >"$dir/kube/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kube
  cluster: {server: "https://127.0.0.1:$kube_port", insecure-skip-tls-verify: true}
users:
- name: kapi-bench
  user: {token: "$token"}
contexts:
- name: kube
  context: {cluster: kube, user: kapi-bench}
current-context: kube
EOF
  sleep 5
  echo "== kube-apiserver + etcd" >&2
  "$dir/bin/kapi-load" --kubeconfig "$dir/kube/kubeconfig" --pids "$kube_pid,$etcd_pid" --out "$dir/kube.json" "$@" | tee "$dir/kube.txt"
  stop
}

[ -n "${KUBE_ONLY:-}" ] || run_kapi "$@"
if [ -n "${KUBE:-}${KUBE_ONLY:-}" ]; then
  run_kube "$@"
  echo
  echo "A: kapi, B: kube-apiserver + etcd"
  "$dir/bin/kapi-load" compare "$dir/kapi.json" "$dir/kube.json" | tee "$dir/compare.txt"
fi
