// Package pipeline is the one write path of kapi. Every create, update and
// delete goes through it, whoever asks: the HTTP handlers, the built-in
// controllers, and the hooks of one type that write objects of another (a
// Service claiming its ClusterIP as an IPAddress). The stages run in a fixed
// order:
//
//	create: system fields → managed fields → defaults and strategy → mutating
//	        admission → validation → validating admission → type hooks → storage
//	update: desired state → managed fields → precondition → type hooks →
//	        strategy → mutating admission → validation → validating admission →
//	        storage
//	delete: preconditions → admission → type hooks → mark or remove
//
// It knows nothing about HTTP: requests arrive as decoded objects and
// options, answers leave as objects and API errors.
package pipeline

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager"
	"k8s.io/apiserver/pkg/warning"

	"github.com/kapi-dev/kapi/internal/admission"
	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/resources"
)

// Pipeline carries out writes against the backends of a registry.
type Pipeline struct {
	reg           *registry.Registry
	admission     admission.Chain
	fieldManagers fieldManagers
}

// New returns the write pipeline over reg's backends, whose admission
// chain is plugins (NamespaceLifecycle first, as in kube-apiserver's
// chain, unless it is disabled).
func New(reg *registry.Registry, plugins ...any) *Pipeline {
	p := &Pipeline{reg: reg, admission: plugins}
	p.fieldManagers.convert = reg.Converter()
	return p
}

// NamespaceLifecycle is kube-apiserver's plugin of that name over reg's
// namespaces.
func NamespaceLifecycle(reg *registry.Registry) *admission.NamespaceLifecycle {
	namespaces := namespaceReader{reg}
	return admission.NewNamespaceLifecycle(namespaces.live, namespaces.cached)
}

// Prepare builds what every write needs and would otherwise build on the
// first: the type converter of managed fields, and the OpenAPI definitions
// it is made from. The server runs it in the background from the moment
// it starts.
func Prepare() { builtinTypeConverter() }

// Registry is the registry the pipeline writes to.
func (p *Pipeline) Registry() *registry.Registry { return p.reg }

// Options are what every write takes besides its object.
type Options struct {
	DryRun bool
	// Manager, when set, is recorded in managedFields as the manager of
	// the fields the write changes (an Update operation).
	Manager string
	// Subresource is the sub-resource written ("" for the object itself).
	Subresource string
	// Asked are the write's options as its request gave them.
	Asked Asked
	// Unadmitted is set on the writes kube-apiserver's storage makes
	// itself, past admission (the pod a binding binds, the pod an
	// eviction deletes).
	Unadmitted bool
	// InCollection is set on the delete of one object of a
	// deletecollection, which admission sees without its name, as
	// kube-apiserver's.
	InCollection bool
	// MayCreate, on a create that a PUT or an apply makes (the request
	// was authorised as an update or a patch), checks that the user may
	// create the object: once the type's strategy has validated it and
	// before validating admission, where kube-apiserver checks it.
	MayCreate func() error
}

// Asked are the dryRun, fieldManager and fieldValidation options as a
// request gave them. Admission sees them as the operation's CreateOptions
// or UpdateOptions (a PUT or an apply that creates as CreateOptions), as
// kube-apiserver shows them.
type Asked struct {
	DryRun                        []string
	FieldManager, FieldValidation string
}

// options are the asked options of an operation, as admission sees them.
func (a Asked) options(op admission.Operation) runtime.Object {
	switch op {
	case admission.Create:
		return &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{Kind: "CreateOptions", APIVersion: "meta.k8s.io/v1"},
			DryRun: a.DryRun, FieldManager: a.FieldManager, FieldValidation: a.FieldValidation}
	case admission.Update:
		return &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{Kind: "UpdateOptions", APIVersion: "meta.k8s.io/v1"},
			DryRun: a.DryRun, FieldManager: a.FieldManager, FieldValidation: a.FieldValidation}
	}
	return nil
}

// FieldManager returns the field manager of a resource's endpoint, which
// server-side apply merges with.
func (p *Pipeline) FieldManager(info *resources.Info, subresource string) (*managedfields.FieldManager, error) {
	return p.fieldManagers.get(info, subresource)
}

// namespaceReader reads namespaces for NamespaceLifecycle.
type namespaceReader struct{ reg *registry.Registry }

// live reads a namespace from storage.
func (r namespaceReader) live(ctx context.Context, name string) (*corev1.Namespace, error) {
	store := r.store()
	if store == nil {
		return nil, apierrors.NewNotFound(namespacesResource, name)
	}
	obj, err := store.Get(ctx, "", name)
	if err != nil {
		return nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("namespace %s is a %T", name, obj))
	}
	return ns, nil
}

// cached returns the namespaces' watch cache's namespace (read-only), or
// nil when the cache is not ready or does not hold it.
func (r namespaceReader) cached(name string) *corev1.Namespace {
	store := r.store()
	if store == nil || store.Backend() == nil || store.Backend().Cache == nil || !store.Backend().Cache.Ready() {
		return nil
	}
	ns, _ := store.Backend().Cache.Get(store.Key("", name)).(*corev1.Namespace)
	return ns
}

// store is the store of namespaces, or nil while none is served.
func (r namespaceReader) store() *registry.Store {
	return r.reg.Snapshot().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
}

var namespacesResource = schema.GroupResource{Resource: "namespaces"}

// attributes describes a write to admission. (A create's namespace and
// name are the caller's: admitCreate's.)
func attributes(op admission.Operation, store *registry.Store, namespace, name string, obj, old runtime.Object, opts Options) *admission.Attributes {
	if op != admission.Create && store.GroupResource() == namespacesResource {
		namespace = name // a namespace lives in itself, as kube-apiserver's request info has it
	}
	return &admission.Attributes{
		Operation: op, Resource: store.Info.GroupVersionResource(), Subresource: opts.Subresource,
		Kind: store.Info.GroupVersionKind(), Namespace: namespace, Name: name,
		Object: obj, OldObject: old, DryRun: opts.DryRun, Options: opts.Asked.options(op),
	}
}

// admit runs mutating admission on a write, unless kube-apiserver's
// storage makes it past admission.
func (p *Pipeline) admit(ctx context.Context, opts Options, attrs *admission.Attributes) error {
	if opts.Unadmitted {
		return nil
	}
	m, err := meta.Accessor(attrs.Object)
	if err != nil { // a delete's admission has no object
		return p.admission.Admit(ctx, attrs)
	}
	before := m.GetManagedFields()
	if err := p.admission.Admit(ctx, attrs); err != nil {
		return err
	}
	// As kube-apiserver's handlers wrap admission: managed fields that
	// admission left invalid are put back as they were, with a warning.
	// Those it left alone (the same entries) were valid: decoding them
	// again would cost every write.
	m = mustAccessor(attrs.Object)
	after := m.GetManagedFields()
	if sameEntries(before, after) {
		return nil
	}
	if err := managedfields.ValidateManagedFields(after); err != nil {
		m.SetManagedFields(before)
		warning.AddWarning(ctx, "", fmt.Sprintf(fieldmanager.InvalidManagedFieldsAfterMutatingAdmissionWarningFormat, err))
	}
	return nil
}

// sameEntries reports whether two managed fields lists are one list, not
// a copy: admission that decodes and patches an object makes new ones.
func sameEntries(a, b []metav1.ManagedFieldsEntry) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// validate runs validating admission on a write, unless kube-apiserver's
// storage makes it past admission.
func (p *Pipeline) validate(ctx context.Context, opts Options, attrs *admission.Attributes) error {
	if opts.Unadmitted {
		return nil
	}
	return p.admission.Validate(ctx, attrs)
}

// trackUpdate records in next's managedFields what manager changed from
// live, as kube-apiserver does for every create, update and patch.
func (p *Pipeline) trackUpdate(info *resources.Info, subresource string, live, next runtime.Object, manager string) (runtime.Object, error) {
	fm, err := p.fieldManagers.get(info, subresource)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	// The field manager types objects by their kind, which decoded bodies
	// and new objects may not carry. A custom resource's body that names
	// another kind keeps it, for its validation to refuse.
	gvk := info.GroupVersionKind()
	for _, obj := range []runtime.Object{live, next} {
		if obj.GetObjectKind().GroupVersionKind().Kind == "" {
			obj.GetObjectKind().SetGroupVersionKind(gvk)
		}
	}
	types, err := builtinTypeConverter()
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return types.whileRecording(live, next, func() runtime.Object {
		return fm.UpdateNoErrors(live, next, manager)
	}), nil
}

// Store finds the store of the kind of obj, for writers that hold a typed
// object (controllers, bootstrap).
func (p *Pipeline) Store(obj runtime.Object) (*registry.Store, error) {
	gvks, _, err := codecs.Scheme.ObjectKinds(obj)
	if err != nil {
		return nil, err
	}
	store := p.reg.Snapshot().ForKind(gvks[0])
	if store == nil {
		return nil, fmt.Errorf("no resource serves %s", gvks[0])
	}
	return store, nil
}

// EnsureObject creates a typed object on behalf of the server itself
// unless one of its name exists, which it leaves as it is. The cache is
// read first: a restart that finds the object does not take the write
// path (admission, validation) to be told it exists.
func (p *Pipeline) EnsureObject(ctx context.Context, obj runtime.Object, manager string) error {
	store, err := p.Store(obj)
	if err != nil {
		return err
	}
	m := mustAccessor(obj)
	if _, err := store.Get(ctx, m.GetNamespace(), m.GetName()); err == nil {
		return nil
	}
	if _, err := p.Create(ctx, store, obj.DeepCopyObject(), Options{Manager: manager}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// CreateObject creates a typed object on behalf of the server itself,
// through the whole pipeline.
func (p *Pipeline) CreateObject(ctx context.Context, obj runtime.Object, manager string) (runtime.Object, error) {
	store, err := p.Store(obj)
	if err != nil {
		return nil, err
	}
	return p.Create(ctx, store, obj.DeepCopyObject(), Options{Manager: manager})
}

func mustAccessor(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("object %T has no metadata: %v", obj, err)) // decoders only produce objects with metadata
	}
	return m
}
