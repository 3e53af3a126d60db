// Package logging makes kapi's log: one log/slog logger that kapi's own
// code, the in-process Kubernetes controllers (through logr) and the
// Kubernetes code that logs through klog's global logger all write to, in
// one format and filtered by one verbosity, as a Kubernetes component's
// --v flag filters its klog output.
//
// Kubernetes code logs through logr (contextual logging) or klog, with
// verbosities V(0), V(1), ... that a component's --v shows up to. logr's
// slog bridge (logr.FromSlogHandler) writes V(n) as slog level -n, so a
// handler whose minimum level is -v shows exactly the lines --v would:
// kapi's own Info, Warn and Error records at any verbosity, its Debug
// records (level -4) from --v 4 on. slog names the levels between Debug
// and Info from Debug: V(1) is DEBUG+3, V(2) DEBUG+2, V(4) DEBUG, V(5)
// DEBUG-1.
//
// klog is process-global: only the kapi binary routes it (RouteKlog);
// servers started in a test process (package kapitest) each log to their
// own logger and leave klog alone.
package logging

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"k8s.io/klog/v2"
)

// New returns a logger writing slog's text format to w, showing the
// records of level -verbosity and above: logr's V(n) lines for n up to
// verbosity.
func New(w io.Writer, verbosity int) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: Level(verbosity)}))
}

// Level is the slog level that logr's V(verbosity) lines have.
func Level(verbosity int) slog.Level { return slog.Level(-verbosity) }

// RouteKlog sends the lines of klog's global logger to logger and sets
// klog's own verbosity, which klog.V checks before logging, to verbosity.
// It changes the whole process's klog: call it once, from main.
func RouteKlog(logger *slog.Logger, verbosity int) error {
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(flags)
	if err := flags.Set("v", strconv.Itoa(verbosity)); err != nil {
		return fmt.Errorf("klog verbosity %d: %w", verbosity, err)
	}
	klog.SetSlogLogger(logger)
	return nil
}
