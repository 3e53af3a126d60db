package cacheinformers

import (
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/registry"
)

// listWatch is where an informer reads the watch cache that holds objects
// of one Go type, and with which selectors.
type listWatch struct {
	reg *registry.Registry
	typ reflect.Type
	// tweak sets selectors, as a generated informer's TweakListOptions.
	tweak func(*metav1.ListOptions)
}

func newListWatch(reg *registry.Registry, obj runtime.Object, tweak func(*metav1.ListOptions)) *listWatch {
	typ := reflect.TypeOf(obj)
	if reg.Snapshot().Holding(typ) == nil {
		return nil
	}
	return &listWatch{reg: reg, typ: typ, tweak: tweak}
}

// filter is the cache filter of the options, tweaked.
func (lw *listWatch) filter(store *registry.Store, opts metav1.ListOptions) (cache.Filter, error) {
	if lw.tweak != nil {
		lw.tweak(&opts)
	}
	return filterOf(store, opts)
}

// backend is the one whose cache holds the type now, looked up on every
// call as a reflector lists and watches for as long as the server runs.
func (lw *listWatch) backend() (*registry.Backend, error) {
	b := lw.reg.Snapshot().Holding(lw.typ)
	if b == nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no watch cache holds %v", lw.typ))
	}
	return b, nil
}

// filterOf is the cache filter of the options' selectors, over every
// namespace.
func filterOf(store *registry.Store, opts metav1.ListOptions) (cache.Filter, error) {
	labelSel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return cache.Filter{}, apierrors.NewBadRequest(err.Error())
	}
	fieldSel, err := fields.ParseSelector(opts.FieldSelector)
	if err != nil {
		return cache.Filter{}, apierrors.NewBadRequest(err.Error())
	}
	if !fieldSel.Empty() {
		if fieldSel, err = store.Info.ConvertFieldSelector(fieldSel); err != nil {
			return cache.Filter{}, err
		}
	}
	return store.Filter("", labelSel, fieldSel), nil
}

// neverRuns is the lister-watcher of the reflector handed to a watch error
// handler (handlers expect the reflector that failed); that reflector is
// never run.
type neverRuns struct{}

func (neverRuns) List(metav1.ListOptions) (runtime.Object, error) {
	return nil, errors.New("this reflector only names a failed cache watch")
}

func (neverRuns) Watch(metav1.ListOptions) (watch.Interface, error) {
	return nil, errors.New("this reflector only names a failed cache watch")
}
