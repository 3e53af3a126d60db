package controllers

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	discoveryinformers "k8s.io/client-go/informers/discovery/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
)

// The in-process informers hold the watch cache's own objects, which carry
// their kind and apiVersion; client-go's informers, which the controllers
// were written against, decode objects without them. The EndpointSlice
// controller compares a Service's placeholder slice, which it makes
// without them, with the one listed as a whole: an informer's slice never
// equalled it, and the controller rewrote the placeholder (losing its
// trigger-time annotation). It gets the slices it lists as client-go's
// informers would hand them: shallow copies without kind and apiVersion.

// typelessSlices is an EndpointSlice informer whose lister answers so.
type typelessSlices struct {
	discoveryinformers.EndpointSliceInformer
}

func (i typelessSlices) Lister() discoverylisters.EndpointSliceLister {
	return typelessSliceLister{i.EndpointSliceInformer.Lister()}
}

type typelessSliceLister struct {
	discoverylisters.EndpointSliceLister
}

func (l typelessSliceLister) List(selector labels.Selector) ([]*discoveryv1.EndpointSlice, error) {
	return typelessList(l.EndpointSliceLister.List(selector))
}

func (l typelessSliceLister) EndpointSlices(namespace string) discoverylisters.EndpointSliceNamespaceLister {
	return typelessSliceNamespaceLister{l.EndpointSliceLister.EndpointSlices(namespace)}
}

type typelessSliceNamespaceLister struct {
	discoverylisters.EndpointSliceNamespaceLister
}

func (l typelessSliceNamespaceLister) List(selector labels.Selector) ([]*discoveryv1.EndpointSlice, error) {
	return typelessList(l.EndpointSliceNamespaceLister.List(selector))
}

func (l typelessSliceNamespaceLister) Get(name string) (*discoveryv1.EndpointSlice, error) {
	slice, err := l.EndpointSliceNamespaceLister.Get(name)
	if err != nil {
		return nil, err
	}
	return typeless(slice), nil
}

func typelessList(slices []*discoveryv1.EndpointSlice, err error) ([]*discoveryv1.EndpointSlice, error) {
	if err != nil {
		return nil, err
	}
	out := make([]*discoveryv1.EndpointSlice, len(slices))
	for i, slice := range slices {
		out[i] = typeless(slice)
	}
	return out, nil
}

// typeless is a shallow copy of slice without kind and apiVersion (its
// parts are still the shared object's, read only, as a lister's are).
func typeless(slice *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	if slice.TypeMeta == (metav1.TypeMeta{}) {
		return slice
	}
	out := *slice
	out.TypeMeta = metav1.TypeMeta{}
	return &out
}
