package pipeline

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// storedObjectTypes is the type converter of the built-in types for the
// field managers. It types an update's live object, read from storage,
// without walking it against its schema first, as managedfields' converter
// does for every object (a sixth of an update's CPU for a pod): the
// comparison with the new object, which is validated, walks every part of
// the live one anyway and fails where that walk would have for a Go-typed
// object (an associative list item without its key; the schema of a
// built-in type is made from its Go type, so no field or scalar can
// disagree with it).
type storedObjectTypes struct {
	managedfields.TypeConverter

	// live holds the live objects of the updates being recorded.
	live sync.Map // runtime.Object -> struct{}
	// types are the schema and type of each kind typed so far.
	types sync.Map // schema.GroupVersionKind (apimachinery) -> objectType
}

type objectType struct {
	schema *smdschema.Schema
	ref    smdschema.TypeRef
}

// whileLive runs record with obj known as the live object of an update.
func (c *storedObjectTypes) whileLive(obj runtime.Object, record func() runtime.Object) runtime.Object {
	c.live.Store(obj, struct{}{})
	defer c.live.Delete(obj)
	return record()
}

func (c *storedObjectTypes) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	if _, ok := c.live.Load(obj); !ok {
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
func (c *storedObjectTypes) typeOf(obj runtime.Object) (objectType, error) {
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
