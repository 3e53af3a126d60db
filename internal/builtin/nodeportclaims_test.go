package builtin

import (
	"context"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/storage/pebble"
)

// TestNodePortClaims: a port is one write's until it releases it or its
// claim expires; another write of the same Service does not share it; a
// Service stored with a port releases its writes' claims on it only.
func TestNodePortClaims(t *testing.T) {
	ctx := context.Background()
	store, err := pebble.OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c := newNodePortClaims(store)
	first, second := newClaimToken(), newClaimToken()
	mustClaim := func(port int32, token string, want bool) {
		t.Helper()
		if ok, err := c.claim(ctx, port, token); err != nil || ok != want {
			t.Fatalf("claim %d: %v %v, want %v", port, ok, err, want)
		}
	}
	mustClaim(30001, first, true)
	mustClaim(30002, first, true)
	c.hold("svc", first, []int32{30001, 30002})
	mustClaim(30001, second, false) // the same Service's other write
	if claimed, err := c.claimed(ctx); err != nil || !claimed[30001] || !claimed[30002] || len(claimed) != 2 {
		t.Fatalf("claimed %v %v", claimed, err)
	}

	// Stored with 30001 only: that claim goes, 30002 stays the write's.
	c.stored(ctx, "svc", []int32{30001, 30100})
	mustClaim(30001, second, true)
	mustClaim(30002, second, false)
	c.release(ctx, "svc", second, []int32{30002}) // not second's: stays
	mustClaim(30002, second, false)
	c.release(ctx, "svc", first, []int32{30002})
	mustClaim(30002, second, true)
	if len(c.pending) != 0 {
		t.Errorf("pending after every write ended: %v", c.pending)
	}

	// An expired claim (a server that stopped mid-write) is taken over.
	if _, err := store.Create(ctx, nodePortClaimKey(30003), []byte("gone "+time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano))); err != nil {
		t.Fatal(err)
	}
	if claimed, _ := c.claimed(ctx); claimed[30003] {
		t.Error("an expired claim counts as claimed")
	}
	mustClaim(30003, first, true)
}
