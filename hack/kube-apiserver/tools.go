//go:build tools

// Package kubeapiserver keeps kube-apiserver in this module's
// requirements; hack/bench.sh builds its main package,
// k8s.io/kubernetes/cmd/kube-apiserver.
package kubeapiserver

import _ "k8s.io/kubernetes/cmd/kube-apiserver/app"
