#!/usr/bin/env bash
# Runs kubectl's own test suite, test/cmd of k8s.io/kubernetes at the
# release kapi emulates (what `make test-cmd` runs in Kubernetes' CI),
# against kapi standing in for kube-apiserver and kube-controller-manager,
# or with KUBE=1 against those two over etcd, built from the same release.
#   hack/test-cmd.sh                       every test, against kapi
#   WHAT="pod deployment" hack/test-cmd.sh  only those (test-cmd's WHAT)
#   KUBE=1 hack/test-cmd.sh                against kube-apiserver + etcd
# It needs openssl, curl and (with KUBE=1) an etcd on PATH or
# ETCD_BIN=path. Its work goes to TEST_CMD_DIR (default: a new temporary
# directory); the server's log is in its logs/. The suite names each test
# function it runs ("Recording: run_..."), and ends with "TESTS PASSED" or
# "FAILED TESTS: ..." and a non-zero exit.
set -o errexit -o nounset -o pipefail
cd "$(dirname "$0")/.."
dir=${TEST_CMD_DIR:-$(mktemp -d)}
mkdir -p "$dir/bin" "$dir/logs"
bin=$dir/bin

# The release's version, as kube-apiserver and kubectl are built by
# Kubernetes' build (kubectl --match-server-version and test-cmd's checks
# of the version read it).
release=$(go list -m -f '{{.Version}}' k8s.io/api | sed 's/^v0\./v1./')
minor=$(echo "$release" | cut -d. -f2)
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$release -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
done

echo "building kapi, kubectl and kubectl-convert ($release)" >&2
go build -tags grpcnotrace -o "$bin/kapi" ./cmd/kapi
go -C hack/kube-apiserver mod download k8s.io/kubernetes
kube_src=$(go -C hack/kube-apiserver list -m -f '{{.Dir}}' k8s.io/kubernetes)
tree=$dir/kubernetes
if [[ ! -d $tree ]]; then
  cp -r "$kube_src" "$tree"
  chmod -R u+w "$tree"
  # The module's files lose their modes: the suite's scripts and plugins
  # must be executable.
  grep -rlI '^#!' "$tree/test/fixtures" "$tree/hack" "$tree/third_party/forked/shell2junit" | xargs chmod +x
fi
mkdir -p "$tree/_output/bin"
for cmd in kubectl kubectl-convert; do
  go -C hack/kube-apiserver build -ldflags "$ldflags" -o "$tree/_output/bin/$cmd" "k8s.io/kubernetes/cmd/$cmd"
done
server=kapi
if [[ -n ${KUBE:-} ]]; then
  server=kube
  echo "building kube-apiserver and kube-controller-manager ($release)" >&2
  for cmd in kube-apiserver kube-controller-manager; do
    go -C hack/kube-apiserver build -ldflags "$ldflags" -o "$bin/$cmd" "k8s.io/kubernetes/cmd/$cmd"
  done
  if [[ -n ${ETCD_BIN:-} ]]; then
    ln -sf "$ETCD_BIN" "$bin/etcd"
  fi
fi

mkdir -p "$dir/tmp"
export PATH="$tree/_output/bin:$bin:$PATH" SERVER=$server BIN=$bin LOG_DIR=$dir/logs KUBE_ROOT=$tree KUBE_TEMP_ROOT=$dir
# The suite's files (its kubeconfigs, the server's --cert-dir) go to TMPDIR.
export TMPDIR=$dir/tmp KUBE_JUNIT_REPORT_DIR=$dir/junit SECURE_API_PORT=${SECURE_API_PORT:-16443}
# kubectl --match-server-version wants the server's whole version equal to
# kubectl's, build commit and date included: kapi has its own.
export ALLOW_SKEW=1
exec hack/test-cmd/suite.sh
