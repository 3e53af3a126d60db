package server

import (
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/logging"
)

// TestHTTPErrorLog: net/http's error lines are records of the server's
// logger; failed TLS handshakes only from --v 5 on.
func TestHTTPErrorLog(t *testing.T) {
	for _, tc := range []struct {
		verbosity int
		handshake bool
	}{{0, false}, {4, false}, {5, true}} {
		var out strings.Builder
		errorLog := httpErrorLog(logging.New(&out, tc.verbosity))
		errorLog.Printf("http: TLS handshake error from 127.0.0.1:1234: EOF")
		errorLog.Printf("http: Accept error: too many open files")
		got := out.String()
		if !strings.Contains(got, `level=WARN msg="HTTP server error" err="http: Accept error: too many open files"`+"\n") {
			t.Errorf("--v %d: the accept error is missing:\n%s", tc.verbosity, got)
		}
		if strings.Contains(got, "TLS handshake error") != tc.handshake {
			t.Errorf("--v %d: the handshake error shown: %v, want %v:\n%s", tc.verbosity, !tc.handshake, tc.handshake, got)
		}
	}
}
