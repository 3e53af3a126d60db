// Package etcd is the storage.Store of an existing etcd cluster (etcd 3.5.13
// and later): every key, revision and watch is etcd's own, so that several
// kapi servers can share one cluster. It speaks etcd's v3 gRPC API through
// go.etcd.io/etcd/client/v3.
//
// kapi's keys already start with "/registry/"; Options.Prefix, empty by
// default, is put in front of each of them, to keep several kapi clusters
// (or tests) apart in one etcd.
package etcd

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kapi-dev/kapi/internal/storage"
)

// Options says which etcd cluster to use and how.
type Options struct {
	// Endpoints are the client URLs of etcd members, as
	// "https://10.0.0.1:2379".
	Endpoints []string
	// CAFile is a PEM bundle of the CAs that sign etcd's serving
	// certificates; empty for the system roots.
	CAFile string
	// CertFile and KeyFile are the client certificate and its key that
	// authenticate kapi to etcd, if etcd asks for one.
	CertFile, KeyFile string
	// Prefix is put in front of every key. Empty by default: kapi's keys
	// already start with "/registry/".
	Prefix string
	// DialTimeout bounds how long Open waits for etcd to answer
	// (10 seconds if zero).
	DialTimeout time.Duration
}

// Open is the storage.Opener of the store in the etcd cluster opts names.
func Open(opts Options) storage.Opener {
	return func() (storage.Store, error) { return New(opts) }
}

// Store is a storage.Store kept in etcd.
type Store struct {
	client *clientv3.Client
	prefix []byte
	// compacted is the highest revision this store compacted to or learned
	// was compacted.
	compacted atomic.Int64
	closed    atomic.Bool
	// watchID tells watches apart: each gets its own gRPC stream (see
	// Watch).
	watchID atomic.Uint64
	closeMu sync.Mutex
}

// New connects to etcd and checks that it answers.
func New(opts Options) (*Store, error) {
	if len(opts.Endpoints) == 0 {
		return nil, errors.New("etcd: no endpoints")
	}
	timeout := opts.DialTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	var tlsConfig *tls.Config
	if opts.CAFile != "" || opts.CertFile != "" || opts.KeyFile != "" {
		if (opts.CertFile == "") != (opts.KeyFile == "") {
			return nil, errors.New("etcd: a client certificate needs both a certificate file and a key file")
		}
		info := transport.TLSInfo{CertFile: opts.CertFile, KeyFile: opts.KeyFile, TrustedCAFile: opts.CAFile}
		var err error
		if tlsConfig, err = info.ClientConfig(); err != nil {
			return nil, fmt.Errorf("etcd: TLS configuration: %w", err)
		}
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   opts.Endpoints,
		TLS:         tlsConfig,
		DialTimeout: timeout,
		// etcd's client logs reconnections at warning level as JSON; kapi
		// reports failures through the errors it returns instead.
		Logger: zap.NewNop(),
		// Keep the connection checked while idle, so that a dead member
		// is noticed and another endpoint used.
		DialKeepAliveTime:    30 * time.Second,
		DialKeepAliveTimeout: 10 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	s := &Store{client: client, prefix: []byte(opts.Prefix)}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := s.CurrentRevision(ctx); err != nil {
		client.Close()
		return nil, fmt.Errorf("etcd %v does not answer: %w", opts.Endpoints, err)
	}
	compacted, _, err := s.clusterCompacted(ctx)
	if err != nil {
		client.Close()
		return nil, err
	}
	s.learnCompacted(compacted)
	return s, nil
}

// Close implements storage.Store: it closes the connection, which ends
// every watch.
func (s *Store) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	err := s.client.Close()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// CompactedRevision implements storage.Store. It is the last compaction
// this store made or learned of (from a watch); a compaction made by
// another client of the same etcd is learned only when met.
func (s *Store) CompactedRevision() int64 { return s.compacted.Load() }

func (s *Store) learnCompacted(rev int64) {
	for {
		cur := s.compacted.Load()
		if rev <= cur || s.compacted.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// CurrentRevision implements storage.Store with a linearizable read, whose
// header carries the cluster's revision.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	if s.closed.Load() {
		return 0, storage.ErrClosed
	}
	// A key no kapi key can be (it holds NUL), read for its header only.
	resp, err := s.client.Get(ctx, string(s.prefix)+"\x00", clientv3.WithCountOnly())
	if err != nil {
		return 0, s.mapErr(err)
	}
	return resp.Header.Revision, nil
}

// compactKey holds the revision the cluster was last compacted to, as
// kube-apiserver's compact_rev_key does: the kapi servers sharing an etcd
// cluster agree through it on who compacts, so that each revision is
// compacted once, and learn of one another's compactions. Like
// compaction itself, which spans every key of etcd, it is outside any
// prefix.
const compactKey = "compact_rev_key"

// Compact implements storage.Store. It compacts etcd to rev-1, one
// revision short of rev: a watch from rev-1 sends the deletes made at rev,
// each with the version it deleted, which etcd reads at the revision
// before (a compaction to rev would have removed it). Reads below rev are
// refused here instead (see checkRevision).
//
// Only the server that moves the compact key from the version it read to
// rev compacts; one that finds the key at rev or beyond (another kapi
// server compacted) learns the revision and is done.
func (s *Store) Compact(ctx context.Context, rev int64) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	if rev <= s.compacted.Load() {
		return nil
	}
	cur, version, err := s.clusterCompacted(ctx)
	if err != nil {
		return err
	}
	s.learnCompacted(cur)
	if rev <= cur {
		return nil
	}
	head, err := s.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	if rev > head {
		return storage.ErrFutureRevision
	}
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.Version(compactKey), "=", version)).
		Then(clientv3.OpPut(compactKey, strconv.FormatInt(rev, 10))).
		Commit()
	if err != nil {
		return s.mapErr(err)
	}
	if !resp.Succeeded {
		// Another server compacted meanwhile: learn how far.
		cur, _, err := s.clusterCompacted(ctx)
		if err == nil {
			s.learnCompacted(cur)
		}
		return err
	}
	if rev > 1 {
		_, err := s.client.Compact(ctx, rev-1)
		if err = s.mapErr(err); err != nil && !errors.Is(err, storage.ErrCompacted) {
			return err
		}
	}
	s.learnCompacted(rev)
	return nil
}

// clusterCompacted reads the compact key: the revision the cluster was
// compacted to, and the key's version (0 when no server compacted yet).
func (s *Store) clusterCompacted(ctx context.Context) (rev, version int64, err error) {
	resp, err := s.client.Get(ctx, compactKey)
	if err != nil {
		return 0, 0, s.mapErr(err)
	}
	if len(resp.Kvs) == 0 {
		return 0, 0, nil
	}
	kv := resp.Kvs[0]
	rev, err = strconv.ParseInt(string(kv.Value), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("etcd: compact key holds %q, not a revision", kv.Value)
	}
	return rev, kv.Version, nil
}

// checkRevision refuses a read below the compacted revision, which etcd,
// compacted one revision short of it, would still answer.
func (s *Store) checkRevision(rev int64) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	if rev != 0 && rev < s.compacted.Load() {
		return storage.ErrCompacted
	}
	return nil
}

func (s *Store) key(k []byte) string {
	return string(s.prefix) + string(k)
}

func (s *Store) unprefix(k []byte) []byte {
	return bytes.Clone(k[len(s.prefix):])
}

// mapErr turns etcd's errors into storage's.
func (s *Store) mapErr(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return storage.ErrCompacted
	case errors.Is(err, rpctypes.ErrFutureRev):
		return storage.ErrFutureRevision
	case errors.Is(err, rpctypes.ErrRequestTooLarge), clientRefusedToSend(err):
		return storage.ErrRequestTooLarge
	}
	if s.closed.Load() {
		return storage.ErrClosed
	}
	return fmt.Errorf("etcd: %w", err)
}

// clientRefusedToSend tells the etcd client's own limit on what it sends
// (larger than etcd's), as kube-apiserver tells it.
func clientRefusedToSend(err error) bool {
	s, ok := status.FromError(err)
	return ok && s.Code() == codes.ResourceExhausted && strings.Contains(s.Message(), "trying to send message larger than max")
}

func checkKey(key []byte) error {
	if len(key) == 0 || bytes.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("storage: invalid key %q", key)
	}
	return nil
}
