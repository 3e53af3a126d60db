package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/storage"
	"github.com/kapi-dev/kapi/internal/storage/etcd"
	"github.com/kapi-dev/kapi/internal/storage/etcd/etcdtest"
	"github.com/kapi-dev/kapi/internal/storage/storagetest"
)

var prefixes atomic.Int64

// open opens a store over endpoint under a prefix no other test uses, so
// that each sees an empty store (the revision counter is etcd's, shared).
func open(t *testing.T, endpoint string) storage.Store {
	t.Helper()
	s, err := etcd.New(etcd.Options{
		Endpoints: []string{endpoint},
		Prefix:    fmt.Sprintf("/test-%d", prefixes.Add(1)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	endpoint := etcdtest.Start(t)
	storagetest.Run(t, func(t *testing.T) storage.Store { return open(t, endpoint) })
}

// TestPrefix checks that keys are kept under the prefix in etcd and that
// stores with other prefixes do not see them.
func TestPrefix(t *testing.T) {
	ctx := context.Background()
	endpoint := etcdtest.Start(t)
	a, err := etcd.New(etcd.Options{Endpoints: []string{endpoint}, Prefix: "/a"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	plain, err := etcd.New(etcd.Options{Endpoints: []string{endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := a.Create(ctx, []byte("/registry/core/configmaps/ns/x"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	kv, _, err := plain.Get(ctx, []byte("/a/registry/core/configmaps/ns/x"), 0)
	if err != nil || string(kv.Value) != "v" {
		t.Fatalf("unprefixed read: %+v %v", kv, err)
	}
	res, err := plain.Range(ctx, storage.RangeOptions{})
	if err != nil || len(res.KVs) != 1 {
		t.Fatalf("range of everything: %+v %v", res, err)
	}
	if _, _, err := plain.Get(ctx, []byte("/registry/core/configmaps/ns/x"), 0); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("other prefix sees the key: %v", err)
	}
	res, err = a.Range(ctx, storage.RangeOptions{Prefix: []byte("/registry/")})
	if err != nil || len(res.KVs) != 1 || string(res.KVs[0].Key) != "/registry/core/configmaps/ns/x" {
		t.Fatalf("range under prefix: %+v %v", res, err)
	}
}

// TestUnreachable checks that an etcd that does not answer is an error
// from Open, within the dial timeout.
func TestUnreachable(t *testing.T) {
	start := time.Now()
	_, err := etcd.Open(etcd.Options{Endpoints: []string{"http://127.0.0.1:1"}, DialTimeout: time.Second})()
	if err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("open of an unreachable etcd: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("open took %v", d)
	}
	if _, err := etcd.Open(etcd.Options{})(); err == nil {
		t.Fatal("open without endpoints succeeded")
	}
}

// TestClosed checks that a closed store answers ErrClosed and ends its
// watches with a nil Err.
func TestClosed(t *testing.T) {
	ctx := context.Background()
	s := open(t, etcdtest.Start(t))
	w, err := s.Watch(ctx, []byte("/w/"), 0)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	select {
	case _, ok := <-w.Events():
		if ok {
			t.Fatal("event after close")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch still open after close")
	}
	if w.Err() != nil {
		t.Fatalf("watch Err after close: %v", w.Err())
	}
	if _, err := s.Create(ctx, []byte("/k"), nil); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("create after close: %v", err)
	}
}

// TestCompactOnce checks that servers sharing etcd compact each revision
// once: the one that compacts first wins, the other learns its revision
// from the compact key and refuses reads below it.
func TestCompactOnce(t *testing.T) {
	ctx := context.Background()
	endpoint := etcdtest.Start(t)
	a, b := open(t, endpoint), open(t, endpoint)
	defer a.Close()
	defer b.Close()
	var revs []int64
	for i := range 4 {
		kv, err := a.Create(ctx, []byte(fmt.Sprintf("/registry/k%d", i)), []byte("v"))
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, kv)
	}
	if err := a.Compact(ctx, revs[2]); err != nil {
		t.Fatal(err)
	}
	// b asks for an older compaction: nothing to do, but it learns how far
	// the cluster is compacted.
	if err := b.Compact(ctx, revs[1]); err != nil {
		t.Fatal(err)
	}
	if got := b.CompactedRevision(); got != revs[2] {
		t.Fatalf("b learned compaction to %d, want %d", got, revs[2])
	}
	if _, err := b.Range(ctx, storage.RangeOptions{Prefix: []byte("/registry/"), Revision: revs[1]}); !errors.Is(err, storage.ErrCompacted) {
		t.Fatalf("read below the compaction through b: %v", err)
	}
	if err := b.Compact(ctx, revs[3]); err != nil {
		t.Fatal(err)
	}
	if err := a.Compact(ctx, revs[3]); err != nil {
		t.Fatal(err)
	}
	if got := a.CompactedRevision(); got != revs[3] {
		t.Fatalf("a learned compaction to %d, want %d", got, revs[3])
	}
}

// TestTLS checks that the store reaches an etcd that serves TLS and asks
// for client certificates with --etcd-cafile, --etcd-certfile and
// --etcd-keyfile, and that it fails without the certificate or with
// another CA.
func TestTLS(t *testing.T) {
	ctx := context.Background()
	files := etcdtest.NewTLSFiles(t)
	endpoint := etcdtest.StartTLS(t, files)
	if !strings.HasPrefix(endpoint, "https://") {
		t.Fatalf("endpoint %s", endpoint)
	}
	s, err := etcd.New(etcd.Options{Endpoints: []string{endpoint}, CAFile: files.CA, CertFile: files.ClientCert, KeyFile: files.ClientKey})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Create(ctx, []byte("/registry/core/configmaps/ns/tls"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if kv, _, err := s.Get(ctx, []byte("/registry/core/configmaps/ns/tls"), 0); err != nil || string(kv.Value) != "v" {
		t.Fatalf("read over TLS: %v %v", kv, err)
	}

	other := etcdtest.NewTLSFiles(t)
	for name, opts := range map[string]etcd.Options{
		"no client certificate":         {CAFile: files.CA},
		"another CA":                    {CAFile: other.CA, CertFile: files.ClientCert, KeyFile: files.ClientKey},
		"a certificate of another CA":   {CAFile: files.CA, CertFile: other.ClientCert, KeyFile: other.ClientKey},
		"a certificate without its key": {CAFile: files.CA, CertFile: files.ClientCert},
	} {
		opts.Endpoints, opts.DialTimeout = []string{endpoint}, 2*time.Second
		if s, err := etcd.New(opts); err == nil {
			s.Close()
			t.Errorf("%s: connected", name)
		}
	}
}
