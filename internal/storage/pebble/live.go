package pebble

import "github.com/kapi-dev/kapi/internal/storage"

// liveRevisions are the create and modify revisions of the live version
// of the keys the writer wrote since the store opened: checking a write's
// guard against them needs no read of Pebble (a tenth of an update's CPU
// with 20,000 objects went to the two point reads of each update, this
// one of them). An entry stays true until the writer itself changes the
// key: only the writer writes versions, and compaction never removes a
// key's live version. Only the writer goroutine uses it.
type liveRevisions struct {
	keys map[string]*liveRevision
	// peak is the most keys held since the map was last made: a Go map
	// keeps its size after deletions, so one that has shrunk to a quarter
	// is made again.
	peak int
}

type liveRevision struct{ create, mod int64 }

// get returns key's live version as the guard check needs it (no value).
func (l *liveRevisions) get(key []byte) (*storage.KeyValue, bool) {
	r, ok := l.keys[string(key)]
	if !ok {
		return nil, false
	}
	return &storage.KeyValue{Key: key, CreateRevision: r.create, ModRevision: r.mod}, true
}

// committed records what a committed event did to its key.
func (l *liveRevisions) committed(ev *storage.Event) {
	if ev.Type == storage.EventDelete {
		l.forget(ev.KV.Key)
		return
	}
	if r, ok := l.keys[string(ev.KV.Key)]; ok {
		r.create, r.mod = ev.KV.CreateRevision, ev.KV.ModRevision
		return
	}
	if l.keys == nil {
		l.keys = map[string]*liveRevision{}
	}
	l.keys[string(ev.KV.Key)] = &liveRevision{create: ev.KV.CreateRevision, mod: ev.KV.ModRevision}
	l.peak = max(l.peak, len(l.keys))
}

func (l *liveRevisions) forget(key []byte) {
	delete(l.keys, string(key))
	if l.peak >= 1024 && len(l.keys) < l.peak/4 {
		kept := make(map[string]*liveRevision, len(l.keys))
		for k, r := range l.keys {
			kept[k] = r
		}
		l.keys, l.peak = kept, len(kept)
	}
}
