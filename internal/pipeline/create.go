package pipeline

import (
	"context"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kapi-dev/kapi/internal/admission"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/storage"
)

// generateNameAttempts bounds retries when a generated name is taken.
const generateNameAttempts = 8

// Create prepares, admits, validates and stores a new object, retrying with
// a fresh name when a generated one is already taken. obj carries its
// namespace already (empty for cluster-scoped resources); Create takes it
// (it changes it).
func (p *Pipeline) Create(ctx context.Context, store *registry.Store, obj runtime.Object, opts Options) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	namespace := m.GetNamespace()
	obj, admitted, err := p.admitCreate(ctx, store, obj, opts)
	if err != nil {
		return nil, err
	}
	m = mustAccessor(obj)
	// Mutating admission cannot move the object: kube's storage checks
	// its namespace again.
	if err := InNamespace(m, namespace); err != nil {
		return nil, err
	}
	generated := m.GetName() == "" && m.GetGenerateName() != ""
	for attempt := 0; ; attempt++ {
		candidate := obj
		if generated { // each attempt starts from the admitted object
			candidate = obj.DeepCopyObject()
		}
		created, err := p.storeCreate(ctx, store, candidate, admitted, opts)
		if generated && apierrors.IsAlreadyExists(err) && attempt < generateNameAttempts {
			continue
		}
		return created, err
	}
}

// admitCreate runs the stages of a create that kube-apiserver's handler
// runs once, before its storage: defaults (as a decoded body gets them),
// managed fields and mutating admission. The object has no name yet if it
// is to be generated, nor the fields the server sets. It returns the
// admitted object and the namespace and name it was admitted under.
func (p *Pipeline) admitCreate(ctx context.Context, store *registry.Store, obj runtime.Object, opts Options) (runtime.Object, admittedAs, error) {
	strategyOf(store).Default(obj)
	if opts.Manager != "" {
		var err error
		if obj, err = p.trackUpdate(store.Info, opts.Subresource, store.New(), obj, opts.Manager); err != nil {
			return nil, admittedAs{}, err
		}
	}
	m := mustAccessor(obj)
	as := admittedAs{namespace: m.GetNamespace(), name: m.GetName()}
	if as.namespace == "" && store.GroupResource() == namespacesResource {
		as.namespace = as.name // a namespace is created in itself, as kube's create handler has it
	}
	attrs := attributes(admission.Create, store, as.namespace, as.name, obj, nil, opts)
	if err := p.admit(ctx, opts, attrs); err != nil {
		return nil, admittedAs{}, err
	}
	if !opts.Unadmitted {
		DedupOwnerReferences(ctx, attrs.Object, true)
	}
	return attrs.Object, as, nil
}

// admittedAs are the namespace and name a create's mutating admission saw,
// which its validating admission sees too (kube's handler makes both
// phases' attributes from the request), but for a name generated since.
type admittedAs struct{ namespace, name string }

// storeCreate runs the stages of a create that kube-apiserver's storage
// runs, again for each generated name tried: the server's fields and the
// generated name, the type's hook, its strategy (prepare, validate),
// validating admission, storage.
func (p *Pipeline) storeCreate(ctx context.Context, store *registry.Store, obj runtime.Object, admitted admittedAs, opts Options) (runtime.Object, error) {
	m := mustAccessor(obj)
	fillSystemFields(m)
	if m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(generateName(strategyOf(store), m.GetGenerateName()))
	}
	name := admitted.name
	if name == "" {
		name = m.GetName()
	}
	attrs := attributes(admission.Create, store, admitted.namespace, name, obj, nil, opts)
	// The type's hook (a Service's allocations) runs before its strategy
	// validates, as kube's BeginCreate does.
	undo := func() {}
	if hook := store.Backend().Hooks.BeforeCreate; hook != nil {
		var err error
		if undo, err = hook(ctx, obj, opts.DryRun); err != nil {
			return nil, err
		}
	}
	w := registry.Write{Info: store.Info, Subresource: opts.Subresource, Namespace: m.GetNamespace(), Name: m.GetName(), Verb: "create"}
	obj, err := strategyOf(store).Create(ctx, w, obj)
	if err != nil {
		undo()
		return nil, err
	}
	if opts.MayCreate != nil {
		if err := opts.MayCreate(); err != nil {
			undo()
			return nil, err
		}
	}
	m = mustAccessor(obj)
	attrs.Object = obj
	if err := p.validate(ctx, opts, attrs); err != nil {
		undo()
		return nil, err
	}
	if opts.DryRun {
		if obj, err = store.AsStored(obj); err != nil {
			undo()
			return nil, err
		}
		return obj, p.checkNameFree(ctx, store, m)
	}
	if m.GetResourceVersion() != "" {
		// kube-apiserver's storage refuses it, with a bare 500.
		undo()
		return nil, errResourceVersionOnCreate
	}
	created, err := store.Create(ctx, obj)
	if errors.Is(err, storage.ErrRequestTooLarge) && opts.Manager != "" {
		// As kube-apiserver's create: an object too large to store goes
		// without its managed fields, which can be most of it (not an
		// applied one, whose fields are its managed fields).
		m.SetManagedFields(nil)
		created, err = store.Create(ctx, obj)
	}
	if err != nil {
		undo()
		return nil, beingDeleted(ctx, store, m, err)
	}
	if hook := store.Backend().Hooks.AfterCreate; hook != nil {
		hook(context.WithoutCancel(ctx), created)
	}
	return created, nil
}

// InNamespace puts an object written to namespace (none for a
// cluster-scoped resource) in it, refusing one that names another, with
// kube-apiserver's words.
func InNamespace(m metav1.Object, namespace string) error {
	switch m.GetNamespace() {
	case namespace:
	case "":
		m.SetNamespace(namespace)
	default:
		if namespace != "" {
			return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		m.SetNamespace("")
	}
	return nil
}

var errResourceVersionOnCreate = &apierrors.StatusError{ErrStatus: metav1.Status{
	Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
	Message: "resourceVersion should not be set on objects to be created",
}}

// beingDeleted says, as kube-apiserver's generic registry does, that the
// object a create found in its way is being deleted.
func beingDeleted(ctx context.Context, store *registry.Store, m metav1.Object, err error) error {
	status, ok := err.(apierrors.APIStatus)
	if !ok || !apierrors.IsAlreadyExists(err) {
		return err
	}
	current, getErr := store.Get(ctx, m.GetNamespace(), m.GetName())
	if getErr != nil {
		return err
	}
	return existsAs(current, status.Status())
}

// existsAs is the AlreadyExists status of a create that met current,
// saying so when current is being deleted.
func existsAs(current runtime.Object, status metav1.Status) error {
	if mustAccessor(current).GetDeletionTimestamp() != nil {
		status.Message = "object is being deleted: " + status.Message
	}
	return &apierrors.StatusError{ErrStatus: status}
}

// checkNameFree answers a dry-run create of a name that exists as the real
// create would: 409 AlreadyExists, saying so when the object is being
// deleted.
func (p *Pipeline) checkNameFree(ctx context.Context, store *registry.Store, m metav1.Object) error {
	current, err := store.Get(ctx, m.GetNamespace(), m.GetName())
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	return existsAs(current, apierrors.NewAlreadyExists(store.GroupResource(), m.GetName()).ErrStatus)
}

// fillSystemFields sets what the server owns on a new object.
func fillSystemFields(m metav1.Object) {
	m.SetUID(uuid.NewUUID())
	m.SetCreationTimestamp(metav1.Now())
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetSelfLink("")
}

// generateName is the strategy's name of base, or base with five random
// characters appended, trimmed so that the result is at most 63
// characters, as kube-apiserver's generator makes it.
func generateName(strategy registry.Strategy, base string) string {
	if g, ok := strategy.(registry.NameGenerator); ok {
		return g.GenerateName(base)
	}
	const maxBase = 63 - 5
	if len(base) > maxBase {
		base = base[:maxBase]
	}
	return base + utilrand.String(5)
}
