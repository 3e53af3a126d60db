package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/kubernetes/pkg/capabilities"

	"github.com/kapi-dev/kapi/internal/admission"
	"github.com/kapi-dev/kapi/internal/auth"
	"github.com/kapi-dev/kapi/internal/builtin"
	"github.com/kapi-dev/kapi/internal/controllers"
	"github.com/kapi-dev/kapi/internal/server"
	"github.com/kapi-dev/kapi/internal/storage/etcd"
)

// commandMode sets the serve command apart from the kube-apiserver one: the
// second takes kube-apiserver's flags with kube-apiserver's defaults, so
// that kapi can stand in for the kube-apiserver binary (as envtest starts
// it), besides kapi's own flags.
type commandMode struct {
	kube bool
}

var (
	kapiDefaults          = commandMode{}
	kubeAPIServerDefaults = commandMode{kube: true}
)

// serveOptions are the parsed flags of either command.
type serveOptions struct {
	mode                                                 commandMode
	dataDir, pkiDir, listen, storageName                 *string
	etcdServers, etcdCAFile, etcdCertFile, etcdKeyFile   *string
	etcdPrefix, controllerList, advertise                *string
	authorizationMode, enableAdmission, disableAdmission *string
	clientCAFile, tokenAuthFile, apiAudiences            *string
	signingKeyFile, jwksURI, auditPolicy, auditLog       *string
	featureGates, configFile, tlsCertFile, tlsKeyFile    *string
	serviceRange                                         *string
	window, minTimeout, eventTTL, bookmarks              *time.Duration
	maxTokenExpiration                                   *time.Duration
	maxWatches, simulatedNodes, verbosity                *int
	anonymousAuth, extendTokenExpiration                 *bool
	allowPrivileged                                      *bool
	issuers, keyFiles                                    repeatedFlag
	version                                              versionFlag
	// kube-apiserver's flags that kapi's serve command says otherwise.
	securePort, minTimeoutSeconds *int
	bindAddress, certDir          *string
}

func (m commandMode) register(flags *flag.FlagSet) *serveOptions {
	o := &serveOptions{mode: m}
	o.dataDir = flags.String("data-dir", m.pick("./kapi-data", ""), "directory for storage, credentials and the admin kubeconfig"+m.pick("", " (default: kapi in --cert-dir)"))
	o.pkiDir = flags.String("pki-dir", "", "directory of the CAs, keys and serving certificate (default: pki in --data-dir); servers sharing an etcd cluster share it, so that credentials and service account tokens of one are good on all")
	if m.kube {
		o.securePort = flags.Int("secure-port", 6443, "the port to serve HTTPS on, as kube-apiserver's flag")
		o.bindAddress = flags.String("bind-address", "0.0.0.0", "the address to serve HTTPS on, as kube-apiserver's flag")
		o.certDir = flags.String("cert-dir", "/var/run/kubernetes", "the directory of apiserver.crt and apiserver.key, served when they are there and --tls-cert-file is not given, as kube-apiserver's flag")
		o.minTimeoutSeconds = flags.Int("min-request-timeout", 1800, "watches without timeoutSeconds end at a random time between this many seconds and twice as many, as kube-apiserver's flag")
	} else {
		o.listen = flags.String("listen", "127.0.0.1:6443", "address to serve HTTPS on")
		o.minTimeout = flags.Duration("min-request-timeout", 30*time.Minute, "watches without timeoutSeconds end at a random time between this and twice this")
	}
	o.window = flags.Duration("history-window", 5*time.Minute, "how long past resource versions stay readable and watchable")
	o.eventTTL = flags.Duration("event-ttl", time.Hour, "how long events are kept after their last write, as kube-apiserver's flag")
	o.maxWatches = flags.Int("max-watches", 10000, "how many watches may be open at once; more get 429 Too Many Requests with Retry-After, for clients to retry")
	o.bookmarks = flags.Duration("bookmark-interval", time.Minute, "how long after its start, and after each bookmark, a watch that allows bookmarks gets one (it also gets one 2s before its timeout)")
	o.storageName = flags.String("storage", m.pick("pebble", ""), "storage backend: pebble (on disk in --data-dir), memory (gone when kapi stops) or etcd (in the etcd cluster --etcd-servers names)"+m.pick("", " (default: etcd with --etcd-servers, else memory)"))
	o.etcdServers = flags.String("etcd-servers", "", "with --storage etcd: comma-separated client URLs of etcd members (https://10.0.0.1:2379,...), as kube-apiserver's flag")
	o.etcdCAFile = flags.String("etcd-cafile", "", "with --storage etcd: PEM bundle of the CAs that sign etcd's serving certificates")
	o.etcdCertFile = flags.String("etcd-certfile", "", "with --storage etcd: client certificate that authenticates kapi to etcd")
	o.etcdKeyFile = flags.String("etcd-keyfile", "", "with --storage etcd: key of --etcd-certfile")
	o.etcdPrefix = flags.String("etcd-prefix", m.pick("", "/registry"), m.pick("with --storage etcd: prefix put in front of every key (kapi's keys already start with /registry/)", "with --storage etcd: the prefix of every key, as kube-apiserver's flag (it must end in /registry)"))
	o.controllerList = flags.String("controllers", m.pick("*", "-*"), "controllers to run, as kube-controller-manager's flag: '*' for all, 'name' to enable one, '-name' to disable one; known: "+strings.Join(controllers.All, ", ")+m.pick("", " (default: none, as kube-apiserver runs none)"))
	o.simulatedNodes = flags.Int("simulated-nodes", 0, "how many simulated nodes to register (node-1 to node-N): kapi keeps them Ready and plays their kubelets, so that scheduled pods run without containers; nodes labelled kapi.dev/simulated=true are simulated too")
	o.advertise = flags.String("advertise-address", "", "the address the kubernetes Service's endpoints name (default: the address served on, or the host's default address when that is loopback or unspecified)")
	o.authorizationMode = flags.String("authorization-mode", m.pick("RBAC", "AlwaysAllow"), "authorizers tried in order, as kube-apiserver's flag: a comma-separated list of Node (kubelets read what their node's pods use), RBAC, and AlwaysAllow (every authenticated user may do everything)")
	o.enableAdmission = flags.String("enable-admission-plugins", "", "admission plugins to run besides the default ones, as kube-apiserver's flag: a comma-separated list of "+strings.Join(admission.OptionalPlugins(), ", "))
	o.disableAdmission = flags.String("disable-admission-plugins", "", "default admission plugins not to run, as kube-apiserver's flag (among those kapi runs from kube's admission code, such as ServiceAccount)")
	o.allowPrivileged = flags.Bool("allow-privileged", !m.kube, "allow containers to run privileged, as kube-apiserver's flag"+m.pick(" (kapi's default is true, as kubeadm and kind set it)", ""))
	o.serviceRange = flags.String("service-cluster-ip-range", m.pick(builtin.DefaultServiceCIDR.String(), "10.0.0.0/24"), "the IPv4 range ClusterIPs come from, as kube-apiserver's flag; its first address is the kubernetes Service's")
	o.tlsCertFile = flags.String("tls-cert-file", "", "a PEM file of the certificate to serve HTTPS with, followed by its intermediates, as kube-apiserver's flag (default: one kapi's CA issues); read again when it changes")
	o.tlsKeyFile = flags.String("tls-private-key-file", "", "the PEM private key of --tls-cert-file, as kube-apiserver's flag")
	o.clientCAFile = flags.String("client-ca-file", "", "a PEM bundle of more CAs whose client certificates authenticate (CN user, O groups), besides kapi's own; read again when it changes")
	o.tokenAuthFile = flags.String("token-auth-file", "", "a CSV file of static bearer tokens (token,user,uid,\"group1,group2\"), as kube-apiserver's flag")
	o.anonymousAuth = flags.Bool("anonymous-auth", true, "treat requests without credentials as system:anonymous, for RBAC to decide, as kube-apiserver's flag (false: they get 401, health and version included)")
	flags.Var(&o.issuers, "service-account-issuer", "the issuer of service account tokens, as kube-apiserver's flag: given more than once, the first is the issuer of the tokens made and all are accepted (default "+auth.DefaultIssuer+")")
	o.apiAudiences = flags.String("api-audiences", "", "comma-separated audiences of the API, as kube-apiserver's flag: a service account token for none of them does not authenticate (default: the issuers)")
	o.signingKeyFile = flags.String("service-account-signing-key-file", "", "a PEM private key (RSA or ECDSA) to sign service account tokens with, as kube-apiserver's flag (default: kapi's own, sa.key in the PKI directory)")
	flags.Var(&o.keyFiles, "service-account-key-file", "a PEM file of more keys (public or private keys, certificates) whose service account tokens are accepted and published in /openid/v1/jwks, as kube-apiserver's flag: the keys of an earlier signing key; may be given more than once")
	o.maxTokenExpiration = flags.Duration("service-account-max-token-expiration", 0, "the longest a TokenRequest's token lasts: longer requests are shortened to it, as kube-apiserver's flag (0: no maximum; otherwise 1h to 2^32s)")
	o.extendTokenExpiration = flags.Bool("service-account-extend-token-expiration", true, "pods' projected tokens (asking for kube's default 3607s) last a year but warn after their hour, as kube-apiserver's flag")
	o.jwksURI = flags.String("service-account-jwks-uri", "", "the https URL of the key set that /.well-known/openid-configuration names, as kube-apiserver's flag (default: kapi's own /openid/v1/jwks)")
	o.auditPolicy = flags.String("audit-policy-file", "", "an audit.k8s.io/v1 Policy: which requests are audited, at which level")
	o.auditLog = flags.String("audit-log-path", "", "where audit events go, one JSON line each ('-' for standard output)")
	o.featureGates = flags.String("feature-gates", "", "comma-separated NAME=true|false pairs for Kubernetes feature gates, as kube-apiserver's flag (AllowUnsafeMalformedObjectDeletion=false, ...)")
	o.verbosity = flags.Int("v", 0, "log verbosity, as Kubernetes components' flag: the log (log/slog's text format on standard error) shows V(n) lines (slog level -n) for n up to this")
	o.configFile = flags.String("config", "", "a YAML or JSON file of flag values by flag name (listen: 127.0.0.1:6443); flags on the command line win")
	if m.kube {
		flags.Var(&o.version, "version", "print the version and exit, as kube-apiserver's flag: =raw prints all of it, =v1.X.Y-suffix serves with that version in place of the release's")
		registerIgnoredKubeFlags(flags)
	}
	return o
}

// pick is the serve command's value, or the kube-apiserver command's.
func (m commandMode) pick(serve, kube string) string {
	if m.kube {
		return kube
	}
	return serve
}

// config checks the parsed flags and makes the server's configuration of
// them; the process-wide settings (feature gates, privileged containers)
// it sets at once.
func (o *serveOptions) config(flags *flag.FlagSet) (server.Config, error) {
	if err := utilfeature.DefaultMutableFeatureGate.Set(*o.featureGates); err != nil {
		return server.Config{}, fmt.Errorf("--feature-gates: %w", err)
	}
	capabilities.Initialize(capabilities.Capabilities{AllowPrivileged: *o.allowPrivileged})
	selection, err := controllers.ParseSelection(*o.controllerList)
	if err != nil {
		return server.Config{}, fmt.Errorf("--controllers: %w", err)
	}
	if *o.verbosity < 0 {
		return server.Config{}, fmt.Errorf("--v %d: must not be negative", *o.verbosity)
	}
	tokenOptions := auth.TokenOptions{
		Issuers: o.issuers, APIAudiences: splitList(*o.apiAudiences), SigningKeyFile: *o.signingKeyFile, KeyFiles: o.keyFiles,
		MaxExpiration: *o.maxTokenExpiration, ExtendExpiration: *o.extendTokenExpiration, JWKSURI: *o.jwksURI,
	}
	if err := tokenOptions.Validate(); err != nil {
		return server.Config{}, err
	}
	if (*o.tlsCertFile == "") != (*o.tlsKeyFile == "") {
		return server.Config{}, errors.New("--tls-cert-file and --tls-private-key-file go together")
	}
	if o.mode.kube {
		if err := o.kubeAPIServerFlags(); err != nil {
			return server.Config{}, err
		}
	}
	serviceRange, err := netip.ParsePrefix(*o.serviceRange)
	if err != nil || !serviceRange.Addr().Is4() {
		return server.Config{}, fmt.Errorf("--service-cluster-ip-range %q: kapi takes one IPv4 CIDR", *o.serviceRange)
	}
	etcdOpts, err := o.etcdOptions()
	if err != nil {
		return server.Config{}, err
	}
	openStorage := server.StorageBackend(*o.storageName, *o.dataDir, etcdOpts)
	if openStorage == nil {
		return server.Config{}, fmt.Errorf("unknown --storage %q: pebble, memory or etcd", *o.storageName)
	}
	return server.Config{
		DataDir: *o.dataDir, PKIDir: *o.pkiDir, Listen: *o.listen, SharedStorage: *o.storageName == "etcd",
		HistoryWindow: *o.window, EventTTL: *o.eventTTL, MinRequestTimeout: *o.minTimeout, MaxWatches: *o.maxWatches, BookmarkInterval: *o.bookmarks,
		OpenStorage: openStorage, Controllers: selection, AdvertiseAddress: *o.advertise, SimulatedNodes: *o.simulatedNodes,
		AuthorizationMode: *o.authorizationMode, EnableAdmissionPlugins: splitList(*o.enableAdmission), DisableAdmissionPlugins: splitList(*o.disableAdmission),
		TokenAuthFile: *o.tokenAuthFile, ClientCAFile: *o.clientCAFile, AnonymousAuth: *o.anonymousAuth,
		TLSCertFile: *o.tlsCertFile, TLSKeyFile: *o.tlsKeyFile, ServiceClusterIPRange: serviceRange.Masked(),
		ServiceAccountTokens: tokenOptions, AuditPolicyFile: *o.auditPolicy, AuditLogPath: *o.auditLog,
		GitVersion: o.version.gitVersion(), Flags: flagValues(flags),
	}, nil
}

// kubeAPIServerFlags turns kube-apiserver's flags into kapi's: the address
// from --bind-address and --secure-port, the data in --cert-dir, the
// serving certificate found there, the storage in etcd when --etcd-servers
// names it (in memory otherwise) under kube's --etcd-prefix.
func (o *serveOptions) kubeAPIServerFlags() error {
	o.listen = new(string)
	*o.listen = net.JoinHostPort(*o.bindAddress, strconv.Itoa(*o.securePort))
	o.minTimeout = new(time.Duration)
	*o.minTimeout = time.Duration(*o.minTimeoutSeconds) * time.Second
	if *o.dataDir == "" {
		*o.dataDir = filepath.Join(*o.certDir, "kapi")
	}
	if *o.tlsCertFile == "" {
		crt, key := filepath.Join(*o.certDir, "apiserver.crt"), filepath.Join(*o.certDir, "apiserver.key")
		if !exists(crt) || !exists(key) {
			if err := o.writeSelfSignedCert(crt, key); err != nil {
				return err
			}
		}
		*o.tlsCertFile, *o.tlsKeyFile = crt, key
	}
	if *o.storageName == "" {
		*o.storageName = "memory"
		if *o.etcdServers != "" {
			*o.storageName = "etcd"
		}
	}
	prefix, ok := strings.CutSuffix(strings.TrimSuffix(*o.etcdPrefix, "/"), "/registry")
	if !ok {
		return fmt.Errorf("--etcd-prefix %q: kapi keeps its keys under /registry, so the prefix must end in /registry", *o.etcdPrefix)
	}
	*o.etcdPrefix = prefix
	return nil
}

// writeSelfSignedCert writes the certificate kube-apiserver makes itself
// when --cert-dir holds none: one for the advertised address, the
// kubernetes Service's names and address, and the bound address (localhost
// when it binds every address), followed by the CA of its own that signs
// it. Later starts serve it again, and clients may trust it.
func (o *serveOptions) writeSelfSignedCert(crt, key string) error {
	host := *o.advertise
	if host == "" {
		host = *o.bindAddress
	}
	names := []string{"kubernetes.default.svc", "kubernetes.default", "kubernetes"}
	var ips []net.IP
	if services, err := netip.ParsePrefix(*o.serviceRange); err == nil {
		ips = append(ips, services.Masked().Addr().Next().AsSlice())
	}
	if bind := net.ParseIP(*o.bindAddress); bind == nil || bind.IsUnspecified() {
		names = append(names, "localhost")
	} else {
		ips = append(ips, bind)
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, ips, names)
	if err != nil {
		return fmt.Errorf("--cert-dir: making a self-signed certificate: %w", err)
	}
	if err := certutil.WriteCert(crt, certPEM); err != nil {
		return fmt.Errorf("--cert-dir: %w", err)
	}
	if err := keyutil.WriteKey(key, keyPEM); err != nil {
		return fmt.Errorf("--cert-dir: %w", err)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// etcdOptions are the options of the etcd storage, nil for another.
func (o *serveOptions) etcdOptions() (*etcd.Options, error) {
	if *o.storageName != "etcd" {
		if *o.etcdServers != "" {
			return nil, errors.New("--etcd-servers needs --storage etcd")
		}
		return nil, nil
	}
	opts := &etcd.Options{CAFile: *o.etcdCAFile, CertFile: *o.etcdCertFile, KeyFile: *o.etcdKeyFile, Prefix: *o.etcdPrefix}
	opts.Endpoints = splitList(*o.etcdServers)
	if len(opts.Endpoints) == 0 {
		return nil, errors.New("--storage etcd needs --etcd-servers")
	}
	return opts, nil
}
