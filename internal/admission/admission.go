// Package admission is the point in the write pipeline where plugins look
// at, change or refuse a write after the type's strategy has prepared it:
// mutating plugins first, then validating ones once the object is valid.
// Plugins see the request's attributes and objects; they never store
// anything themselves except through the API.
package admission

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	for _, p := range c {
		if v, ok := p.(Validator); ok {
			if err := v.Validate(ctx, a); err != nil {
				return err
			}
		}
	}
	return nil
}
