package controllers

import (
	"testing"
	"time"
)

// TestResyncPeriodIsKubeControllerManagers: the factories' default resync
// is drawn as kube-controller-manager draws it, between its minimum of 12
// hours and twice that: not 0, which would turn off the shorter periods
// handlers ask for.
func TestResyncPeriodIsKubeControllerManagers(t *testing.T) {
	for range 100 {
		if got := resyncPeriod(); got < 12*time.Hour || got >= 24*time.Hour {
			t.Fatalf("resyncPeriod() = %v, want within [12h, 24h)", got)
		}
	}
}
