package cache

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/storage"
)

// fill writes n objects concurrently, so that group commit keeps set-up
// short.
func fill(b *testing.B, s storage.Store, n int) {
	ctx := context.Background()
	var wg sync.WaitGroup
	work := make(chan int)
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if _, err := s.Create(ctx, []byte(fmt.Sprintf("%sns/pod-%05d", prefix, i)), configMapValue("x", map[string]string{"app": "a"}, "v")); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
}

func newCacheB(b *testing.B) (*Cache, storage.Store) {
	b.Helper()
	s, c, cancel := openCache(b.TempDir())
	b.Cleanup(func() { cancel(); s.Close() })
	return c, s
}

// BenchmarkList10k lists 10,000 objects from the cache, in one page and in
// pages of 500 (SPEC C1).
func BenchmarkList10k(b *testing.B) {
	c, s := newCacheB(b)
	fill(b, s, 10000)
	ctx := context.Background()
	rev, _ := s.CurrentRevision(ctx)
	c.WaitNotOlderThan(ctx, rev)

	b.Run("one-page", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			res, err := c.List(ctx, ListRequest{Filter: Filter{Prefix: prefix}})
			if err != nil || len(res.Items) != 10000 {
				b.Fatalf("%d items, %v", len(res.Items), err)
			}
		}
	})
	b.Run("pages-of-500", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			n := 0
			req := ListRequest{Filter: Filter{Prefix: prefix}, Limit: 500}
			for {
				res, err := c.List(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				n += len(res.Items)
				if res.Continue == "" {
					break
				}
				req.Continue, _ = DecodeToken(res.Continue)
			}
			if n != 10000 {
				b.Fatalf("%d items", n)
			}
		}
	})
}

// BenchmarkFanOut1000 measures one change reaching 1,000 watchers.
func BenchmarkFanOut1000(b *testing.B) {
	c, s := newCacheB(b)
	ctx := context.Background()
	key := []byte(prefix + "ns/hot")
	rev, _ := s.Create(ctx, key, configMapValue("hot", nil, "0"))
	c.WaitNotOlderThan(ctx, rev)
	watchers := make([]*Watcher, 1000)
	for i := range watchers {
		w, _, err := c.WatchFrom(ctx, rev, Filter{Prefix: prefix, Match: func(runtime.Object) bool { return true }}, false)
		if err != nil {
			b.Fatal(err)
		}
		watchers[i] = w
	}
	batches := make([][]Delivery, len(watchers))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		rev, err = s.Update(ctx, key, configMapValue("hot", nil, fmt.Sprint(i)), rev)
		if err != nil {
			b.Fatal(err)
		}
		for i, w := range watchers {
			<-w.Ready()
			batches[i] = w.Take(batches[i])
			if d := batches[i][0]; len(batches[i]) != 1 || d.Event.Rev != rev {
				b.Fatalf("got %+v, want one event at %d", batches[i], rev)
			}
		}
	}
}
