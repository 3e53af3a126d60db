package builtin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kapi-dev/kapi/internal/storage"
)

// nodePortClaimPrefix is where the node ports Service writes have chosen
// but not stored yet are recorded, a key per port: outside every
// resource's keys, and seen by every server sharing the storage.
const nodePortClaimPrefix = "/registry/nodeportclaims/"

// nodePortClaimTTL is how long a claim holds a port: longer than any
// request's write may last (the deadline filter gives it a minute at
// most), so that only the claims of a server that stopped in a write
// expire. Expiry is judged by the reading server's clock against the
// claiming one's: servers sharing storage are assumed to keep time within
// a minute of each other.
const nodePortClaimTTL = 2 * time.Minute

// nodePortClaims record in storage the node ports that writes have chosen
// for a Service and not stored yet, which the stored Services cannot show:
// without them two writes at once, on one server or on two sharing an
// etcd cluster, could take the same port (kube's allocator records each
// port in storage as it takes it). A claim belongs to one write (its
// token) and says when it expires. The claims of this server's writes in
// flight are also kept in memory, by Service, so that they go once the
// Service holding their ports is stored.
type nodePortClaims struct {
	store storage.Store

	mu      sync.Mutex
	pending map[types.UID]map[string][]int32 // by Service: each write's claimed ports, by token
}

func newNodePortClaims(store storage.Store) *nodePortClaims {
	return &nodePortClaims{store: store, pending: map[types.UID]map[string][]int32{}}
}

// newClaimToken names one write's claims.
func newClaimToken() string { return string(uuid.NewUUID()) }

// claimed lists the ports that claims not expired hold.
func (c *nodePortClaims) claimed(ctx context.Context) (map[int32]bool, error) {
	res, err := c.store.Range(ctx, storage.RangeOptions{Prefix: []byte(nodePortClaimPrefix)})
	if err != nil {
		return nil, err
	}
	ports := map[int32]bool{}
	now := time.Now()
	for _, kv := range res.KVs {
		port, err := strconv.ParseInt(strings.TrimPrefix(string(kv.Key), nodePortClaimPrefix), 10, 32)
		if _, expires := parseNodePortClaim(kv.Value); err == nil && now.Before(expires) {
			ports[int32(port)] = true
		}
	}
	return ports, nil
}

// claim records port as the write token's. It reports false when another
// write's claim holds it.
func (c *nodePortClaims) claim(ctx context.Context, port int32, token string) (bool, error) {
	key := nodePortClaimKey(port)
	value := []byte(token + " " + time.Now().Add(nodePortClaimTTL).UTC().Format(time.RFC3339Nano))
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
		if holder == token {
			return true, nil
		}
		if time.Now().Before(expires) {
			return false, nil
		}
		// The claim of a write that never ended: gone, unless it was
		// released and made again meanwhile.
		if _, _, err := c.store.Delete(ctx, key, kv.ModRevision); err != nil && !errors.Is(err, storage.ErrConflict) && !errors.Is(err, storage.ErrNotFound) {
			return false, err
		}
	}
	return false, nil
}

// hold notes the ports a write of the Service uid claimed, until release.
func (c *nodePortClaims) hold(uid types.UID, token string, ports []int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending[uid] == nil {
		c.pending[uid] = map[string][]int32{}
	}
	c.pending[uid][token] = ports
}

// release removes the write token's claims on ports (a claim another
// write made stays) and forgets them.
func (c *nodePortClaims) release(ctx context.Context, uid types.UID, token string, ports []int32) {
	c.mu.Lock()
	if writes := c.pending[uid]; writes != nil {
		if left := slices.DeleteFunc(slices.Clone(writes[token]), func(p int32) bool { return slices.Contains(ports, p) }); len(left) > 0 {
			writes[token] = left
		} else {
			delete(writes, token)
		}
		if len(writes) == 0 {
			delete(c.pending, uid)
		}
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for _, port := range ports {
		kv, _, err := c.store.Get(ctx, nodePortClaimKey(port), 0)
		if err != nil {
			continue
		}
		if holder, _ := parseNodePortClaim(kv.Value); holder == token {
			// A failure leaves the claim to expire.
			_, _, _ = c.store.Delete(ctx, kv.Key, kv.ModRevision)
		}
	}
}

// stored releases the claims this server's writes of the Service uid hold
// on the ports it is now stored with: the Services' list shows them.
func (c *nodePortClaims) stored(ctx context.Context, uid types.UID, holds []int32) {
	c.mu.Lock()
	shown := map[string][]int32{}
	for token, ports := range c.pending[uid] {
		for _, port := range ports {
			if slices.Contains(holds, port) {
				shown[token] = append(shown[token], port)
			}
		}
	}
	c.mu.Unlock()
	for token, ports := range shown {
		c.release(ctx, uid, token, ports)
	}
}

func nodePortClaimKey(port int32) []byte {
	return []byte(fmt.Sprintf("%s%d", nodePortClaimPrefix, port))
}

// parseNodePortClaim reads a claim; one that does not parse has expired.
func parseNodePortClaim(value []byte) (token string, expires time.Time) {
	token, at, _ := strings.Cut(string(value), " ")
	expires, _ = time.Parse(time.RFC3339Nano, at)
	return token, expires
}
