// Package cacheinformers serves the server's own informers (admission's
// and the controllers') from the watch caches in process: a client-go
// informer factory whose informers of the built-in types the caches hold
// list and watch those caches directly and keep the cache's objects,
// instead of having every object encoded for the loopback connection,
// decoded again and held once more per informer. Those informers are
// this package's (informer.go): client-go's behaviour for their handlers,
// without the goroutines client-go's machinery keeps per informer and per
// handler. Everything else (other types, and informers their users build
// themselves with InformerFor) goes through the factory it wraps, over
// the loopback connection.
//
// An informer's objects are the cache's: nobody may change them, as
// nobody may change an informer's objects anyway.
package cacheinformers

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/admissionregistration"
	"k8s.io/client-go/informers/apiserverinternal"
	"k8s.io/client-go/informers/apps"
	"k8s.io/client-go/informers/autoscaling"
	"k8s.io/client-go/informers/batch"
	"k8s.io/client-go/informers/certificates"
	"k8s.io/client-go/informers/coordination"
	"k8s.io/client-go/informers/core"
	"k8s.io/client-go/informers/discovery"
	"k8s.io/client-go/informers/events"
	"k8s.io/client-go/informers/extensions"
	"k8s.io/client-go/informers/flowcontrol"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/informers/lifecycle"
	"k8s.io/client-go/informers/networking"
	"k8s.io/client-go/informers/node"
	"k8s.io/client-go/informers/policy"
	"k8s.io/client-go/informers/rbac"
	"k8s.io/client-go/informers/resource"
	"k8s.io/client-go/informers/scheduling"
	"k8s.io/client-go/informers/storage"
	"k8s.io/client-go/informers/storagemigration"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kapi-dev/kapi/internal/registry"
)

// Factory is an informers.SharedInformerFactory whose typed informers
// (Core().V1().Pods() and the like, and ForResource) of the types a watch
// cache holds are served from that cache. InformerFor, which its callers
// give their own constructor (a selector, other indexers), is the wrapped
// factory's: those informers list and watch over the loopback connection
// as their constructor says.
type Factory struct {
	informers.SharedInformerFactory
	reg *registry.Registry
	// typed is what the generated group accessors register their
	// informers through: the only InformerFor calls known to ask for the
	// default informer of a type.
	typed typedFactory
}

// New wraps loopback, a factory over the loopback connection for every
// namespace and with no list options, so that its informers of the types
// reg's watch caches hold are served from those caches.
func New(loopback informers.SharedInformerFactory, reg *registry.Registry) *Factory {
	f := &Factory{SharedInformerFactory: loopback, reg: reg}
	f.typed = typedFactory{f}
	return f
}

type typedFactory struct{ *Factory }

// InformerFor returns the shared informer of obj's type: one served from
// the watch cache when a cache holds that type, else newFunc's.
func (t typedFactory) InformerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) toolscache.SharedIndexInformer {
	if informer := t.cached(obj); informer != nil {
		return informer
	}
	return t.SharedInformerFactory.InformerFor(obj, newFunc)
}

// cached registers (or finds) the informer of obj's type served from its
// cache, with the namespace index the generated informers have.
func (f *Factory) cached(obj runtime.Object) toolscache.SharedIndexInformer {
	return f.InformerWithOptions(obj, internalinterfaces.InformerOptions{
		Indexers: toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc},
	})
}

// InformerWithOptions registers (or finds: the first registration of a
// type wins, as with InformerFor) the shared informer of obj's type served
// from the watch cache that holds it, with the options a generated
// informer constructor takes: its indexers, and TweakListOptions to
// select objects (label and field selectors). The resync period is the
// factory's. It is nil when no cache holds the type.
func (f *Factory) InformerWithOptions(obj runtime.Object, opts internalinterfaces.InformerOptions) toolscache.SharedIndexInformer {
	lw := newListWatch(f.reg, obj, opts.TweakListOptions)
	if lw == nil {
		return nil
	}
	created := false
	informer := f.SharedInformerFactory.InformerFor(obj, func(_ kubernetes.Interface, resync time.Duration) toolscache.SharedIndexInformer {
		created = true
		return newInformer(lw, obj, resync, opts.Indexers)
	})
	if created {
		// The factory's transform swaps a decoded object for the cache's;
		// these already are the cache's.
		_ = informer.SetTransform(nil)
	}
	return informer
}

// ForResource is the wrapped factory's, for a resource whose storage
// version a watch cache holds served from that cache.
func (f *Factory) ForResource(gvr schema.GroupVersionResource) (informers.GenericInformer, error) {
	obj := f.reg.Snapshot().CachedObject(gvr)
	if obj == nil {
		return f.SharedInformerFactory.ForResource(gvr)
	}
	return &genericInformer{informer: f.cached(obj), resource: gvr.GroupResource()}, nil
}

type genericInformer struct {
	informer toolscache.SharedIndexInformer
	resource schema.GroupResource
}

func (g *genericInformer) Informer() toolscache.SharedIndexInformer { return g.informer }

func (g *genericInformer) Lister() toolscache.GenericLister {
	return toolscache.NewGenericLister(g.informer.GetIndexer(), g.resource)
}

// The group accessors: each group's informers register through typed.

func (f *Factory) Admissionregistration() admissionregistration.Interface {
	return admissionregistration.New(f.typed, "", nil)
}
func (f *Factory) Internal() apiserverinternal.Interface {
	return apiserverinternal.New(f.typed, "", nil)
}
func (f *Factory) Apps() apps.Interface                 { return apps.New(f.typed, "", nil) }
func (f *Factory) Autoscaling() autoscaling.Interface   { return autoscaling.New(f.typed, "", nil) }
func (f *Factory) Batch() batch.Interface               { return batch.New(f.typed, "", nil) }
func (f *Factory) Certificates() certificates.Interface { return certificates.New(f.typed, "", nil) }
func (f *Factory) Coordination() coordination.Interface { return coordination.New(f.typed, "", nil) }
func (f *Factory) Core() core.Interface                 { return core.New(f.typed, "", nil) }
func (f *Factory) Discovery() discovery.Interface       { return discovery.New(f.typed, "", nil) }
func (f *Factory) Events() events.Interface             { return events.New(f.typed, "", nil) }
func (f *Factory) Extensions() extensions.Interface     { return extensions.New(f.typed, "", nil) }
func (f *Factory) Flowcontrol() flowcontrol.Interface   { return flowcontrol.New(f.typed, "", nil) }
func (f *Factory) Lifecycle() lifecycle.Interface       { return lifecycle.New(f.typed, "", nil) }
func (f *Factory) Networking() networking.Interface     { return networking.New(f.typed, "", nil) }
func (f *Factory) Node() node.Interface                 { return node.New(f.typed, "", nil) }
func (f *Factory) Policy() policy.Interface             { return policy.New(f.typed, "", nil) }
func (f *Factory) Rbac() rbac.Interface                 { return rbac.New(f.typed, "", nil) }
func (f *Factory) Resource() resource.Interface         { return resource.New(f.typed, "", nil) }
func (f *Factory) Scheduling() scheduling.Interface     { return scheduling.New(f.typed, "", nil) }
func (f *Factory) Storage() storage.Interface           { return storage.New(f.typed, "", nil) }
func (f *Factory) Storagemigration() storagemigration.Interface {
	return storagemigration.New(f.typed, "", nil)
}
