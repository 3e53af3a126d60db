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
	"sync"

	"k8s.io/klog/v2"
)

// New returns a logger writing slog's text format to w, showing the
// records of level -verbosity and above: logr's V(n) lines for n up to
// verbosity.
func New(w io.Writer, verbosity int) *slog.Logger {
	return NewVariable(w, NewVerbosity(verbosity))
}

// NewVariable is New with a verbosity that may change while the logger
// is in use.
func NewVariable(w io.Writer, verbosity *Verbosity) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: &verbosity.level}))
}

// Level is the slog level that logr's V(verbosity) lines have.
func Level(verbosity int) slog.Level { return slog.Level(-verbosity) }

// Verbosity is a log's --v, which kube-apiserver lets an administrator
// change while it runs (PUT /debug/flags/v): the loggers made with it
// show V(n) lines up to its current value, and klog, once RouteKlog made
// it follow, checks the same value.
type Verbosity struct {
	level slog.LevelVar

	mu   sync.Mutex
	klog *flag.FlagSet // klog's flags, once it follows
}

func NewVerbosity(verbosity int) *Verbosity {
	v := &Verbosity{}
	v.level.Set(Level(verbosity))
	return v
}

// Set sets the verbosity from text, a number, and says so, in the words
// of kube-apiserver's handler of /debug/flags/v (component-base's
// GlogSetter).
func (v *Verbosity) Set(text string) (string, error) {
	n, err := strconv.ParseUint(text, 10, 32)
	if err != nil {
		return "", err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.klog != nil {
		if err := v.klog.Set("v", text); err != nil {
			return "", fmt.Errorf("failed set klog.logging.verbosity %s: %v", text, err)
		}
	}
	v.level.Set(Level(int(n)))
	return fmt.Sprintf("successfully set klog.logging.verbosity to %s", text), nil
}

// RouteKlog sends the lines of klog's global logger to logger and has
// klog's own verbosity, which klog.V checks before logging, follow
// verbosity. It changes the whole process's klog: call it once, from
// main.
func RouteKlog(logger *slog.Logger, verbosity *Verbosity) error {
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(flags)
	verbosity.mu.Lock()
	defer verbosity.mu.Unlock()
	current := strconv.Itoa(int(-verbosity.level.Level()))
	if err := flags.Set("v", current); err != nil {
		return fmt.Errorf("klog verbosity %s: %w", current, err)
	}
	verbosity.klog = flags
	klog.SetSlogLogger(logger)
	return nil
}
