package logging

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// record is the start of a line of slog's text format.
var record = regexp.MustCompile(`^time=\S+ level=\S+ msg=`)

// TestVerbosity: logr's V(n) lines are shown up to --v n, as a Kubernetes
// component's, and kapi's own records by their level.
func TestVerbosity(t *testing.T) {
	for _, tc := range []struct {
		verbosity int
		want      []string
		dropped   []string
	}{
		{0, []string{"msg=v0", "msg=info", "msg=warn"}, []string{"msg=v1", "msg=v2", "msg=debug"}},
		{1, []string{"msg=v0", "msg=v1"}, []string{"msg=v2", "msg=debug"}},
		{2, []string{"msg=v0", "msg=v1", "msg=v2"}, []string{"msg=v3", "msg=debug"}},
		{4, []string{"msg=v4", "msg=debug"}, []string{"msg=v5"}},
	} {
		var out strings.Builder
		logger := New(&out, tc.verbosity)
		l := logr.FromSlogHandler(logger.Handler())
		for v := range 6 {
			l.V(v).Info(fmt.Sprintf("v%d", v))
		}
		logger.Info("info")
		logger.Warn("warn")
		logger.Debug("debug")
		for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if !record.MatchString(line) {
				t.Errorf("--v %d: %q is not in slog's text format", tc.verbosity, line)
			}
		}
		for _, w := range tc.want {
			if !hasMsg(out.String(), w) {
				t.Errorf("--v %d: %s is missing:\n%s", tc.verbosity, w, out.String())
			}
		}
		for _, d := range tc.dropped {
			if hasMsg(out.String(), d) {
				t.Errorf("--v %d: %s is shown:\n%s", tc.verbosity, d, out.String())
			}
		}
	}
}

// TestRouteKlog: the lines of klog's global logger come out through the
// slog logger, with klog's own verbosity check set to --v.
func TestRouteKlog(t *testing.T) {
	out := &syncBuilder{}
	// The handler would show V(3); klog's own verbosity, 2, must not.
	if err := RouteKlog(New(out, 3), NewVerbosity(2)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(resetKlog)
	klog.InfoS("structured", "key", "value")
	klog.Infof("formatted %d", 1)
	klog.V(2).InfoS("at two")
	klog.V(3).InfoS("at three")
	klog.ErrorS(errors.New("boom"), "failed", "key", "value")
	klog.Background().V(1).Info("contextual")
	klog.Flush()

	got := out.String()
	for _, want := range []string{
		`level=INFO msg=structured key=value`,
		`level=INFO msg="formatted 1"`,
		`level=DEBUG+2 msg="at two"`,
		`level=ERROR msg=failed err=boom key=value`,
		`level=DEBUG+3 msg=contextual`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("%s is missing:\n%s", want, got)
		}
	}
	if strings.Contains(got, "at three") {
		t.Errorf("klog's V(3) is shown at verbosity 2:\n%s", got)
	}
	for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if !record.MatchString(line) {
			t.Errorf("%q is not in slog's text format", line)
		}
	}
}

func hasMsg(out, msg string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, " "+msg+" ") || strings.HasSuffix(line, " "+msg) {
			return true
		}
	}
	return false
}

type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestVerbosityChangesWhileRunning: setting the verbosity (what PUT
// /debug/flags/v does) changes what both the slog logger and klog show,
// and answers in kube's words; text that is no number changes nothing.
func TestVerbosityChangesWhileRunning(t *testing.T) {
	out := &syncBuilder{}
	verbosity := NewVerbosity(1)
	logger := NewVariable(out, verbosity)
	if err := RouteKlog(logger, verbosity); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(resetKlog)
	klog.V(4).InfoS("klog before")
	logger.Log(context.Background(), Level(4), "slog before")
	said, err := verbosity.Set("4")
	if err != nil || said != "successfully set klog.logging.verbosity to 4" {
		t.Fatalf("Set(4): %q, %v", said, err)
	}
	klog.V(4).InfoS("klog after")
	logger.Log(context.Background(), Level(4), "slog after")
	for _, bad := range []string{"x", "-1", "4\n"} {
		if _, err := verbosity.Set(bad); err == nil {
			t.Errorf("Set(%q) was taken", bad)
		}
	}
	klog.V(4).InfoS("klog still")
	klog.Flush()
	got := out.String()
	for _, line := range []string{`msg="klog before"`, `msg="slog before"`} {
		if hasMsg(got, line) {
			t.Errorf("%q shown at verbosity 1:\n%s", line, got)
		}
	}
	for _, line := range []string{`msg="klog after"`, `msg="slog after"`, `msg="klog still"`} {
		if !hasMsg(got, line) {
			t.Errorf("%q not shown at verbosity 4:\n%s", line, got)
		}
	}
}

// resetKlog undoes RouteKlog: klog logs on its own again, at verbosity 0.
func resetKlog() {
	klog.ClearLogger()
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(flags)
	flags.Set("v", "0")
}
