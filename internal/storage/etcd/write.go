package etcd

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/internal/storage"
)

// Each write is one etcd transaction guarded on the key's revisions; when
// the guard fails, the transaction's else branch reads the key to tell a
// missing key from a changed one in the same round trip.

// Create implements storage.Store.
func (s *Store) Create(ctx context.Context, key, value []byte) (int64, error) {
	if err := s.checkWrite(key); err != nil {
		return 0, err
	}
	k := s.key(key)
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
		Then(clientv3.OpPut(k, string(value))).
		Commit()
	if err != nil {
		return 0, s.mapErr(err)
	}
	if !resp.Succeeded {
		return 0, storage.ErrKeyExists
	}
	return resp.Header.Revision, nil
}

// Update implements storage.Store.
func (s *Store) Update(ctx context.Context, key, value []byte, expectedRev int64) (int64, error) {
	if err := s.checkWrite(key); err != nil {
		return 0, err
	}
	k := s.key(key)
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(k), "=", expectedRev)).
		Then(clientv3.OpPut(k, string(value))).
		Else(clientv3.OpGet(k, clientv3.WithKeysOnly())).
		Commit()
	if err != nil {
		return 0, s.mapErr(err)
	}
	if !resp.Succeeded {
		return 0, guardFailed(resp)
	}
	return resp.Header.Revision, nil
}

// Delete implements storage.Store.
func (s *Store) Delete(ctx context.Context, key []byte, expectedRev int64) (int64, *storage.KeyValue, error) {
	if err := s.checkWrite(key); err != nil {
		return 0, nil, err
	}
	k := s.key(key)
	guard := clientv3.Compare(clientv3.ModRevision(k), "=", expectedRev)
	if expectedRev == 0 {
		guard = clientv3.Compare(clientv3.CreateRevision(k), ">", 0)
	}
	resp, err := s.client.Txn(ctx).
		If(guard).
		Then(clientv3.OpDelete(k, clientv3.WithPrevKV())).
		Else(clientv3.OpGet(k, clientv3.WithKeysOnly())).
		Commit()
	if err != nil {
		return 0, nil, s.mapErr(err)
	}
	if !resp.Succeeded {
		return 0, nil, guardFailed(resp)
	}
	del := resp.Responses[0].GetResponseDeleteRange()
	if del == nil || len(del.PrevKvs) == 0 {
		// The guard saw the key, so the delete removed it.
		return resp.Header.Revision, nil, nil
	}
	kv := s.fromEtcd(del.PrevKvs[0])
	return resp.Header.Revision, &kv, nil
}

// guardFailed reads a failed transaction's else branch: ErrNotFound when
// the key is missing, ErrConflict when it has another revision.
func guardFailed(resp *clientv3.TxnResponse) error {
	if len(resp.Responses) > 0 {
		if get := resp.Responses[0].GetResponseRange(); get != nil && len(get.Kvs) > 0 {
			return storage.ErrConflict
		}
	}
	return storage.ErrNotFound
}

func (s *Store) checkWrite(key []byte) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	return checkKey(key)
}
