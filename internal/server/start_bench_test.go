package server

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/controllers"
)

// BenchmarkRestartEmpty measures Start on a data directory whose store
// holds only what a first start writes: the part of "start to ready" that
// is kapi's own (the process's exec and package initialisation come
// before it). The controllers, which start after ready, are left out.
func BenchmarkRestartEmpty(b *testing.B) {
	cfg := Config{
		DataDir: b.TempDir(), Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler),
		Controllers: controllers.Selection{"-*"},
	}
	stop := func(s *Server) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			b.Fatal(err)
		}
	}
	first, err := Start(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	stop(first)
	for b.Loop() {
		s, err := Start(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		stop(s)
		b.StartTimer()
	}
}
