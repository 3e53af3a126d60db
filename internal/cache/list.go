package cache

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/btree"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	kstorage "k8s.io/apiserver/pkg/storage"

	"github.com/kapi-dev/kapi/internal/storage"
)

// maxSnapshots bounds the index snapshots kept for paged lists.
const maxSnapshots = 64

// Consistency says which state a list reads.
type Consistency int

const (
	// Consistent reads the newest state (resourceVersion unset).
	Consistent Consistency = iota
	// Any reads whatever the index holds (resourceVersion "0").
	Any
	// NotOlderThan reads a state at least as new as Revision.
	NotOlderThan
	// Exact reads the state at Revision.
	Exact
)

// ListRequest describes one page of a list.
type ListRequest struct {
	Filter      Filter
	Consistency Consistency
	Revision    int64
	Limit       int
	// AskedLimit is the limit the client asked for, where Limit may be 0
	// (the cache serves a list at "0" whole): a list read from storage
	// while the cache is not built is a page of it.
	AskedLimit int
	// Continue, when set, carries on a paged list; it implies Exact at
	// the token's revision.
	Continue *Token
}

// ListResult is one page.
type ListResult struct {
	Items []runtime.Object
	// Encodings cache the items' encoded bytes (parallel to Items; an
	// entry may be nil).
	Encodings []*Encodings
	Revision  int64
	// Continue is the token of the next page, empty on the last.
	Continue string
	// Remaining counts the objects after this page, for unfiltered lists.
	Remaining *int64
}

// ErrGone means the state a list asked for is no longer held.
type ErrGone struct {
	Message string
	// Continue, for a continuation whose snapshot is gone, goes on from
	// where the client was at the latest revision.
	Continue string
}

func (e *ErrGone) Error() string { return e.Message }

const (
	msgListTooOld     = "The resourceVersion for the provided list is too old."
	msgContinueTooOld = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."
)

// List serves one page.
func (c *Cache) List(ctx context.Context, req ListRequest) (*ListResult, error) {
	if err := c.WaitServing(ctx); err != nil {
		if unready := (*ErrUnready)(nil); errors.As(err, &unready) && req.AskedLimit > 0 && req.Filter.Match == nil {
			return c.listUnbuilt(ctx, req)
		}
		return nil, err
	}
	start := ""
	if req.Continue != nil {
		req.Consistency, req.Revision = Exact, req.Continue.Revision
		if req.Continue.Revision < 0 {
			// The token a compacted continuation answered with: go on
			// from its key at the latest state, inconsistently.
			req.Consistency, req.Revision = Consistent, 0
		}
		start = string(c.prefix) + req.Continue.Start
	}
	switch req.Consistency {
	case Consistent:
		err := c.WaitFresh(ctx)
		if req.Continue == nil {
			c.metrics.consistentRead(err)
		}
		if err != nil {
			return nil, err
		}
	case NotOlderThan:
		if err := c.WaitNotOlderThan(ctx, req.Revision); err != nil {
			return nil, err
		}
	case Exact:
		if err := c.WaitNotOlderThan(ctx, req.Revision); err != nil {
			return nil, err
		}
	}
	if req.Limit == 0 && req.Consistency != Exact {
		// A single page needs no snapshot: read the index under the lock
		// rather than cloning it, which would make later writes copy nodes.
		c.mu.RLock()
		p, rev := collect(c.tree, req.Filter, start, 0), c.rev
		c.mu.RUnlock()
		c.metrics.listedCache(p.fetched, len(p.items))
		if p.corrupt != nil {
			return nil, &ErrCorrupt{Resource: c.opts.Resource, Errs: p.corrupt}
		}
		return &ListResult{Items: p.items, Encodings: p.encodings, Revision: rev}, nil
	}
	if req.Consistency == Exact && req.Revision < c.store.CompactedRevision() {
		// Storage has compacted past the revision asked for: it is gone,
		// as in kube-apiserver, even if the cache could still answer it.
		return nil, gone(req)
	}
	tree, rev := c.stateFor(req)
	if tree == nil {
		return c.listFromStorage(ctx, req, start)
	}
	p := collect(tree, req.Filter, start, req.Limit)
	c.metrics.listedCache(p.fetched, len(p.items))
	if p.corrupt != nil {
		return nil, &ErrCorrupt{Resource: c.opts.Resource, Errs: p.corrupt}
	}
	res := &ListResult{Items: p.items, Encodings: p.encodings, Revision: rev}
	if p.next != "" {
		res.Continue = encodeToken(rev, strings.TrimPrefix(p.next, string(c.prefix)))
		c.keepSnapshot(rev, tree)
		if req.Filter.Match == nil {
			n := c.remainingAfter(rev, tree, req.Filter.Prefix, start, p)
			res.Remaining = &n
		}
	}
	return res, nil
}

// stateFor picks the index state a request reads: the current one, or a
// snapshot for an exact revision; nil when the cache does not hold it.
func (c *Cache) stateFor(req ListRequest) (*btree.BTreeG[*entry], int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if req.Consistency != Exact {
		return c.tree.Clone(), c.rev
	}
	if s, ok := c.snapshots[req.Revision]; ok {
		return s.tree, req.Revision
	}
	if c.lastChange <= req.Revision && req.Revision <= c.rev {
		// Nothing changed since: the current index is the state at it.
		return c.tree.Clone(), req.Revision
	}
	return nil, 0
}

func (c *Cache) keepSnapshot(rev int64, tree *btree.BTreeG[*entry]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.opts.Clock.Now()
	if s, ok := c.snapshots[rev]; ok {
		s.served = now // a page served from it, with more to come
		return
	}
	if len(c.snapshots) < maxSnapshots {
		c.snapshots[rev] = &snapshot{tree: tree, created: now, served: now}
	}
}

// remainingAfter counts the objects under prefix after an unfiltered page
// that started at start. Counting them all for every page would make
// paging through n objects cost n²/limit: a snapshot remembers the count
// after each page it served, and the next page takes its own items off.
func (c *Cache) remainingAfter(rev int64, tree *btree.BTreeG[*entry], prefix, start string, p page) int64 {
	// Every tree of one revision holds the same state.
	c.mu.Lock()
	s := c.snapshots[rev]
	var n int64
	counted := false
	if s != nil && start != "" {
		var before int64
		if before, counted = s.remaining[pageKey{prefix, start}]; counted {
			n = before - int64(len(p.items))
			delete(s.remaining, pageKey{prefix, start})
		}
	}
	c.mu.Unlock()
	if !counted {
		n = countFrom(tree, prefix, p.next)
	}
	c.mu.Lock()
	if s != nil {
		if s.remaining == nil {
			s.remaining = make(map[pageKey]int64)
		}
		s.remaining[pageKey{prefix, p.next}] = n
	}
	c.mu.Unlock()
	return n
}

func countFrom(tree *btree.BTreeG[*entry], prefix, from string) int64 {
	var n int64
	tree.AscendGreaterOrEqual(&entry{key: from}, func(e *entry) bool {
		if !strings.HasPrefix(e.key, prefix) {
			return false
		}
		n++
		return true
	})
	return n
}

// gone is the 410 for a list at a revision storage has compacted away. A
// continuation gets, as from kube-apiserver, a token to go on from the same
// key at the latest revision.
func gone(req ListRequest) error {
	if req.Continue != nil {
		return &ErrGone{Message: msgContinueTooOld, Continue: encodeToken(latestRevision, req.Continue.Start)}
	}
	return &ErrGone{Message: msgListTooOld}
}

// listUnbuilt reads a page from storage for a cache not built, as
// kube-apiserver's delegator reads a page without selectors (KEP-4568:
// kubectl's and informers' lists) from etcd; other lists get ErrUnready.
// A continuation or an exact list reads its revision, others the latest.
func (c *Cache) listUnbuilt(ctx context.Context, req ListRequest) (*ListResult, error) {
	req.Limit = req.AskedLimit
	start := ""
	if req.Continue != nil {
		start = string(c.prefix) + req.Continue.Start
		req.Consistency, req.Revision = Exact, req.Continue.Revision
	}
	if req.Consistency != Exact || req.Revision <= 0 {
		rev, err := c.store.CurrentRevision(ctx)
		if err != nil {
			return nil, err
		}
		req.Revision = rev
	}
	return c.listFromStorage(ctx, req, start)
}

// listFromStorage reads an exact revision the cache no longer holds from
// storage, which keeps history until compaction.
func (c *Cache) listFromStorage(ctx context.Context, req ListRequest, start string) (*ListResult, error) {
	prefix := []byte(req.Filter.Prefix)
	from := []byte(start)
	if bytes.Compare(from, prefix) < 0 {
		from = prefix
	}
	res := &ListResult{Revision: req.Revision}
	var corrupt []error
	began, fetched, evaluated := time.Now(), 0, 0
	defer func() { c.metrics.listedStorage(began, fetched, evaluated, len(res.Items)) }()
	// An unfiltered page tells how many objects follow it, as from the
	// cache: the first range counts the keys from the page's start.
	count := req.Filter.Match == nil
	var total int64
	var last string // the last key looked at
	for {
		batch := req.Limit
		r, err := c.store.Range(ctx, storage.RangeOptions{Prefix: prefix, Start: from, Limit: batch, Revision: req.Revision, Count: count})
		if errors.Is(err, storage.ErrCompacted) {
			return nil, gone(req)
		}
		if err != nil {
			return nil, err
		}
		if count {
			total, count = r.Count, false
		}
		fetched += len(r.KVs)
		for i := range r.KVs {
			if req.Limit > 0 && len(res.Items) == req.Limit {
				res.Continue = encodeToken(req.Revision, strings.TrimPrefix(keyAfter(last), string(c.prefix)))
				if req.Filter.Match == nil {
					remaining := total - int64(len(res.Items))
					res.Remaining = &remaining
				}
				return c.storageListResult(res, corrupt)
			}
			last = string(r.KVs[i].Key)
			obj, err := c.decode(&r.KVs[i])
			if err != nil {
				corrupt = append(corrupt, err)
				continue
			}
			evaluated++
			if req.Filter.matches(obj) {
				res.Items = append(res.Items, obj)
				res.Encodings = append(res.Encodings, nil)
			}
		}
		if !r.More {
			return c.storageListResult(res, corrupt)
		}
		from = []byte(keyAfter(string(r.KVs[len(r.KVs)-1].Key)))
	}
}

// storageListResult answers a list read from storage: the page, or the
// objects of it that cannot be decoded.
func (c *Cache) storageListResult(res *ListResult, corrupt []error) (*ListResult, error) {
	if corrupt != nil {
		return nil, &ErrCorrupt{Resource: c.opts.Resource, Errs: corrupt}
	}
	return res, nil
}

// Token is a decoded continue token: where the next page starts, and the
// revision every page of the list is read at.
type Token struct {
	// Revision is the revision of the list's snapshot, or latestRevision
	// for a continuation at whatever is current.
	Revision int64
	Start    string // key relative to the resource's prefix
}

// latestRevision in a token continues at the latest revision (the
// continuation of a list whose snapshot was compacted).
const latestRevision = -1

type tokenJSON struct {
	APIVersion string `json:"v"`
	Revision   int64  `json:"rv"`
	Start      string `json:"start"`
}

func encodeToken(rev int64, start string) string {
	data, _ := json.Marshal(tokenJSON{APIVersion: "meta.k8s.io/v1", Revision: rev, Start: start})
	return base64.RawURLEncoding.EncodeToString(data)
}

// DecodeToken parses and checks a continue token from a client, as
// kube's storage does (any negative revision continues at the latest).
func DecodeToken(s string) (*Token, error) {
	start, rev, err := kstorage.DecodeContinue(s, "")
	if err != nil {
		return nil, err
	}
	return &Token{Revision: rev, Start: start}, nil
}

// withRevision copies obj with its resourceVersion set to rev.
func withRevision(obj runtime.Object, rev int64) runtime.Object {
	out := obj.DeepCopyObject()
	if m, err := meta.Accessor(out); err == nil {
		m.SetResourceVersion(fmt.Sprint(rev))
	}
	return out
}
