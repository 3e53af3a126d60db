// Command kapi is a Kubernetes API server in one binary.
//
//	kapi serve [--data-dir DIR] [--listen HOST:PORT] [--storage pebble|memory|etcd [--etcd-servers URLS]] [--controllers LIST] [--simulated-nodes N] [--v N]
//	kapi version
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/internal/admission"
	"github.com/kapi-dev/kapi/internal/auth"
	"github.com/kapi-dev/kapi/internal/controllers"
	"github.com/kapi-dev/kapi/internal/logging"
	"github.com/kapi-dev/kapi/internal/memory"
	"github.com/kapi-dev/kapi/internal/memory/startheap"
	"github.com/kapi-dev/kapi/internal/server"
	"github.com/kapi-dev/kapi/internal/storage/etcd"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "version" {
		v := server.Version()
		fmt.Printf("kapi, emulating Kubernetes %s (%s, %s)\n", v.GitVersion, v.GoVersion, v.Platform)
		return
	}
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: kapi serve [--data-dir DIR] [--listen HOST:PORT] | kapi version")
		os.Exit(2)
	}
	flags := flag.NewFlagSet("serve", flag.ExitOnError)
	dataDir := flags.String("data-dir", "./kapi-data", "directory for storage, credentials and the admin kubeconfig")
	pkiDir := flags.String("pki-dir", "", "directory of the CAs, keys and serving certificate (default: pki in --data-dir); servers sharing an etcd cluster share it, so that credentials and service account tokens of one are good on all")
	listen := flags.String("listen", "127.0.0.1:6443", "address to serve HTTPS on")
	window := flags.Duration("history-window", 5*time.Minute, "how long past resource versions stay readable and watchable")
	minTimeout := flags.Duration("min-request-timeout", 30*time.Minute, "watches without timeoutSeconds end at a random time between this and twice this")
	eventTTL := flags.Duration("event-ttl", time.Hour, "how long events are kept after their last write, as kube-apiserver's flag")
	maxWatches := flags.Int("max-watches", 10000, "how many watches may be open at once; more get 429 Too Many Requests with Retry-After, for clients to retry")
	bookmarks := flags.Duration("bookmark-interval", time.Minute, "how long after its start, and after each bookmark, a watch that allows bookmarks gets one (it also gets one 2s before its timeout)")
	storageName := flags.String("storage", "pebble", "storage backend: pebble (on disk in --data-dir), memory (gone when kapi stops) or etcd (in the etcd cluster --etcd-servers names)")
	etcdServers := flags.String("etcd-servers", "", "with --storage etcd: comma-separated client URLs of etcd members (https://10.0.0.1:2379,...), as kube-apiserver's flag")
	etcdCAFile := flags.String("etcd-cafile", "", "with --storage etcd: PEM bundle of the CAs that sign etcd's serving certificates")
	etcdCertFile := flags.String("etcd-certfile", "", "with --storage etcd: client certificate that authenticates kapi to etcd")
	etcdKeyFile := flags.String("etcd-keyfile", "", "with --storage etcd: key of --etcd-certfile")
	etcdPrefix := flags.String("etcd-prefix", "", "with --storage etcd: prefix put in front of every key (kapi's keys already start with /registry/)")
	controllerList := flags.String("controllers", "*", "controllers to run, as kube-controller-manager's flag: '*' for all, 'name' to enable one, '-name' to disable one; known: "+strings.Join(controllers.All, ", "))
	simulatedNodes := flags.Int("simulated-nodes", 0, "how many simulated nodes to register (node-1 to node-N): kapi keeps them Ready and plays their kubelets, so that scheduled pods run without containers; nodes labelled kapi.dev/simulated=true are simulated too")
	advertise := flags.String("advertise-address", "", "the address the kubernetes Service's endpoints name (default: the --listen address, or the host's default address when that is loopback or unspecified)")
	authorizationMode := flags.String("authorization-mode", "RBAC", "authorizers tried in order, as kube-apiserver's flag: a comma-separated list of Node (kubelets read what their node's pods use), RBAC, and AlwaysAllow (every authenticated user may do everything)")
	admissionPlugins := flags.String("enable-admission-plugins", "", "admission plugins to run besides the default ones, as kube-apiserver's flag: a comma-separated list of "+strings.Join(admission.OptionalPlugins(), ", "))
	clientCAFile := flags.String("client-ca-file", "", "a PEM bundle of more CAs whose client certificates authenticate (CN user, O groups), besides kapi's own")
	tokenAuthFile := flags.String("token-auth-file", "", "a CSV file of static bearer tokens (token,user,uid,\"group1,group2\"), as kube-apiserver's flag")
	anonymousAuth := flags.Bool("anonymous-auth", true, "treat requests without credentials as system:anonymous, for RBAC to decide, as kube-apiserver's flag (false: they get 401, health and version included)")
	var issuers, keyFiles repeatedFlag
	flags.Var(&issuers, "service-account-issuer", "the issuer of service account tokens, as kube-apiserver's flag: given more than once, the first is the issuer of the tokens made and all are accepted (default "+auth.DefaultIssuer+")")
	apiAudiences := flags.String("api-audiences", "", "comma-separated audiences of the API, as kube-apiserver's flag: a service account token for none of them does not authenticate (default: the issuers)")
	signingKeyFile := flags.String("service-account-signing-key-file", "", "a PEM private key (RSA or ECDSA) to sign service account tokens with, as kube-apiserver's flag (default: kapi's own, sa.key in the PKI directory)")
	flags.Var(&keyFiles, "service-account-key-file", "a PEM file of more keys (public or private keys, certificates) whose service account tokens are accepted and published in /openid/v1/jwks, as kube-apiserver's flag: the keys of an earlier signing key; may be given more than once")
	maxTokenExpiration := flags.Duration("service-account-max-token-expiration", 0, "the longest a TokenRequest's token lasts: longer requests are shortened to it, as kube-apiserver's flag (0: no maximum; otherwise 1h to 2^32s)")
	extendTokenExpiration := flags.Bool("service-account-extend-token-expiration", true, "pods' projected tokens (asking for kube's default 3607s) last a year but warn after their hour, as kube-apiserver's flag")
	jwksURI := flags.String("service-account-jwks-uri", "", "the https URL of the key set that /.well-known/openid-configuration names, as kube-apiserver's flag (default: kapi's own /openid/v1/jwks)")
	auditPolicy := flags.String("audit-policy-file", "", "an audit.k8s.io/v1 Policy: which requests are audited, at which level")
	auditLog := flags.String("audit-log-path", "", "where audit events go, one JSON line each ('-' for standard output)")
	featureGates := flags.String("feature-gates", "", "comma-separated NAME=true|false pairs for Kubernetes feature gates, as kube-apiserver's flag (AllowUnsafeMalformedObjectDeletion=false, ...)")
	verbosity := flags.Int("v", 0, "log verbosity, as Kubernetes components' flag: the log (log/slog's text format on standard error) shows V(n) lines (slog level -n) for n up to this")
	configFile := flags.String("config", "", "a YAML or JSON file of flag values by flag name (listen: 127.0.0.1:6443); flags on the command line win")
	flags.Parse(os.Args[2:])
	if *configFile != "" {
		if err := applyConfigFile(flags, *configFile); err != nil {
			fmt.Fprintf(os.Stderr, "--config: %v\n", err)
			os.Exit(2)
		}
	}
	if err := utilfeature.DefaultMutableFeatureGate.Set(*featureGates); err != nil {
		fmt.Fprintf(os.Stderr, "--feature-gates: %v\n", err)
		os.Exit(2)
	}
	selection, err := controllers.ParseSelection(*controllerList)
	if err != nil {
		fmt.Fprintf(os.Stderr, "--controllers: %v\n", err)
		os.Exit(2)
	}
	if *verbosity < 0 {
		fmt.Fprintf(os.Stderr, "--v %d: must not be negative\n", *verbosity)
		os.Exit(2)
	}
	tokenOptions := auth.TokenOptions{
		Issuers: issuers, APIAudiences: splitList(*apiAudiences), SigningKeyFile: *signingKeyFile, KeyFiles: keyFiles,
		MaxExpiration: *maxTokenExpiration, ExtendExpiration: *extendTokenExpiration, JWKSURI: *jwksURI,
	}
	if err := tokenOptions.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var etcdOpts *etcd.Options
	if *storageName == "etcd" {
		etcdOpts = &etcd.Options{CAFile: *etcdCAFile, CertFile: *etcdCertFile, KeyFile: *etcdKeyFile, Prefix: *etcdPrefix}
		for _, u := range strings.Split(*etcdServers, ",") {
			if u = strings.TrimSpace(u); u != "" {
				etcdOpts.Endpoints = append(etcdOpts.Endpoints, u)
			}
		}
		if len(etcdOpts.Endpoints) == 0 {
			fmt.Fprintln(os.Stderr, "--storage etcd needs --etcd-servers")
			os.Exit(2)
		}
	} else if *etcdServers != "" {
		fmt.Fprintln(os.Stderr, "--etcd-servers needs --storage etcd")
		os.Exit(2)
	}
	openStorage := server.StorageBackend(*storageName, *dataDir, etcdOpts)
	if openStorage == nil {
		fmt.Fprintf(os.Stderr, "unknown --storage %q: pebble, memory or etcd\n", *storageName)
		os.Exit(2)
	}

	logVerbosity := logging.NewVerbosity(*verbosity)
	logger := logging.NewVariable(os.Stderr, logVerbosity)
	slog.SetDefault(logger) // what logs through the log package or slog's default logger
	if err := logging.RouteKlog(logger, logVerbosity); err != nil {
		fmt.Fprintf(os.Stderr, "--v: %v\n", err)
		os.Exit(2)
	}
	fatal := func(msg string, err error) {
		logger.Error(msg, "err", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The process's free heap goes back to the system after bursts
	// (docs/PERFORMANCE.md, "Memory").
	go memory.ReleaseFree(ctx, 10*time.Second, 64<<20)

	srv, err := server.Start(ctx, server.Config{
		DataDir: *dataDir, PKIDir: *pkiDir, Listen: *listen, Logger: logger, Verbosity: logVerbosity, SharedStorage: *storageName == "etcd",
		HistoryWindow: *window, EventTTL: *eventTTL, MinRequestTimeout: *minTimeout, MaxWatches: *maxWatches, BookmarkInterval: *bookmarks,
		OpenStorage: openStorage, Controllers: selection, AdvertiseAddress: *advertise, SimulatedNodes: *simulatedNodes,
		AuthorizationMode: *authorizationMode, EnableAdmissionPlugins: splitList(*admissionPlugins), TokenAuthFile: *tokenAuthFile, ClientCAFile: *clientCAFile, AnonymousAuth: *anonymousAuth,
		ServiceAccountTokens: tokenOptions, AuditPolicyFile: *auditPolicy, AuditLogPath: *auditLog,
		Flags: flagValues(flags),
	})
	if err != nil {
		fatal("starting failed", err)
	}
	startheap.Started()
	logger.Info("serving", "version", server.Version().GitVersion, "url", srv.URL, "kubeconfig", srv.Kubeconfig)
	kubeconfig, err := filepath.Abs(srv.Kubeconfig)
	if err != nil {
		kubeconfig = srv.Kubeconfig
	}
	fmt.Fprintf(os.Stderr, "\nTo use it with kubectl:\n\n  export KUBECONFIG=%s\n  kubectl get namespaces\n\n", kubeconfig)

	select {
	case <-ctx.Done():
		logger.Info("shutting down")
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			fatal("shutting down failed", err)
		}
	case <-waitDone(srv):
		if err := srv.Wait(); err != nil {
			fatal("serving failed", err)
		}
	}
}

func waitDone(srv *server.Server) <-chan struct{} {
	ch := make(chan struct{})
	go func() { srv.Wait(); close(ch) }()
	return ch
}

// flagValues are the flags of a parsed command line and their values,
// defaults included.
func flagValues(flags *flag.FlagSet) map[string]string {
	values := map[string]string{}
	flags.VisitAll(func(f *flag.Flag) { values[f.Name] = f.Value.String() })
	return values
}

// repeatedFlag is a flag that may be given more than once, each value
// added to the list as it is (commas included, as kube's StringArray
// flags); a config file's list sets it once per item.
type repeatedFlag []string

func (r *repeatedFlag) String() string { return strings.Join(*r, ",") }

func (r *repeatedFlag) Set(value string) error {
	*r = append(*r, value)
	return nil
}

// applyConfigFile sets the flags a config file names, except those given
// on the command line.
func applyConfigFile(flags *flag.FlagSet, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	values := map[string]interface{}{}
	if err := yaml.UnmarshalStrict(data, &values); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	given := map[string]bool{}
	flags.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for name, value := range values {
		if flags.Lookup(name) == nil || name == "config" {
			return fmt.Errorf("%s: unknown setting %q", path, name)
		}
		if given[name] {
			continue
		}
		items := []interface{}{value}
		if list, ok := value.([]interface{}); ok {
			if _, repeated := flags.Lookup(name).Value.(*repeatedFlag); repeated {
				items = list
			}
		}
		for _, item := range items {
			if err := flags.Set(name, flagValue(item)); err != nil {
				return fmt.Errorf("%s: %s: %w", path, name, err)
			}
		}
	}
	return nil
}

// flagValue writes a config file's value as the command line would: a
// number in full (YAML's numbers are floats: 1000000 is not "1e+06"), a
// list comma-separated.
func flagValue(value interface{}) string {
	switch v := value.(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []interface{}:
		items := make([]string, len(v))
		for i, item := range v {
			items[i] = flagValue(item)
		}
		return strings.Join(items, ",")
	}
	return fmt.Sprint(value)
}

// splitList reads a comma-separated flag value, as kube's list flags do.
func splitList(value string) []string {
	var items []string
	for _, item := range strings.Split(value, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}
