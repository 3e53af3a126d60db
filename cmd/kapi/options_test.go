package main

import (
	"flag"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"

	"github.com/kapi-dev/kapi/internal/server"
)

// parse parses a command line; one of the kube-apiserver command names a
// temporary --cert-dir unless it names one (the self-signed certificate
// goes there).
func parse(t *testing.T, mode commandMode, args ...string) (*serveOptions, server.Config, error) {
	t.Helper()
	if mode.kube && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--cert-dir") }) {
		args = append([]string{"--cert-dir=" + t.TempDir()}, args...)
	}
	flags := flag.NewFlagSet("test", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	opts := mode.register(flags)
	if err := flags.Parse(args); err != nil {
		return nil, server.Config{}, err
	}
	cfg, err := opts.config(flags)
	return opts, cfg, err
}

// TestKubeAPIServerFlags: the kube-apiserver command reads a command line
// as envtest and kubeadm write it, with kube-apiserver's defaults.
func TestKubeAPIServerFlags(t *testing.T) {
	certDir := t.TempDir()
	opts, cfg, err := parse(t, kubeAPIServerDefaults,
		"--secure-port=16443", "--bind-address=127.0.0.1", "--cert-dir="+certDir,
		"--etcd-servers=http://127.0.0.1:2379", "--etcd-prefix=/tenant-a/registry",
		"--min-request-timeout=60", "--service-cluster-ip-range=10.1.0.0/16", "--profiling",
		"--allow-privileged=true", "--disable-admission-plugins=ServiceAccount", "--authorization-mode=RBAC")
	if err != nil {
		t.Fatal(err)
	}
	for what, got := range map[string][2]string{
		"listen":      {*opts.listen, "127.0.0.1:16443"},
		"data dir":    {*opts.dataDir, filepath.Join(certDir, "kapi")},
		"storage":     {*opts.storageName, "etcd"},
		"etcd prefix": {*opts.etcdPrefix, "/tenant-a"},
		"controllers": {*opts.controllerList, "-*"},
	} {
		if got[0] != got[1] {
			t.Errorf("%s: %q, want %q", what, got[0], got[1])
		}
	}
	if cfg.ServiceClusterIPRange.String() != "10.1.0.0/16" {
		t.Errorf("--service-cluster-ip-range=10.1.0.0/16: %v", cfg.ServiceClusterIPRange)
	}
	if *opts.minTimeout != time.Minute {
		t.Errorf("--min-request-timeout=60: %v", *opts.minTimeout)
	}
	// An empty --cert-dir gets kube-apiserver's self-signed certificate,
	// served from there (and again on the next start).
	if *opts.tlsCertFile != filepath.Join(certDir, "apiserver.crt") || *opts.tlsKeyFile != filepath.Join(certDir, "apiserver.key") {
		t.Errorf("serving files: %q, %q", *opts.tlsCertFile, *opts.tlsKeyFile)
	}
	chain, err := certutil.CertsFromFile(*opts.tlsCertFile)
	if err != nil || len(chain) != 2 {
		t.Fatalf("apiserver.crt: %d certificates, %v; want the certificate and its CA", len(chain), err)
	}
	if err := chain[0].VerifyHostname("127.0.0.1"); err != nil {
		t.Errorf("the bound address: %v", err)
	}
	if err := chain[0].VerifyHostname("10.1.0.1"); err != nil {
		t.Errorf("the kubernetes Service's address: %v", err)
	}
	written := chain[0].SerialNumber
	opts, _, err = parse(t, kubeAPIServerDefaults, "--cert-dir="+certDir)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := certutil.CertsFromFile(*opts.tlsCertFile); err != nil || again[0].SerialNumber.Cmp(written) != 0 {
		t.Errorf("a second start made another certificate: %v", err)
	}

	opts, cfg, err = parse(t, kubeAPIServerDefaults)
	if err != nil {
		t.Fatal(err)
	}
	if *opts.listen != "0.0.0.0:6443" || *opts.storageName != "memory" || *opts.authorizationMode != "AlwaysAllow" || *opts.allowPrivileged ||
		cfg.ServiceClusterIPRange.String() != "10.0.0.0/24" {
		t.Errorf("kube-apiserver's defaults: listen %q, storage %q, authorization %q, privileged %v, service range %v",
			*opts.listen, *opts.storageName, *opts.authorizationMode, *opts.allowPrivileged, cfg.ServiceClusterIPRange)
	}
}

// TestKubeAPIServerFlagsRefused: flags kapi cannot honour stop it, in
// either command.
func TestKubeAPIServerFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		mode commandMode
		args []string
		want string
	}{
		{kubeAPIServerDefaults, []string{"--encryption-provider-config=enc.yaml"}, "flag provided but not defined: -encryption-provider-config"},
		{kubeAPIServerDefaults, []string{"--etcd-prefix=/elsewhere"}, `--etcd-prefix "/elsewhere": kapi keeps its keys under /registry`},
		{kapiDefaults, []string{"--secure-port=6443"}, "flag provided but not defined: -secure-port"},
		{kapiDefaults, []string{"--tls-cert-file=tls.crt"}, "--tls-cert-file and --tls-private-key-file go together"},
		{kapiDefaults, []string{"--service-cluster-ip-range=10.0.0.0/24,fd00::/108"}, "kapi takes one IPv4 CIDR"},
	} {
		_, _, err := parse(t, tc.mode, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want %q", tc.args, err, tc.want)
		}
	}
}

// TestKubeAPIServerVersionFlag: --version=v1.X.Y-suffix makes the server
// report that version (kubectl's own tests start kube-apiserver so), one
// of another release is refused, and --version alone or =raw asks for the
// version to be printed.
func TestKubeAPIServerVersionFlag(t *testing.T) {
	custom := server.Version().GitVersion + "-custom"
	_, cfg, err := parse(t, kubeAPIServerDefaults, "--version="+custom)
	if err != nil || cfg.GitVersion != custom {
		t.Errorf("--version=%s: %q, %v", custom, cfg.GitVersion, err)
	}
	if _, _, err := parse(t, kubeAPIServerDefaults, "--version=v1.0.0"); err == nil || !strings.Contains(err.Error(), "must match major/minor/patch") {
		t.Errorf("--version=v1.0.0: %v; want it refused", err)
	}
	for args, want := range map[string]string{"--version": "true", "--version=raw": "raw", "--version=false": "false"} {
		opts, cfg, err := parse(t, kubeAPIServerDefaults, args)
		if err != nil || opts.version.String() != want || cfg.GitVersion != "" {
			t.Errorf("%s: %q, %q, %v; want %q", args, opts.version.String(), cfg.GitVersion, err, want)
		}
	}
}
