package registry

import (
	"context"
	"net/url"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Hooks are what one type does around the generic write path, beyond its
// strategy: allocations that live in other objects (a Service's ClusterIP),
// deletion rules (a namespace is emptied before it goes) and operations
// that are creates on other objects (a pod's binding). The write pipeline
// calls them at their stage; handlers never look at them.
type Hooks struct {
	// BeforeCreate runs on a new object just before it is stored; the
	// function it returns undoes its work if the object is not stored
	// after all.
	BeforeCreate func(ctx context.Context, obj runtime.Object, dryRun bool) (undo func(), err error)
	// AfterCreate runs once a create is stored, with the object stored.
	AfterCreate func(ctx context.Context, created runtime.Object)
	// CheckUpdated may refuse the desired object of an update of the
	// main resource once mutating admission has run, before its
	// resourceVersion is compared with the current one: kube's storage
	// wrappers that check the updated object (RBAC's escalation checks).
	CheckUpdated func(ctx context.Context, next, current runtime.Object) error
	// BeforeUpdate runs on the desired object of an update of the main
	// resource; the function it returns undoes its work if that object is
	// not stored after all.
	BeforeUpdate func(ctx context.Context, next, current runtime.Object, dryRun bool) (undo func(), err error)
	// AfterUpdate runs once an update of the main resource is stored, with
	// the object before and after it.
	AfterUpdate func(ctx context.Context, old, updated runtime.Object)
	// PrepareDelete runs on the current object of a delete, which it
	// must not change. It may refuse the delete, or keep the object
	// (keep) instead of removing it, as a namespace is kept until its
	// content is gone. An object with metadata finalizers is always kept.
	PrepareDelete func(current runtime.Object) (keep bool, err error)
	// OwnDelete is set for the types whose kube-apiserver storage has a
	// delete of its own instead of the generic registry's.
	OwnDelete *OwnDelete
	// RefuseDelete, when set, may refuse the delete of one object by its
	// name before anything else is done, as the type's own delete in
	// kube-apiserver does (a system priority class); deletes of a
	// collection do not ask it, as kube's do not.
	RefuseDelete func(name string) error
	// AfterDelete runs once an object is gone.
	AfterDelete func(ctx context.Context, obj runtime.Object)
	// DeleteWarning is the warning a delete (or a delete of a
	// collection, once) gets from the type's storage for its options,
	// or "" (a Job's delete that leaves its default of orphaning its
	// pods implicit).
	DeleteWarning func(opts *metav1.DeleteOptions) string
	// Scale serves the scale sub-resource of a type that has one.
	Scale *Scale
	// Scales, for a type whose versions scale differently (a custom
	// resource's, by its CRD's versions), serve each version's scale
	// sub-resource instead, by version (Store.Scale).
	Scales map[string]*Scale
	// Actions are creates that act on other objects instead of storing
	// one, by sub-resource ("" for a resource that is only an action, such
	// as bindings).
	Actions map[string]Action
	// PrepareActions complete an action's body, by sub-resource, between
	// mutating and validating admission, as the type's kube-apiserver
	// storage does before it calls validating admission (a TokenRequest
	// gets its service account's name, namespace and UID, its audiences
	// and its creation time).
	PrepareActions map[string]PrepareAction
	// OnRead runs on each object read from storage (and on a write's
	// answer), after its defaults: what kube's storage of the type shows
	// differently from what it stores (its decorator). kapi stores the
	// object as it reads, so that writes starting from what reads show
	// compare with what is stored.
	OnRead func(obj runtime.Object)
	// Computed, for a resource whose objects are made at each read
	// rather than stored (component statuses), reads them.
	Computed *Computed
	// Streams serve sub-resources read as a stream of bytes, such as a
	// pod's log, by sub-resource.
	Streams map[string]Stream
	// Connects serve the sub-resources that connect the client to
	// something else (a container's exec, a pod's proxy), by
	// sub-resource, as the type's kube-apiserver storage serves them.
	Connects map[string]rest.Connecter
	// Share runs on each object the watch cache decodes, before the cache
	// shares it (read only from then on): it may make parts of the object
	// the very parts equal objects hold, so that they are held once.
	Share func(obj runtime.Object)
}

// OwnDelete is the delete of a type whose kube-apiserver storage has its
// own (namespaces, CustomResourceDefinitions): the first delete of an
// object only marks it, by Mark, whatever its finalizers; later deletes
// take the generic way.
type OwnDelete struct {
	// Mark adds to obj, on its first delete (which sets its deletion
	// timestamp), what the type's storage sets then, from the delete's
	// options (which may be nil).
	Mark func(obj runtime.Object, opts *metav1.DeleteOptions)
	// PreconditionFailed begins the storage's errors for a delete's
	// preconditions that do not hold.
	PreconditionFailed string
}

// Computed makes the objects of a resource that is not stored.
type Computed struct {
	// List makes every object, in the order a list answers them.
	List func(ctx context.Context) []runtime.Object
	// Get makes the object named, or says, as the type's storage does,
	// that there is none.
	Get func(ctx context.Context, name string) (runtime.Object, error)
}

// Stream serves a read of a sub-resource that answers with a stream of
// bytes (a pod's log) from the request's query: what to stream (a nil
// stream is answered 204 No Content, as kube-apiserver answers for a pod
// with no node), or the error to answer with.
type Stream func(ctx context.Context, namespace, name string, query url.Values) (rest.ResourceStreamer, error)

// Action carries out a create that is an operation, with the decoded body
// and the name in the URL (empty for a resource that is only an action).
// It returns the object to answer with (a review with its status), or nil
// for a success Status (a binding).
type Action func(ctx context.Context, namespace, name string, obj runtime.Object, dryRun bool) (runtime.Object, error)

// PrepareAction completes the body of an action on name, or refuses it.
type PrepareAction func(ctx context.Context, namespace, name string, obj runtime.Object) (runtime.Object, error)

// Scale maps a type's objects to the autoscaling/v1 Scale of their scale
// sub-resource and back.
type Scale struct {
	// Of describes obj's replicas (wanted and current) and selector.
	Of func(obj runtime.Object) (*autoscalingv1.Scale, error)
	// WithReplicas returns a copy of obj that asks for replicas.
	WithReplicas func(obj runtime.Object, replicas int32) (runtime.Object, error)
	// ReplicasPaths are where the replicas are in each version of the
	// object (nil in one without the sub-resource): what the managed
	// fields of a Scale write are moved to, and taken from, on the
	// object (managedfields.ScaleHandler).
	ReplicasPaths managedfields.ResourcePathMappings
	// ValidatesReplicas says that the object's own validation checks the
	// replicas a Scale sets (a custom resource's schema does); otherwise
	// the Scale's validation does, as autoscaling validates it.
	ValidatesReplicas bool
	// UIDOnlyReplaced says that only a replaced Scale's uid (PUT) is a
	// precondition, as in kube's storage of custom resources' scale; a
	// patched one's is ignored. Otherwise both are.
	UIDOnlyReplaced bool
	// Readable, when set, refuses a read of obj's Scale that the type's
	// storage refuses (a custom resource without its replicas field),
	// though writes of it go on.
	Readable func(obj runtime.Object) error
}
