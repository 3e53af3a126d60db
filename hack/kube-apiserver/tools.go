//go:build tools

// Package kubeapiserver keeps kube-apiserver in this module's
// requirements, and kube-controller-manager and kubectl with it:
// hack/bench.sh builds k8s.io/kubernetes/cmd/kube-apiserver, and
// hack/test-cmd.sh the four main packages kubectl's own test suite runs.
package kubeapiserver

import (
	_ "k8s.io/kubectl/pkg/cmd"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/pkg/kubectl/cmd/convert"
)
