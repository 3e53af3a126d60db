package printers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// CustomColumn is a column defined by data rather than code: a
// CustomResourceDefinition's additionalPrinterColumns.
type CustomColumn struct {
	Name, Type, Format, Description string
	Priority                        int32
	// JSONPath is a simple path into the object, such as .spec.replicas or
	// .status.conditions[0].type.
	JSONPath string
}

// ForColumns returns a printer with a Name column followed by the given
// columns, each cell read from the object at its path (nil when absent), as
// kube-apiserver prints custom resources.
func ForColumns(columns []CustomColumn) (*Printer, error) {
	paths := make([][]step, len(columns))
	defs := []metav1.TableColumnDefinition{nameColumn()}
	for i, c := range columns {
		p, err := parsePath(c.JSONPath)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		paths[i] = p
		defs = append(defs, metav1.TableColumnDefinition{
			Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority,
		})
	}
	return &Printer{Columns: defs, Row: func(obj runtime.Object, _ time.Time) []interface{} {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		name := ""
		if m, aerr := accessor(obj); aerr == nil {
			name = m.GetName()
		}
		cells := []interface{}{name}
		for i := range columns {
			var v interface{}
			if err == nil {
				v = cellValue(lookup(content, paths[i]), columns[i].Type)
			}
			cells = append(cells, v)
		}
		return cells
	}}, nil
}

// step is one segment of a path: a field, optionally indexed.
type step struct {
	field string
	index int // -1: not indexed
}

func parsePath(path string) ([]step, error) {
	path = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(path), "{"), "}")
	if !strings.HasPrefix(path, ".") {
		return nil, fmt.Errorf("path %q must start with '.'", path)
	}
	var steps []step
	for _, part := range strings.Split(path[1:], ".") {
		s := step{field: part, index: -1}
		if open := strings.IndexByte(part, '['); open >= 0 {
			if !strings.HasSuffix(part, "]") {
				return nil, fmt.Errorf("path %q: unterminated index", path)
			}
			n, err := strconv.Atoi(part[open+1 : len(part)-1])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("path %q: only numeric indexes are supported", path)
			}
			s.field, s.index = part[:open], n
		}
		if s.field == "" {
			return nil, fmt.Errorf("path %q has an empty segment", path)
		}
		steps = append(steps, s)
	}
	return steps, nil
}

func lookup(v interface{}, steps []step) interface{} {
	for _, s := range steps {
		m, ok := v.(map[string]interface{})
		if !ok {
			return nil
		}
		v = m[s.field]
		if s.index >= 0 {
			list, ok := v.([]interface{})
			if !ok || s.index >= len(list) {
				return nil
			}
			v = list[s.index]
		}
	}
	return v
}

// cellValue shapes a value as the column's type wants it; values of
// another type are printed as text.
func cellValue(v interface{}, typ string) interface{} {
	if v == nil {
		return nil
	}
	switch typ {
	case "integer":
		switch n := v.(type) {
		case int64:
			return n
		case float64:
			return int64(n)
		}
	case "number":
		switch n := v.(type) {
		case int64:
			return float64(n)
		case float64:
			return n
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
	case "string", "date":
		if s, ok := v.(string); ok {
			return s
		}
	}
	return fmt.Sprint(v)
}
