package printers

import (
	"context"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// CustomColumn is a column defined by data rather than code: a
// CustomResourceDefinition's additionalPrinterColumns.
type CustomColumn struct {
	Name, Type, Format, Description string
	Priority                        int32
	// JSONPath is the column's JSONPath into the object, such as
	// .spec.replicas or .status.conditions[0].type.
	JSONPath string
}

// ForColumns returns a printer with a Name column followed by the given
// columns, printed by apiextensions' table convertor of custom resources
// (dates as ages, values of the wrong type left empty). A column whose
// JSONPath does not parse ends the columns there, as in kube-apiserver,
// whose convertor keeps the columns before it; the error says which.
func ForColumns(columns []CustomColumn) (*Printer, error) {
	defs := make([]apiextensionsv1.CustomResourceColumnDefinition, len(columns))
	for i, c := range columns {
		defs[i] = apiextensionsv1.CustomResourceColumnDefinition{
			Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority, JSONPath: c.JSONPath,
		}
	}
	convertor, invalid := tableconvertor.New(defs)
	empty, err := convertor.ConvertToTable(context.Background(), &unstructured.UnstructuredList{}, nil)
	if err != nil {
		return nil, err
	}
	p := &Printer{Columns: empty.ColumnDefinitions}
	p.Row = func(obj runtime.Object, now time.Time) []interface{} {
		table, err := convertor.ConvertToTable(context.Background(), obj, nil)
		if err != nil || len(table.Rows) != 1 {
			return fallbackRow(p.Columns, obj, now)
		}
		return table.Rows[0].Cells
	}
	return p, invalid
}
