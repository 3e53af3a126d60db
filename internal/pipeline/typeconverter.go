package pipeline

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// recordedObjectTypes is the type converter of the built-in types for the
// field managers. The two objects of a write it records (the live one,
// read from storage or empty, and the new one) are typed without walking
// them against their schema first, as managedfields' converter does for
// every object (6% of the CPU of a load of pod writes): the comparison of
// the two walks every part of both anyway and fails where that walk would
// have for a Go-typed object (an associative list item without its key;
// the schema of a built-in type is made from its Go type, so no field or
// scalar can disagree with it, and a write's objects may repeat keys).
// Everything else it types, an applied configuration among them, is
// walked as before.
type recordedObjectTypes struct {
	managedfields.TypeConverter

	// recorded holds the objects of the writes being recorded.
	recorded sync.Map // runtime.Object -> struct{}
	// types are the schema and type of each kind typed so far.
	types sync.Map // schema.GroupVersionKind (apimachinery) -> objectType
}

type objectType struct {
	schema *smdschema.Schema
	ref    smdschema.TypeRef
}

// whileRecording runs record with live and next known as the objects of a
// write.
func (c *recordedObjectTypes) whileRecording(live, next runtime.Object, record func() runtime.Object) runtime.Object {
	c.recorded.Store(live, struct{}{})
	c.recorded.Store(next, struct{}{})
	defer c.recorded.Delete(live)
	defer c.recorded.Delete(next)
	return record()
}

func (c *recordedObjectTypes) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	_, recorded := c.recorded.Load(obj)
	if _, isUnstructured := obj.(runtime.Unstructured); !recorded || isUnstructured {
		return c.TypeConverter.ObjectToTyped(obj, opts...)
	}
	t, err := c.typeOf(obj)
	if err != nil {
		return nil, err
	}
	v, err := value.NewValueReflect(obj)
	if err != nil {
		return nil, err
	}
	return typed.AsTypedUnvalidated(v, t.schema, t.ref), nil
}

// typeOf finds the schema and type of obj's kind by typing an empty object
// of the kind (nothing to validate), once per kind.
func (c *recordedObjectTypes) typeOf(obj runtime.Object) (objectType, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if t, ok := c.types.Load(gvk); ok {
		return t.(objectType), nil
	}
	empty, err := kindedCreater{}.New(gvk)
	if err != nil {
		return objectType{}, err
	}
	tv, err := c.TypeConverter.ObjectToTyped(empty)
	if err != nil {
		return objectType{}, err
	}
	t := objectType{schema: tv.Schema(), ref: tv.TypeRef()}
	c.types.Store(gvk, t)
	return t, nil
}
