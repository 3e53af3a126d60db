package pebble

import (
	"context"
	"errors"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kapi-dev/kapi/internal/storage"
)

// maxGroup bounds how many writes share one synced commit.
const maxGroup = 512

type opKind int

const (
	opCreate opKind = iota
	opUpdate
	opDelete
)

type writeOp struct {
	kind     opKind
	key      []byte
	value    []byte
	expected int64 // ModRevision the key must have; 0 on delete means any
	done     chan writeResult
}

type writeResult struct {
	rev     int64
	deleted *storage.KeyValue
	err     error
}

// Create implements storage.Store. Like Update, it keeps key and value
// (watchers receive them): callers must not modify them afterwards.
func (s *Store) Create(ctx context.Context, key, value []byte) (int64, error) {
	r := s.write(ctx, &writeOp{kind: opCreate, key: key, value: value})
	return r.rev, r.err
}

// Update implements storage.Store.
func (s *Store) Update(ctx context.Context, key, value []byte, expectedRev int64) (int64, error) {
	r := s.write(ctx, &writeOp{kind: opUpdate, key: key, value: value, expected: expectedRev})
	return r.rev, r.err
}

// Delete implements storage.Store.
func (s *Store) Delete(ctx context.Context, key []byte, expectedRev int64) (int64, *storage.KeyValue, error) {
	r := s.write(ctx, &writeOp{kind: opDelete, key: key, expected: expectedRev})
	return r.rev, r.deleted, r.err
}

// write hands op to the writer and waits for its durable result. Once queued,
// a write completes even if ctx ends, so the caller's answer is never a guess.
func (s *Store) write(ctx context.Context, op *writeOp) writeResult {
	if err := checkKey(op.key); err != nil {
		return writeResult{err: err}
	}
	if op.kind == opCreate && tooLarge(op.key, op.value) {
		return writeResult{err: storage.ErrRequestTooLarge}
	}
	op.done = make(chan writeResult, 1)
	select {
	case s.writes <- op:
	case <-s.stop:
		return writeResult{err: storage.ErrClosed}
	case <-ctx.Done():
		return writeResult{err: ctx.Err()}
	}
	select {
	case r := <-op.done:
		return r
	case <-s.stopped:
		// The writer answers every write it takes before it stops, so an
		// unanswered one was never taken.
		select {
		case r := <-op.done:
			return r
		default:
			return writeResult{err: storage.ErrClosed}
		}
	}
}

// writeLoop is the single writer: it takes every queued write, checks each
// guard against the state the group has produced so far, assigns revisions
// and commits the group with one synced batch before answering anyone.
func (s *Store) writeLoop() {
	defer close(s.stopped)
	group := make([]*writeOp, 0, maxGroup)
	for {
		select {
		case op := <-s.writes:
			group = append(group[:0], op)
		case <-s.stop:
			s.failQueued()
			return
		}
	drain:
		for len(group) < maxGroup {
			select {
			case op := <-s.writes:
				group = append(group, op)
			default:
				break drain
			}
		}
		s.commitGroup(group)
	}
}

func (s *Store) failQueued() {
	for {
		select {
		case op := <-s.writes:
			op.done <- writeResult{err: storage.ErrClosed}
		default:
			return
		}
	}
}

// groupState is what the writes earlier in a group did to each key.
type groupState map[string]*storage.KeyValue // nil value: deleted

func (s *Store) commitGroup(group []*writeOp) {
	if err := s.failure(); err != nil {
		failAll(group, err)
		return
	}
	batch := s.db.NewBatch()
	defer batch.Close()
	results := make([]writeResult, len(group))
	events := make([]storage.Event, 0, len(group))
	state := groupState{}
	rev := s.revision.Load()

	for i, op := range group {
		cur, err := s.current(state, op)
		if err != nil {
			results[i].err = err
			continue
		}
		if err := checkGuard(op, cur); err != nil {
			results[i].err = err
			continue
		}
		if err := s.checkSize(op, cur); err != nil {
			results[i].err = err
			continue
		}
		rev++
		ev, err := applyOp(batch, op, cur, rev)
		if err != nil { // the batch may hold part of op: write nothing
			failAll(group, err)
			return
		}
		results[i] = writeResult{rev: rev}
		if ev.Type == storage.EventDelete {
			results[i].deleted = cur
			state[string(op.key)] = nil
		} else {
			kv := ev.KV
			state[string(op.key)] = &kv
		}
		events = append(events, ev)
	}

	if len(events) > 0 {
		if err := batch.Set(metaRevision, encodeRevision(rev), nil); err != nil {
			failAll(group, err) // nothing was written
			return
		}
		// A failed commit may still be applied, now or at the next open:
		// the store fails rather than hand its revisions out again.
		if err := s.commit(func() error { return batch.Commit(s.logSync()) }); err != nil {
			failAll(group, err)
			return
		}
		for i := range events {
			s.live.committed(&events[i])
		}
		s.hub.publish(&s.revision, rev, events)
	}
	for i, op := range group {
		op.done <- results[i]
	}
}

func failAll(group []*writeOp, err error) {
	for _, op := range group {
		op.done <- writeResult{err: err}
	}
}

// current is the live version of op's key as the group sees it: the
// group's own earlier writes first, then the writer's live revisions
// (enough to check a guard and update: a deletion's event carries the
// value), then the database.
func (s *Store) current(state groupState, op *writeOp) (*storage.KeyValue, error) {
	if kv, ok := state[string(op.key)]; ok {
		return kv, nil
	}
	if op.kind != opDelete {
		if kv, ok := s.live.get(op.key); ok {
			return kv, nil
		}
	}
	return versionAt(s.db, op.key, s.revision.Load())
}

// tooLarge tells a write etcd would refuse (storage.MaxRequestBytes).
func tooLarge(key, value []byte) bool {
	return len(key)+len(value) > storage.MaxRequestBytes
}

// checkSize refuses an update that makes its key too large. A key over
// the limit already (written before kapi had it) may still be updated, so
// that it can be shrunk, or deleted through its finalizers.
func (s *Store) checkSize(op *writeOp, cur *storage.KeyValue) error {
	if op.kind != opUpdate || !tooLarge(op.key, op.value) {
		return nil
	}
	if cur.Value == nil { // the writer's live revisions carry no value
		stored, err := versionAt(s.db, op.key, s.revision.Load())
		if err != nil {
			return err
		}
		cur = stored
	}
	if tooLarge(op.key, cur.Value) {
		return nil
	}
	return storage.ErrRequestTooLarge
}

func checkGuard(op *writeOp, cur *storage.KeyValue) error {
	switch op.kind {
	case opCreate:
		if cur != nil {
			return storage.ErrKeyExists
		}
	case opUpdate, opDelete:
		if cur == nil {
			return storage.ErrNotFound
		}
		if op.expected != 0 && cur.ModRevision != op.expected {
			return storage.ErrConflict
		}
		if op.kind == opUpdate && op.expected == 0 {
			return storage.ErrConflict // updates are always guarded
		}
	}
	return nil
}

// applyOp adds op's records to batch and returns the event it produces.
func applyOp(batch *pebble.Batch, op *writeOp, cur *storage.KeyValue, rev int64) (storage.Event, error) {
	var ev storage.Event
	var rec record
	switch op.kind {
	case opCreate:
		rec = record{createRevision: rev, value: op.value}
		ev = storage.Event{Type: storage.EventPut, KV: storage.KeyValue{Key: op.key, Value: op.value, CreateRevision: rev, ModRevision: rev}}
	case opUpdate:
		rec = record{createRevision: cur.CreateRevision, value: op.value}
		ev = storage.Event{Type: storage.EventPut, KV: storage.KeyValue{Key: op.key, Value: op.value, CreateRevision: cur.CreateRevision, ModRevision: rev}}
	case opDelete:
		rec = record{tombstone: true, createRevision: cur.CreateRevision}
		ev = storage.Event{Type: storage.EventDelete, KV: storage.KeyValue{Key: op.key, Value: cur.Value, CreateRevision: cur.CreateRevision, ModRevision: rev}}
	}
	// Encoded straight into the batch's memory, not copied there.
	d := batch.SetDeferred(versionKeySize(op.key), recordSize(rec))
	if len(appendVersionKey(d.Key[:0], op.key, rev)) != len(d.Key) || len(appendRecord(d.Value[:0], rec)) != len(d.Value) {
		return ev, errors.New("storage: version record sized wrongly") // a bug; nothing is committed
	}
	if err := d.Finish(); err != nil {
		return ev, err
	}
	return ev, batch.Set(logKey(rev), op.key, nil)
}
