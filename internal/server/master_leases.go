package server

import (
	"context"
	"errors"
	"strings"
	"time"

	"k8s.io/utils/clock"

	"github.com/kapi-dev/kapi/internal/storage"
)

// masterLeasePrefix is where servers note their addresses, as
// kube-apiserver's lease endpoint reconciler does (its --endpoint-reconciler-type
// default, "lease").
const masterLeasePrefix = "/registry/masterleases/"

// masterLeaseTTL is how long an address stays in the kubernetes Service's
// endpoints after its server last renewed it (kube-apiserver's 15 s; the
// servers renew every kubernetesServiceInterval).
const masterLeaseTTL = 15 * time.Second

// masterLeases are the reconcilers.Leases of the servers sharing storage:
// a key per server address holding when its lease expires. etcd's leases
// expire kube-apiserver's keys; kapi's storage has none, so expired keys
// are skipped and removed when listed.
type masterLeases struct {
	store storage.Store
	clock clock.Clock
}

func (l *masterLeases) ListLeases() ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := l.store.Range(ctx, storage.RangeOptions{Prefix: []byte(masterLeasePrefix)})
	if err != nil {
		return nil, err
	}
	now := l.clock.Now()
	var ips []string
	for _, kv := range res.KVs {
		expires, err := time.Parse(time.RFC3339Nano, string(kv.Value))
		if err == nil && now.Before(expires) {
			ips = append(ips, strings.TrimPrefix(string(kv.Key), masterLeasePrefix))
			continue
		}
		// Expired (or unreadable): gone unless renewed meanwhile.
		_, _, _ = l.store.Delete(ctx, kv.Key, kv.ModRevision)
	}
	return ips, nil
}

func (l *masterLeases) UpdateLease(ip string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := []byte(masterLeasePrefix + ip)
	value := []byte(l.clock.Now().Add(masterLeaseTTL).UTC().Format(time.RFC3339Nano))
	kv, _, err := l.store.Get(ctx, key, 0)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		_, err = l.store.Create(ctx, key, value)
	case err == nil:
		_, err = l.store.Update(ctx, key, value, kv.ModRevision)
	}
	return err
}

func (l *masterLeases) RemoveLease(ip string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := l.store.Delete(ctx, []byte(masterLeasePrefix+ip), 0)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}

func (l *masterLeases) Destroy() {}
