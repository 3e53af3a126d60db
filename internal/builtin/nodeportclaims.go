package builtin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/internal/storage"
)

// nodePortClaimPrefix is where the node ports Service writes have chosen
// but not stored yet are recorded, a key per port: outside every
// resource's keys, and seen by every server sharing the storage.
const nodePortClaimPrefix = "/registry/nodeportclaims/"

// nodePortClaimTTL is how long a claim holds a port: longer than any
// write may last (its deadline is a minute), so that only the claims of a
// server that stopped in a write expire.
const nodePortClaimTTL = 2 * time.Minute

// nodePortClaims record in storage the node ports that writes have chosen
// for a Service and not stored yet, which the stored Services cannot show:
// without them two writes at once, on one server or on two sharing an
// etcd cluster, could take the same port (kube's allocator records each
// port in storage as it takes it). A claim is the owning Service's UID
// and when the claim expires.
type nodePortClaims struct{ store storage.Store }

// claim records port as owner's. It reports false when another owner's
// claim holds it.
func (c nodePortClaims) claim(ctx context.Context, port int32, owner types.UID) (bool, error) {
	key := nodePortClaimKey(port)
	value := []byte(string(owner) + " " + time.Now().Add(nodePortClaimTTL).UTC().Format(time.RFC3339Nano))
	for range 2 {
		_, err := c.store.Create(ctx, key, value)
		if !errors.Is(err, storage.ErrKeyExists) {
			return err == nil, err
		}
		kv, _, err := c.store.Get(ctx, key, 0)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			continue // released meanwhile
		case err != nil:
			return false, err
		}
		holder, expires := parseNodePortClaim(kv.Value)
		if holder == owner {
			return true, nil
		}
		if time.Now().Before(expires) {
			return false, nil
		}
		// The claim of a write that never ended: gone, unless renewed.
		if _, _, err := c.store.Delete(ctx, key, kv.ModRevision); err != nil && !errors.Is(err, storage.ErrConflict) && !errors.Is(err, storage.ErrNotFound) {
			return false, err
		}
	}
	return false, nil
}

// release removes owner's claims on ports (those another owner holds
// stay).
func (c nodePortClaims) release(ctx context.Context, owner types.UID, ports []int32) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for _, port := range ports {
		kv, _, err := c.store.Get(ctx, nodePortClaimKey(port), 0)
		if err != nil {
			continue
		}
		if holder, _ := parseNodePortClaim(kv.Value); holder == owner {
			// A failure leaves the claim to expire.
			_, _, _ = c.store.Delete(ctx, kv.Key, kv.ModRevision)
		}
	}
}

func nodePortClaimKey(port int32) []byte {
	return []byte(fmt.Sprintf("%s%d", nodePortClaimPrefix, port))
}

// parseNodePortClaim reads a claim; one that does not parse has expired.
func parseNodePortClaim(value []byte) (owner types.UID, expires time.Time) {
	uid, at, _ := strings.Cut(string(value), " ")
	expires, _ = time.Parse(time.RFC3339Nano, at)
	return types.UID(uid), expires
}
