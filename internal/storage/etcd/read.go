package etcd

import (
	"context"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/internal/storage"
)

// Get implements storage.Store.
func (s *Store) Get(ctx context.Context, key []byte, rev int64) (*storage.KeyValue, int64, error) {
	if err := s.checkRevision(rev); err != nil {
		return nil, 0, err
	}
	if err := checkKey(key); err != nil {
		return nil, 0, err
	}
	resp, err := s.client.Get(ctx, s.key(key), clientv3.WithRev(rev))
	if err != nil {
		return nil, 0, s.mapErr(err)
	}
	at := rev
	if at == 0 {
		at = resp.Header.Revision
	}
	if len(resp.Kvs) == 0 {
		return nil, at, storage.ErrNotFound
	}
	kv := s.fromEtcd(resp.Kvs[0])
	return &kv, at, nil
}

// Range implements storage.Store. etcd counts the whole range even when a
// limit cuts it, so Count costs nothing more.
func (s *Store) Range(ctx context.Context, opts storage.RangeOptions) (*storage.RangeResult, error) {
	if err := s.checkRevision(opts.Revision); err != nil {
		return nil, err
	}
	prefix := s.key(opts.Prefix)
	start := prefix
	if opts.Start != nil {
		start = s.key(opts.Start)
	}
	end := clientv3.GetPrefixRangeEnd(prefix)
	if prefix == "" {
		// Every key: etcd's range from "\x00" to "\x00".
		start, end = "\x00", "\x00"
	}
	ops := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithRev(opts.Revision)}
	if opts.Limit > 0 {
		ops = append(ops, clientv3.WithLimit(int64(opts.Limit)))
	}
	resp, err := s.client.Get(ctx, start, ops...)
	if err != nil {
		return nil, s.mapErr(err)
	}
	res := &storage.RangeResult{More: resp.More, Revision: opts.Revision}
	if res.Revision == 0 {
		res.Revision = resp.Header.Revision
	}
	if opts.Count {
		res.Count = resp.Count
	}
	res.KVs = make([]storage.KeyValue, len(resp.Kvs))
	for i, kv := range resp.Kvs {
		res.KVs[i] = s.fromEtcd(kv)
	}
	return res, nil
}

func (s *Store) fromEtcd(kv *mvccpb.KeyValue) storage.KeyValue {
	return storage.KeyValue{
		Key:            s.unprefix(kv.Key),
		Value:          kv.Value,
		CreateRevision: kv.CreateRevision,
		ModRevision:    kv.ModRevision,
	}
}
