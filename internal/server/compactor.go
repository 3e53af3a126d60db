package server

import (
	"context"
	"log/slog"
	"time"

	"k8s.io/utils/clock"

	"github.com/kapi-dev/kapi/internal/storage"
)

// compact discards storage history older than window: it notes the current
// revision every window/4 and compacts to the newest revision noted at
// least a window ago. Watches and Exact lists from before then get 410.
func compact(ctx context.Context, store storage.Store, clk clock.WithTicker, window time.Duration, logger *slog.Logger) {
	type mark struct {
		at  time.Time
		rev int64
	}
	var marks []mark
	tick := clk.NewTicker(max(window/4, 100*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C():
			rev, err := store.CurrentRevision(ctx)
			if err != nil {
				continue
			}
			marks = append(marks, mark{now, rev})
			target := int64(0)
			for len(marks) > 0 && now.Sub(marks[0].at) >= window {
				target = marks[0].rev
				marks = marks[1:]
			}
			if target > store.CompactedRevision() {
				if err := store.Compact(ctx, target); err != nil && ctx.Err() == nil {
					logger.Error("compacting storage failed", "revision", target, "err", err)
				}
			}
		}
	}
}
