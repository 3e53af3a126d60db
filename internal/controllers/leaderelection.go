package controllers

import (
	"context"
	"log/slog"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaderElection makes the controllers run on one of several servers
// sharing storage at a time, chosen as kube-controller-manager and
// kube-scheduler choose theirs: by holding a Lease in kube-system
// (kube-controller-manager, kube-scheduler) with client-go's leader
// election.
type LeaderElection struct {
	// Identity tells this server's candidacy apart in the Leases'
	// holderIdentity (kube's form: hostname_uuid).
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's; zero
	// means kube-controller-manager's defaults (15 s, 10 s, 2 s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Lease names, as kube-controller-manager's and kube-scheduler's.
const (
	controllerManagerLease = "kube-controller-manager"
	schedulerLease         = "kube-scheduler"
)

// lead runs fn whenever this server holds the Lease name until ctx ends;
// without leader election it runs fn once and returns its error. Leadership lost ends fn's context and
// waits for fn to return before standing again; fn failing gives the Lease
// up, so that another server may try. A server stopping gives it up too,
// so that another takes over at once rather than when the Lease expires.
func lead(ctx context.Context, election *LeaderElection, config *rest.Config, name string, logger *slog.Logger, fn func(context.Context) error) error {
	if election == nil {
		return fn(ctx)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: election.Identity},
	}
	for ctx.Err() == nil {
		stand(ctx, election, lock, name, logger, fn)
	}
	return nil
}

// stand is one candidacy: it returns when leadership is lost or given up
// (and fn has returned) or ctx ends.
func stand(ctx context.Context, election *LeaderElection, lock resourcelock.Interface, name string, logger *slog.Logger, fn func(context.Context) error) {
	leadCtx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	// The elector starts the callback in a goroutine of its own and does
	// not wait for it: over tells a callback that starts late (after the
	// elector returned) not to run fn, and led whether one ran.
	var mu sync.Mutex
	var led, over bool
	finished := make(chan struct{})
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            name,
		LeaseDuration:   orDefault(election.LeaseDuration, 15*time.Second),
		RenewDeadline:   orDefault(election.RenewDeadline, 10*time.Second),
		RetryPeriod:     orDefault(election.RetryPeriod, 2*time.Second),
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				mu.Lock()
				if over {
					mu.Unlock()
					return
				}
				led = true
				mu.Unlock()
				defer close(finished)
				logger.Info("leading", "lease", name, "identity", election.Identity)
				if err := fn(ctx); err != nil {
					logger.Error("running "+name+" failed", "err", err)
				}
				giveUp()
			},
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		logger.Error("leader election for "+name+" failed", "err", err)
		<-ctx.Done()
		return
	}
	elector.Run(leadCtx) // returns once leadership is lost
	mu.Lock()
	over = true
	ran := led
	mu.Unlock()
	if !ran {
		return
	}
	<-finished
	if ctx.Err() == nil {
		logger.Warn("leadership lost", "lease", name, "identity", election.Identity)
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
