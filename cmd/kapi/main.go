// Command kapi is a Kubernetes API server in one binary.
//
//	kapi serve [--data-dir DIR] [--listen HOST:PORT] [--storage pebble|memory|etcd [--etcd-servers URLS]] [--controllers LIST] [--simulated-nodes N] [--v N]
//	kapi kube-apiserver [kube-apiserver's flags]
//	kapi version
//
// Installed under the name kube-apiserver, kapi is its kube-apiserver
// command: it takes kube-apiserver's flags and defaults (no controllers,
// AlwaysAllow authorization, storage in the etcd --etcd-servers names), so
// that tools starting the kube-apiserver binary, such as controller-runtime's
// envtest, start kapi instead.
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

	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/internal/logging"
	"github.com/kapi-dev/kapi/internal/memory"
	"github.com/kapi-dev/kapi/internal/memory/startheap"
	"github.com/kapi-dev/kapi/internal/server"
)

func main() {
	switch {
	case filepath.Base(os.Args[0]) == "kube-apiserver":
		// kapi installed as kube-apiserver (envtest's KUBEBUILDER_ASSETS).
		serve("kube-apiserver", os.Args[1:], kubeAPIServerDefaults)
	case len(os.Args) == 2 && os.Args[1] == "version":
		v := server.Version()
		fmt.Printf("kapi, emulating Kubernetes %s (%s, %s)\n", v.GitVersion, v.GoVersion, v.Platform)
	case len(os.Args) >= 2 && os.Args[1] == "serve":
		serve("serve", os.Args[2:], kapiDefaults)
	case len(os.Args) >= 2 && os.Args[1] == "kube-apiserver":
		serve("kube-apiserver", os.Args[2:], kubeAPIServerDefaults)
	default:
		fmt.Fprintln(os.Stderr, "usage: kapi serve [--data-dir DIR] [--listen HOST:PORT] | kapi kube-apiserver [kube-apiserver's flags] | kapi version")
		os.Exit(2)
	}
}

// serve parses a command line of the serve or kube-apiserver command and
// runs the server it describes until a signal stops it.
func serve(command string, args []string, mode commandMode) {
	flags := flag.NewFlagSet(command, flag.ExitOnError)
	opts := mode.register(flags)
	flags.Parse(args)
	opts.version.printAndExitIfAsked()
	if *opts.configFile != "" {
		if err := applyConfigFile(flags, *opts.configFile); err != nil {
			fmt.Fprintf(os.Stderr, "--config: %v\n", err)
			os.Exit(2)
		}
	}
	cfg, err := opts.config(flags)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	run(cfg, *opts.verbosity)
}

// run starts the server cfg describes, logging at verbosity, and serves
// until a signal stops it or serving fails.
func run(cfg server.Config, verbosity int) {
	logVerbosity := logging.NewVerbosity(verbosity)
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

	cfg.Logger, cfg.Verbosity = logger, logVerbosity
	srv, err := server.Start(ctx, cfg)
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
