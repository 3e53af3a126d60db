// Package printers produces the server-side Table columns and rows that
// kube-apiserver prints for the built-in resources, so that `kubectl get`
// (and `kubectl get -o wide`) look the same against kapi as against a real
// cluster.
//
// The logic follows kube-apiserver's pkg/printers/internalversion printers,
// ported from the internal API types to the versioned (k8s.io/api) types the
// kapi storage returns. Like kube-apiserver, every row is generated "wide":
// the cells of the priority 1 columns are always present and kubectl decides
// which columns to show.
package printers

import (
	"errors"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Printer prints one resource's objects as Table rows.
type Printer struct {
	Columns []metav1.TableColumnDefinition
	// Row returns the cells of obj's row, in column order.
	Row func(obj runtime.Object, now time.Time) []interface{}
}

// For returns the printer for a built-in resource (group + plural resource
// name), or the default printer (columns "Name" and "Created At") for
// resources without one.
//
// The returned Printer is shared: callers must not modify it.
func For(gr schema.GroupResource) *Printer {
	if p, ok := registry[gr]; ok {
		return p
	}
	return defaultPrinter
}

// registry maps the resources kube-apiserver has a printer for to it.
var registry = buildRegistry()

func buildRegistry() map[schema.GroupResource]*Printer {
	r := map[schema.GroupResource]*Printer{}
	add := func(group string, p *Printer, resources ...string) {
		for _, res := range resources {
			r[schema.GroupResource{Group: group, Resource: res}] = p
		}
	}
	addCore(add)
	addApps(add)
	addBatch(add)
	addOther(add)
	return r
}

type addFunc func(group string, p *Printer, resources ...string)

// Descriptions shared by many columns.
var (
	objectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()
)

const (
	containersDescription = "Names of each container in the template."
	imagesDescription     = "Images referenced by each container in the template."
)

// nameColumn is the "Name" column every printer starts with.
func nameColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]}
}

// ageColumn is the "Age" column.
func ageColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: objectMetaDoc["creationTimestamp"]}
}

// column is a priority 0 column.
func column(name, typ, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Description: description}
}

// wide is a priority 1 column (shown by `kubectl get -o wide`).
func wide(name, typ, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Priority: 1, Description: description}
}

// cols builds a column list.
func cols(c ...metav1.TableColumnDefinition) []metav1.TableColumnDefinition { return c }

// since is the age of timestamp at now, as kube's translateTimestampSince
// prints it.
func since(timestamp metav1.Time, now time.Time) string {
	if timestamp.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(timestamp.Time))
}

// microSince is since for a MicroTime (kube's translateMicroTimestampSince).
func microSince(timestamp metav1.MicroTime, now time.Time) string {
	if timestamp.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(timestamp.Time))
}

// typedPtr constrains PT to be a pointer to T implementing runtime.Object.
type typedPtr[T any] interface {
	*T
	runtime.Object
}

// typed makes a printer whose rows are computed by row from objects of type
// PT. Unstructured objects are converted to PT first; anything else gets a
// row holding only its name (and age).
func typed[T any, PT typedPtr[T]](columns []metav1.TableColumnDefinition, row func(obj PT, now time.Time) []interface{}) *Printer {
	return &Printer{
		Columns: columns,
		Row: func(obj runtime.Object, now time.Time) []interface{} {
			if o, ok := as[T, PT](obj); ok {
				return row(o, now)
			}
			return fallbackRow(columns, obj, now)
		},
	}
}

// as returns obj as a PT, converting it from unstructured content if needed.
func as[T any, PT typedPtr[T]](obj runtime.Object) (PT, bool) {
	switch o := obj.(type) {
	case PT:
		return o, o != nil
	case *unstructured.Unstructured:
		if o == nil {
			return nil, false
		}
		out := PT(new(T))
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, out); err != nil {
			return nil, false
		}
		return out, true
	}
	return nil, false
}

// fallbackRow is the row of an object a printer does not understand: its
// name and age where the columns have them, empty strings elsewhere.
func fallbackRow(columns []metav1.TableColumnDefinition, obj runtime.Object, now time.Time) []interface{} {
	cells := make([]interface{}, len(columns))
	m, err := accessor(obj)
	for i, c := range columns {
		cells[i] = ""
		if err != nil {
			continue
		}
		switch {
		case c.Format == "name":
			cells[i] = m.GetName()
		case c.Name == "Age":
			cells[i] = since(m.GetCreationTimestamp(), now)
		}
	}
	return cells
}

// defaultPrinter is kube-apiserver's default table convertor: the name and
// the creation time (RFC 3339, UTC) of any object, typed or unstructured.
var defaultPrinter = &Printer{
	Columns: cols(
		metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]},
		metav1.TableColumnDefinition{Name: "Created At", Type: "date", Description: objectMetaDoc["creationTimestamp"]},
	),
	Row: func(obj runtime.Object, _ time.Time) []interface{} {
		m, err := accessor(obj)
		if err != nil {
			return []interface{}{"", ""}
		}
		return []interface{}{m.GetName(), m.GetCreationTimestamp().Time.UTC().Format(time.RFC3339)}
	},
}

// errNoObject is returned by accessor for a nil object.
var errNoObject = errors.New("no object")

// accessor is meta.Accessor, refusing nil objects.
func accessor(obj runtime.Object) (metav1.Object, error) {
	if obj == nil {
		return nil, errNoObject
	}
	if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, errNoObject
	}
	return meta.Accessor(obj)
}
