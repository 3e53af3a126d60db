// Package admission is the point in the write pipeline where plugins look
// at, change or refuse a write after the type's strategy has prepared it:
// mutating plugins first, then validating ones once the object is valid.
// Plugins see the request's attributes and objects; they never store
// anything themselves except through the API.
package admission

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiadmission "k8s.io/apiserver/pkg/admission"
	admissionmetrics "k8s.io/apiserver/pkg/admission/metrics"
)

// Operation is the kind of write being admitted.
type Operation string

// The operations, named as in AdmissionReview.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// Attributes describe one write.
type Attributes struct {
	Operation   Operation
	Resource    schema.GroupVersionResource
	Subresource string
	Kind        schema.GroupVersionKind
	Namespace   string
	Name        string
	// Object is the object to store (nil for a delete); mutating plugins
	// may change it. OldObject is the current object of an update or
	// delete.
	Object    runtime.Object
	OldObject runtime.Object
	DryRun    bool
	// Options are the operation's options (CreateOptions, UpdateOptions,
	// DeleteOptions), as the request gave them.
	Options runtime.Object

	// reinvocation is shared by the kube plugins of one write's mutating
	// phase, as kube-apiserver's chain shares one attributes record: it
	// holds whether a webhook or a mutating policy changed the object, so
	// that the phase runs again, and which of them are to run again then.
	reinvocation apiadmission.ReinvocationContext
}

// Mutator may change the object of a write, or refuse the write.
type Mutator interface {
	Admit(ctx context.Context, a *Attributes) error
}

// Validator may refuse a write; it must not change it.
type Validator interface {
	Validate(ctx context.Context, a *Attributes) error
}

// Chain runs plugins in order. A plugin may be a Mutator, a Validator or
// both; the first error ends the write.
type Chain []any

// Admit runs every mutating plugin.
func (c Chain) Admit(ctx context.Context, a *Attributes) error {
	start := time.Now()
	err := c.admit(ctx, a)
	observeStep(ctx, start, err, a.Operation, "admit")
	return err
}

// admit runs the mutating plugins and, as kube-apiserver's chain, all of
// them once more when a webhook or a mutating policy changed the object:
// the plugins before it see the change (a sidecar a policy adds gets its
// service account token mount), and webhooks and policies whose
// reinvocationPolicy is IfNeeded run again.
func (c Chain) admit(ctx context.Context, a *Attributes) error {
	if a.reinvocation == nil {
		a.reinvocation = newReinvocationContext()
	}
	if err := c.admitOnce(ctx, a); err != nil {
		return err
	}
	if a.reinvocation.ShouldReinvoke() {
		a.reinvocation.SetIsReinvoke()
		return c.admitOnce(ctx, a)
	}
	return nil
}

func (c Chain) admitOnce(ctx context.Context, a *Attributes) error {
	for _, p := range c {
		if m, ok := p.(Mutator); ok {
			if err := m.Admit(ctx, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// Validate runs every validating plugin.
func (c Chain) Validate(ctx context.Context, a *Attributes) error {
	start := time.Now()
	err := c.validate(ctx, a)
	observeStep(ctx, start, err, a.Operation, "validate")
	return err
}

func (c Chain) validate(ctx context.Context, a *Attributes) error {
	for _, p := range c {
		if v, ok := p.(Validator); ok {
			if err := v.Validate(ctx, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// observeStep records an admission step (the mutating or the validating
// plugins of a write) in kube-apiserver's
// apiserver_admission_step_admission_duration_seconds, by step, operation
// and whether the step refused the write.
func observeStep(ctx context.Context, start time.Time, err error, op Operation, step string) {
	if attrs, ok := operationAttributes[op]; ok {
		admissionmetrics.Metrics.ObserveAdmissionStep(ctx, time.Since(start), err != nil, attrs, step)
	}
}

// operationAttributes are attributes of each operation alone: the step
// metrics label the step by nothing else of a write, and making the
// write's whole kube attributes for them would cost every write.
var operationAttributes = map[Operation]apiadmission.Attributes{}

func init() {
	for _, op := range []Operation{Create, Update, Delete, Connect} {
		operationAttributes[op] = apiadmission.NewAttributesRecord(nil, nil, schema.GroupVersionKind{}, "", "", schema.GroupVersionResource{},
			"", apiadmission.Operation(op), nil, false, nil)
	}
}
