#!/usr/bin/env bash
# Starts a three-member etcd cluster and three kapi replicas over it on this
# machine's loopback address, for a try of what docs/CLUSTER.md describes,
# and writes a kubeconfig with one context per replica. Ctrl-C stops
# everything it started.
#
#   hack/cluster.sh [DIR]      (default ./kapi-cluster)
#
# etcd: clients on 127.0.0.1:2379, :22379, :32379 (peers on :2380, :22380,
# :32380). kapi: https://127.0.0.1:6443, :6444, :6445. Data, logs and the
# kubeconfig go in DIR; run it again on the same DIR to restart on the same
# data.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mkdir -p "${1:-kapi-cluster}" && cd "${1:-kapi-cluster}" && pwd)
mkdir -p "$dir/bin" "$dir/logs"

echo "building kapi and etcd (etcd's own server, from the Go module kapi's tests use)"
go build -tags grpcnotrace -o "$dir/bin/kapi" ./cmd/kapi
go build -o "$dir/bin/etcd" go.etcd.io/etcd/server/v3

pids=()
stop() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop INT TERM EXIT

cluster=member-1=http://127.0.0.1:2380,member-2=http://127.0.0.1:22380,member-3=http://127.0.0.1:32380
endpoints=http://127.0.0.1:2379,http://127.0.0.1:22379,http://127.0.0.1:32379
for i in 1 2 3; do
  port=$(( i == 1 ? 2379 : i * 10000 + 2379 ))
  "$dir/bin/etcd" --name "member-$i" --data-dir "$dir/etcd-$i" \
    --listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
    --listen-peer-urls "http://127.0.0.1:$((port + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((port + 1))" \
    --initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token kapi-cluster \
    --log-level warn >"$dir/logs/etcd-$i.log" 2>&1 &
  pids+=($!)
done

# One replica at a time: the first creates the PKI the others share.
for i in 1 2 3; do
  "$dir/bin/kapi" serve --data-dir "$dir/kapi-$i" --pki-dir "$dir/pki" --listen "127.0.0.1:$((6442 + i))" \
    --storage etcd --etcd-servers "$endpoints" >"$dir/logs/kapi-$i.log" 2>&1 &
  pids+=($!)
  until [ -s "$dir/kapi-$i/kubeconfig" ]; do
    if ! kill -0 "${pids[-1]}" 2>/dev/null; then
      echo "kapi-$i exited; its log:" >&2
      cat "$dir/logs/kapi-$i.log" >&2
      exit 1
    fi
    sleep 0.2
  done
done

# One kubeconfig, a cluster and a context per replica (kapi-1 current).
configs=()
for i in 1 2 3; do
  sed -e "s/^- name: kapi\$/- name: kapi-$i/" -e "s/cluster: kapi\$/cluster: kapi-$i/" \
    -e "s/^current-context: kapi\$/current-context: kapi-1/" "$dir/kapi-$i/kubeconfig" >"$dir/kubeconfig-$i"
  configs+=("$dir/kubeconfig-$i")
done
KUBECONFIG=$(IFS=:; echo "${configs[*]}") kubectl config view --flatten >"$dir/kubeconfig"
rm "${configs[@]}"

cat <<EOF

etcd:  $endpoints
kapi:  https://127.0.0.1:6443 (context kapi-1), :6444 (kapi-2), :6445 (kapi-3)
logs:  $dir/logs

  export KUBECONFIG=$dir/kubeconfig
  kubectl get --raw /readyz --context kapi-2
  kubectl get leases -n kube-system

Ctrl-C stops the cluster.
EOF
wait -n "${pids[@]}" || true
echo "stopping the cluster" >&2
