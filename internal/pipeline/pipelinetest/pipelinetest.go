// Package pipelinetest builds the built-in resources' write pipeline over
// a fresh in-memory store, for tests of the layers above storage.
package pipelinetest

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/internal/builtin"
	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/storage"
	"github.com/kapi-dev/kapi/internal/storage/pebble"
)

// New returns the built-in resources' write pipeline over a fresh
// in-memory store, with plugins as its admission, its caches (made with
// opts) ready and the default namespace created; everything stops when
// the test ends.
func New(t testing.TB, opts cache.Options, plugins ...any) *pipeline.Pipeline {
	t.Helper()
	s, err := pebble.OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() }) // after the pipeline's own cleanup
	return NewOver(t, s, opts, plugins...)
}

// NewOver is New over s, which the caller closes once the test's
// pipelines have stopped (cleanups run last registered first). s may be
// another pipeline's, as servers share storage when they scale out.
func NewOver(t testing.TB, s storage.Store, opts cache.Options, plugins ...any) *pipeline.Pipeline {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	reg := registry.New(s, nil, opts)
	t.Cleanup(func() { cancel(); reg.Wait() })
	p := pipeline.New(reg, append([]any{pipeline.NamespaceLifecycle(reg)}, plugins...)...)
	if err := builtin.Install(p, builtin.Options{}); err != nil {
		t.Fatal(err)
	}
	reg.Run(ctx)
	if err := reg.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := p.CreateObject(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, "test")
	if err != nil && !apierrors.IsAlreadyExists(err) { // s may be another pipeline's
		t.Fatal(err)
	}
	return p
}
