// Package printers produces the server-side Table columns and rows that
// kube-apiserver prints, so that `kubectl get` (and `kubectl get -o wide`)
// look the same against kapi as against a real cluster: built-in objects
// are printed by kube-apiserver's own printers
// (k8s.io/kubernetes/pkg/printers/internalversion), custom resources by
// their CRD's columns. Like kube-apiserver, every row is generated "wide":
// the cells of the priority 1 columns are always present and kubectl
// decides which columns to show.
package printers

import (
	"errors"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Printer prints one resource's objects as Table rows.
type Printer struct {
	Columns []metav1.TableColumnDefinition
	// Row returns the cells of obj's row, in column order.
	Row func(obj runtime.Object, now time.Time) []interface{}
	// rows, when set, prints a list at once (a printer may look at all
	// items: kube marks the effective default StorageClass of a list),
	// with the rows' conditions (kube's marks a finished pod's row
	// Completed).
	rows func(items []runtime.Object, now time.Time) []metav1.TableRow
	// one, when set, prints an object read alone, which kube may print
	// otherwise than the same object in a list (a StorageClass is not
	// marked the default one).
	one func(obj runtime.Object, now time.Time) metav1.TableRow
	// NoRowsIsNull tells that an empty list's Table has rows null rather
	// than [], as kube's default table convertor and the CRDs' leave it.
	NoRowsIsNull bool
}

// One returns the row of obj read alone (a get, or a watch's event).
func (p *Printer) One(obj runtime.Object, now time.Time) metav1.TableRow {
	if p.one != nil {
		return p.one(obj, now)
	}
	return p.Rows([]runtime.Object{obj}, now)[0]
}

// Rows returns each item's row: its cells and conditions.
func (p *Printer) Rows(items []runtime.Object, now time.Time) []metav1.TableRow {
	if p.rows != nil {
		return p.rows(items, now)
	}
	out := make([]metav1.TableRow, len(items))
	for i, item := range items {
		out[i] = metav1.TableRow{Cells: p.Row(item, now)}
	}
	return out
}

type addFunc func(group string, p *Printer, resources ...string)

// Descriptions shared by many columns.
var (
	objectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()
)

// nameColumn is the "Name" column every printer starts with.
func nameColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]}
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
// the creation time (RFC 3339, UTC) of any object, typed or unstructured;
// an empty list has no rows (null).
var defaultPrinter = &Printer{
	NoRowsIsNull: true,
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
