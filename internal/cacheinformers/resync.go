package cacheinformers

import "time"

// Resyncs follow client-go's shared informer's rules, which decide whether
// a handler's requested period is honoured at all: the informer looks at
// its handlers' resyncs every resyncCheck, its default period at first,
// lowered (before it runs) to the shortest period a handler asks for. With
// a default of 0 (as kube-scheduler's factory has) no handler resyncs,
// whatever it asks. A handler that is due at a check, and every handler
// before the first check, is "resyncing": it gets the updates of objects
// that did not change (a resync's, a relist's).

// minimumResync is the shortest resync period a handler gets, as
// client-go's.
const minimumResync = time.Second

// requestResync is the period a handler asking for requested gets before
// the check period rounds it, lowering the check period to it if the
// informer has not started; inf.mu is held.
func (inf *informer) requestResync(requested time.Duration) time.Duration {
	if requested <= 0 {
		return 0
	}
	requested = max(requested, minimumResync)
	if requested >= inf.resyncCheck {
		return requested
	}
	if inf.started {
		return inf.resyncCheck
	}
	inf.resyncCheck = requested
	for _, h := range inf.handlers {
		h.resync = effectiveResync(h.requested, requested)
	}
	return requested
}

// effectiveResync is the period a handler that asked for requested gets
// with the check period check: none if either is 0, at least check.
func effectiveResync(requested, check time.Duration) time.Duration {
	if requested == 0 || check == 0 {
		return 0
	}
	return max(requested, check)
}

func (inf *informer) resyncCheckPeriod() time.Duration {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return inf.resyncCheck
}

// resyncDue marks the handlers whose resync is due as resyncing and sends
// them every object held, as an update from the object to itself.
func (inf *informer) resyncDue() {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	now := time.Now()
	due := false
	for _, h := range inf.handlers {
		h.syncing = h.resync > 0 && !now.Before(h.nextResync)
		if h.syncing {
			due = true
			h.nextResync = now.Add(h.resync)
		}
	}
	if !due {
		return
	}
	for _, item := range inf.indexer.List() {
		inf.notifySyncing(notification{old: item, new: item, kind: updated})
	}
}

// notifySyncing queues n for the handlers resyncing; inf.mu is held.
func (inf *informer) notifySyncing(n notification) {
	for _, h := range inf.handlers {
		if h.syncing {
			h.notify(n)
		}
	}
}
