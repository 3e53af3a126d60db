package printers

import (
	"context"
	"sync"
	"time"

	crdtable "k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition/tableconvertor"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	apiserviceetcd "k8s.io/kube-aggregator/pkg/registry/apiservice/etcd"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	kubeprinters "k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"

	// The printers print internal objects: every served group's internal
	// types and conversions must be in legacyscheme.
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/certificates/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/events/install"
	_ "k8s.io/kubernetes/pkg/apis/flowcontrol/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	_ "k8s.io/kubernetes/pkg/apis/storagemigration/install"

	// and the groups of kube-apiserver's other servers (apiextensions,
	// apiregistration), which the codecs package installs.
	_ "github.com/kapi-dev/kapi/internal/codecs"
)

// generator is kube-apiserver's table generator with every built-in
// type's printer (k8s.io/kubernetes/pkg/printers/internalversion). It
// prints internal objects.
var generator = kubeprinters.NewTableGenerator().With(printersinternal.AddHandlers)

// wideTable is how kube-apiserver always generates tables: with the priority
// columns, which kubectl shows for -o wide.
var wideTable = kubeprinters.GenerateOptions{Wide: true}

// defaultTable lists the resources kube-apiserver prints with its default
// table (name, creation time) although a printer for their type exists.
var defaultTable = map[schema.GroupResource]bool{
	{Resource: "limitranges"}:                                      true,
	{Group: "rbac.authorization.k8s.io", Resource: "roles"}:        true,
	{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}: true,
	{Group: "storage.k8s.io", Resource: "csistoragecapacities"}:    true,
}

var kubePrinters sync.Map // schema.GroupVersionKind → *Printer

// For returns the printer of a built-in resource of kind gvk:
// kube-apiserver's own for its type, or the default printer (columns
// "Name" and "Created At") where kube-apiserver has none.
//
// The returned Printer is shared: callers must not modify it.
func For(gvk schema.GroupVersionKind, gr schema.GroupResource) *Printer {
	if defaultTable[gr] {
		return defaultPrinter
	}
	if p, ok := kubePrinters.Load(gvk); ok {
		return p.(*Printer)
	}
	generate := generateTable
	if convertor, ok := tableConvertors[gr]; ok {
		generate = func(obj runtime.Object) (*metav1.Table, error) {
			return convertor.ConvertToTable(context.Background(), obj, nil)
		}
	}
	p := kubePrinter(gvk, generate)
	kubePrinters.Store(gvk, p)
	return p
}

// generateTable prints internal objects with kube-apiserver's printers.
func generateTable(obj runtime.Object) (*metav1.Table, error) {
	return generator.GenerateTable(obj, wideTable)
}

// tableConvertors are the resources kube-apiserver prints with a table
// convertor of their own storage instead of its printers: those of
// kube-apiserver's other servers.
var tableConvertors = map[schema.GroupResource]rest.TableConvertor{
	{Group: "apiregistration.k8s.io", Resource: "apiservices"}:             &apiserviceetcd.REST{},
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}: crdtable.New(),
}

// kubePrinter prints objects of kind gvk by converting each to its
// internal type and generating its row with generate; its columns are
// those of an empty list of the kind.
func kubePrinter(gvk schema.GroupVersionKind, generate func(runtime.Object) (*metav1.Table, error)) *Printer {
	internalList, err := legacyscheme.Scheme.New(schema.GroupVersionKind{Group: gvk.Group, Version: runtime.APIVersionInternal, Kind: gvk.Kind + "List"})
	sample := internalList
	if err != nil {
		// A kind with no list (a Scale) is printed alone.
		internalList = nil
		if sample, err = legacyscheme.Scheme.New(schema.GroupVersionKind{Group: gvk.Group, Version: runtime.APIVersionInternal, Kind: gvk.Kind}); err != nil {
			return defaultPrinter
		}
	}
	empty, err := generate(sample)
	if err != nil {
		return defaultPrinter
	}
	p := &Printer{Columns: empty.ColumnDefinitions, NoRowsIsNull: internalList != nil && empty.Rows == nil}
	p.one = func(obj runtime.Object, now time.Time) metav1.TableRow {
		internal, err := legacyscheme.Scheme.ConvertToVersion(obj, runtime.InternalGroupVersioner)
		if err != nil {
			return metav1.TableRow{Cells: fallbackRow(p.Columns, obj, now)}
		}
		table, err := generate(internal)
		if err != nil || len(table.Rows) == 0 {
			return metav1.TableRow{Cells: fallbackRow(p.Columns, obj, now)}
		}
		return metav1.TableRow{Cells: table.Rows[0].Cells, Conditions: table.Rows[0].Conditions}
	}
	p.Row = func(obj runtime.Object, now time.Time) []interface{} { return p.one(obj, now).Cells }
	p.rows = func(items []runtime.Object, now time.Time) []metav1.TableRow {
		if internalList != nil {
			if rows, ok := listRows(internalList.DeepCopyObject(), items, generate); ok {
				return rows
			}
		}
		out := make([]metav1.TableRow, len(items))
		for i, item := range items {
			out[i] = p.one(item, now)
		}
		return out
	}
	return p
}

// listRows prints items as one internal list, as kube-apiserver prints a
// list; ok is false if an item does not convert or the printer does not
// give one row per item. A printer may order the rows otherwise than the
// items (kube's sorts FlowSchemas by precedence): each row's Object is the
// item it prints.
func listRows(list runtime.Object, items []runtime.Object, generate func(runtime.Object) (*metav1.Table, error)) (rows []metav1.TableRow, ok bool) {
	internals := make([]runtime.Object, len(items))
	for i, item := range items {
		internal, err := legacyscheme.Scheme.ConvertToVersion(item, runtime.InternalGroupVersioner)
		if err != nil {
			return nil, false
		}
		internals[i] = internal
	}
	if err := meta.SetList(list, internals); err != nil {
		return nil, false
	}
	table, err := generate(list)
	if err != nil || len(table.Rows) != len(items) {
		return nil, false
	}
	// SetList copies the items into the list: find each row's item by
	// the printed object's place in it.
	printed, err := meta.ExtractList(list)
	if err != nil {
		return nil, false
	}
	var index map[runtime.Object]int // made only if a printer reorders
	rows = make([]metav1.TableRow, len(items))
	for i, row := range table.Rows {
		item := i // a printer that names no object keeps the items' order
		if printedAs := row.Object.Object; printedAs != nil && printedAs != printed[i] {
			if index == nil {
				index = make(map[runtime.Object]int, len(printed))
				for j, obj := range printed {
					index[obj] = j
				}
			}
			if j, found := index[printedAs]; found {
				item = j
			}
		}
		rows[i] = metav1.TableRow{Cells: row.Cells, Conditions: row.Conditions, Object: runtime.RawExtension{Object: items[item]}}
	}
	return rows, true
}
