package kapitest

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// stoppingHandler writes the server's log, but once the Env stops it
// demotes errors to Debug (which WithLogs does not show): the controllers
// of a server stopped a moment after it started log each of their
// informers that had not synced yet, and each event recorder not started
// yet, as an error, dozens of lines that say nothing about the test.
type stoppingHandler struct {
	slog.Handler
	stopping *atomic.Bool
}

func newStoppingHandler(h slog.Handler) *stoppingHandler {
	return &stoppingHandler{Handler: h, stopping: &atomic.Bool{}}
}

func (h *stoppingHandler) Handle(ctx context.Context, record slog.Record) error {
	if h.stopping.Load() && record.Level >= slog.LevelError {
		if !h.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		record.Level = slog.LevelDebug
	}
	return h.Handler.Handle(ctx, record)
}

func (h *stoppingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &stoppingHandler{Handler: h.Handler.WithAttrs(attrs), stopping: h.stopping}
}

func (h *stoppingHandler) WithGroup(name string) slog.Handler {
	return &stoppingHandler{Handler: h.Handler.WithGroup(name), stopping: h.stopping}
}
