package server

import (
	"context"
	"log"
	"log/slog"
	"strings"
)

// httpErrorLog is the net/http server's ErrorLog: its lines (failed
// handshakes, accept errors) as records of logger. Failed TLS handshakes,
// which any client that gives up or probes the port causes, are a chatty
// detail (level -5, --v 5, as kube-apiserver logs them at V(5)); the rest
// are warnings.
func httpErrorLog(logger *slog.Logger) *log.Logger {
	return log.New(httpErrorWriter{logger}, "", 0)
}

type httpErrorWriter struct{ logger *slog.Logger }

func (w httpErrorWriter) Write(p []byte) (int, error) {
	line := strings.TrimSuffix(string(p), "\n")
	level := slog.LevelWarn
	if strings.HasPrefix(line, "http: TLS handshake error") {
		level = slog.Level(-5)
	}
	w.logger.Log(context.Background(), level, "HTTP server error", "err", line)
	return len(p), nil
}
