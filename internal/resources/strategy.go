package resources

import (
	"reflect"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The strategy functions below apply kube-apiserver's generic rules for
// preparing and validating objects of types without a kube strategy.

// PrepareForCreate resets what a client may not set on create: status where
// the resource has a status sub-resource, and generation.
func (i *Info) PrepareForCreate(obj runtime.Object) {
	if i.Subresource("status") != nil {
		resetStatus(obj)
	}
	m, _ := meta.Accessor(obj)
	m.SetGeneration(0)
	if i.Generation {
		m.SetGeneration(1)
	}
}

// PrepareForUpdate carries over what a PUT of the main resource may not
// change: the stored status (where status is a sub-resource) and the
// generation, which it bumps when anything else but metadata changed.
func (i *Info) PrepareForUpdate(obj, old runtime.Object) {
	if i.Subresource("status") != nil {
		copyStatus(obj, old)
	}
	m, _ := meta.Accessor(obj)
	oldMeta, _ := meta.Accessor(old)
	m.SetGeneration(oldMeta.GetGeneration())
	if i.Generation && !specEqual(obj, old) {
		m.SetGeneration(oldMeta.GetGeneration() + 1)
	}
}

// PrepareForStatusUpdate builds the object a PUT of /status stores: the old
// object with the new status and managedFields, so nothing else changes.
func (i *Info) PrepareForStatusUpdate(obj, old runtime.Object) runtime.Object {
	out := old.DeepCopyObject()
	copyStatus(out, obj)
	m, _ := meta.Accessor(out)
	newMeta, _ := meta.Accessor(obj)
	m.SetResourceVersion(newMeta.GetResourceVersion())
	// The field manager has recorded the write in obj's managedFields.
	m.SetManagedFields(newMeta.GetManagedFields())
	return out
}

// ValidateCreate checks metadata the way kube-apiserver's generic
// validation does.
func (i *Info) ValidateCreate(obj runtime.Object) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), err)}
	}
	return apivalidation.ValidateObjectMetaAccessor(m, i.Namespaced, i.nameValidator(), field.NewPath("metadata"))
}

// ValidateUpdate checks metadata, including what may not change.
func (i *Info) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), err)}
	}
	oldMeta, _ := meta.Accessor(old)
	errs := apivalidation.ValidateObjectMetaAccessor(m, i.Namespaced, i.nameValidator(), field.NewPath("metadata"))
	return append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(m, oldMeta, field.NewPath("metadata"))...)
}

// ignoredTopLevel are the fields that do not count as a spec change.
var ignoredTopLevel = map[string]bool{"TypeMeta": true, "ObjectMeta": true, "Status": true}

// specEqual reports whether a and b agree on everything but type, metadata
// and status.
func specEqual(a, b runtime.Object) bool {
	if ua, ok := a.(*unstructured.Unstructured); ok {
		ub, ok := b.(*unstructured.Unstructured)
		if !ok {
			return false
		}
		return apiequality.Semantic.DeepEqual(withoutMeta(ua.Object), withoutMeta(ub.Object))
	}
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	if va.Type() != vb.Type() {
		return false
	}
	for k := 0; k < va.NumField(); k++ {
		if ignoredTopLevel[va.Type().Field(k).Name] {
			continue
		}
		if !apiequality.Semantic.DeepEqual(va.Field(k).Interface(), vb.Field(k).Interface()) {
			return false
		}
	}
	return true
}

func withoutMeta(obj map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(obj))
	for k, v := range obj {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
		default:
			out[k] = v
		}
	}
	return out
}

// copyStatus sets dst's status to a copy of src's.
func copyStatus(dst, src runtime.Object) {
	if ud, ok := dst.(*unstructured.Unstructured); ok {
		us, _ := src.(*unstructured.Unstructured)
		if status, found := us.Object["status"]; found {
			ud.Object["status"] = runtime.DeepCopyJSONValue(status)
		} else {
			delete(ud.Object, "status")
		}
		return
	}
	sd, ss := statusField(dst), statusField(src)
	if sd.IsValid() && ss.IsValid() && sd.Type() == ss.Type() {
		sd.Set(deepCopyValue(ss))
	}
}

func resetStatus(obj runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		delete(u.Object, "status")
		return
	}
	if s := statusField(obj); s.IsValid() {
		s.Set(reflect.Zero(s.Type()))
	}
}

func statusField(obj runtime.Object) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName("Status")
}

// deepCopyValue copies a status struct with its generated DeepCopy method.
func deepCopyValue(v reflect.Value) reflect.Value {
	if v.CanAddr() {
		if m := v.Addr().MethodByName("DeepCopy"); m.IsValid() {
			return m.Call(nil)[0].Elem()
		}
	}
	return v // a status without DeepCopy holds no references worth copying
}

// nameValidator is the resource's rule for metadata.name: a DNS subdomain
// unless the type says otherwise.
func (i *Info) nameValidator() apivalidation.ValidateNameFunc {
	if i.ValidateName != nil {
		return i.ValidateName
	}
	return apivalidation.NameIsDNSSubdomain
}
