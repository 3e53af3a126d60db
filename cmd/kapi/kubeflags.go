package main

import (
	"flag"
	"log/slog"
)

// ignoredKubeFlags are kube-apiserver flags the kube-apiserver command
// accepts and does without: tuning of parts kapi does otherwise, the
// kubelet client and front proxy of a cluster's nodes and aggregated
// servers kapi configures itself, and logging formats. Flags that change
// what a client may do or see (encryption at rest, OIDC, webhooks of
// authentication or authorization, admission configuration) are not
// among them: kapi refuses those as unknown rather than run without them.
var ignoredKubeFlags = map[string]bool{
	// name: whether it is a boolean flag (given without a value)
	"profiling": true, "enable-priority-and-fairness": true, "enable-aggregator-routing": true,
	"enable-bootstrap-token-auth": true, "enable-garbage-collector": true, "watch-cache": true,
	"enable-logs-handler": true, "service-account-lookup": true, "permit-port-sharing": true,
	"permit-address-sharing": true, "contention-profiling": true, "debug-socket-path": false,
	"max-requests-inflight": false, "max-mutating-requests-inflight": false, "request-timeout": false,
	"runtime-config": false, "storage-backend": false, "storage-media-type": false,
	"default-watch-cache-size": false, "watch-cache-sizes": false, "delete-collection-workers": false,
	"endpoint-reconciler-type": false, "service-node-port-range": false,
	"kubelet-client-certificate": false, "kubelet-client-key": false, "kubelet-certificate-authority": false,
	"kubelet-preferred-address-types": false, "kubelet-timeout": false,
	"proxy-client-cert-file": false, "proxy-client-key-file": false,
	"requestheader-client-ca-file": false, "requestheader-allowed-names": false,
	"requestheader-username-headers": false, "requestheader-group-headers": false,
	"requestheader-extra-headers-prefix": false, "requestheader-uid-headers": false,
	"etcd-compaction-interval": false, "etcd-count-metric-poll-period": false, "etcd-db-metric-poll-interval": false,
	"etcd-healthcheck-timeout": false, "etcd-readycheck-timeout": false, "lease-reuse-duration-seconds": false,
	"shutdown-delay-duration": false, "shutdown-watch-termination-grace-period": false, "shutdown-send-retry-after": true,
	"livez-grace-period": false, "goaway-chance": false, "http2-max-streams-per-connection": false,
	"tls-cipher-suites": false, "tls-min-version": false, "logging-format": false, "log-flush-frequency": false,
	"audit-log-maxage": false, "audit-log-maxbackup": false, "audit-log-maxsize": false, "audit-log-format": false,
	"audit-log-mode": false, "external-hostname": false, "cors-allowed-origins": false, "emulated-version": false,
}

// ignoredFlag is an accepted kube-apiserver flag kapi does without.
type ignoredFlag struct {
	name, value string
	boolean     bool
}

func (f *ignoredFlag) String() string { return f.value }

func (f *ignoredFlag) Set(value string) error {
	f.value = value
	slog.Warn("kapi does without this kube-apiserver flag", "flag", "--"+f.name, "value", value)
	return nil
}

// IsBoolFlag lets a boolean flag go without a value, as kube-apiserver's.
func (f *ignoredFlag) IsBoolFlag() bool { return f.boolean }

func registerIgnoredKubeFlags(flags *flag.FlagSet) {
	for name, boolean := range ignoredKubeFlags {
		flags.Var(&ignoredFlag{name: name, boolean: boolean}, name, "a kube-apiserver flag kapi accepts and does without")
	}
}
