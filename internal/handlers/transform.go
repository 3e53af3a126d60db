package handlers

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/printers"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
	"github.com/kapi-dev/kapi/internal/resources"
)

// readTarget is how a read is answered: a serializer and, when the client
// asked for one, a conversion (Table, PartialObjectMetadata).
type readTarget struct {
	info runtime.SerializerInfo
	conv codecs.Conversion
	// includeObject says what a Table row carries besides its cells.
	includeObject metav1.IncludeObjectPolicy
}

const (
	asTable            = "Table"
	asPartial          = "PartialObjectMetadata"
	asPartialList      = "PartialObjectMetadataList"
	metaGroup          = metav1.GroupName
	defaultIncludeRows = metav1.IncludeMetadata
)

// negotiateRead picks the representation of a get, list or watch.
func negotiateRead(r *http.Request, infos []runtime.SerializerInfo, verb string) (readTarget, error) {
	// An endpoint without tables passes over a Table option to the next
	// one the client accepts (kubectl's plain JSON), as kube's does.
	tables := printsTables(r)
	allowed := func(c codecs.Conversion, mediaType string) bool {
		if c.Group != metaGroup || (c.Version != "v1" && c.Version != "v1beta1") {
			return false
		}
		switch c.As {
		case asTable:
			// In JSON or YAML only, as kube-apiserver prints them.
			return tables && (mediaType == runtime.ContentTypeJSON || mediaType == runtime.ContentTypeYAML)
		case asPartial:
			return verb == "get" || verb == "watch" || verb == "list"
		case asPartialList:
			// kube-apiserver takes either for a get or list, and answers
			// the one that does not fit with a 406 of its own.
			return verb == "list" || verb == "get"
		}
		return false
	}
	info, conv, err := codecs.NegotiateOutputConversion(r, infos, allowed)
	if err != nil {
		return readTarget{}, err
	}
	t := readTarget{info: info, conv: conv, includeObject: defaultIncludeRows}
	// As kube-apiserver, the option is read only for a Table.
	if v := r.URL.Query().Get("includeObject"); v != "" && conv.As == asTable {
		switch p := metav1.IncludeObjectPolicy(v); p {
		case metav1.IncludeNone, metav1.IncludeMetadata, metav1.IncludeObject:
			t.includeObject = p
		default:
			return readTarget{}, apierrors.NewBadRequest(fmt.Sprintf(
				"Unable to convert to Table as requested: includeObject: Invalid value: %q: must be 'Metadata', 'Object', 'None', or empty", v))
		}
	}
	return t, nil
}

// printsTables tells whether the endpoint a request addresses answers
// Tables, as kube-apiserver's does.
func printsTables(r *http.Request) bool {
	req, ok := request.From(r.Context())
	return !ok || resources.PrintsTable(schema.GroupResource{Group: req.Group, Resource: req.Resource}, req.Subresource)
}

// transform converts what a read returns (an object or a list of items)
// into the representation the client asked for, with its kind.
func (t readTarget) transform(store *registry.Store, obj runtime.Object, items []runtime.Object, listMeta *metav1.ListMeta) (runtime.Object, schema.GroupVersionKind, error) {
	gv := schema.GroupVersion{Group: metaGroup, Version: t.conv.Version}
	switch t.conv.As {
	case asTable:
		table, err := t.table(store, obj, items)
		if err != nil {
			return nil, schema.GroupVersionKind{}, err
		}
		if listMeta != nil {
			table.ListMeta = *listMeta
		} else if m, err := meta.Accessor(obj); err == nil {
			table.ResourceVersion = m.GetResourceVersion()
		}
		return table, gv.WithKind(asTable), nil
	case asPartial:
		if obj == nil {
			return nil, schema.GroupVersionKind{}, notAcceptable(fmt.Sprintf(
				"you requested PartialObjectMetadata, but the requested object is a list (%s)", store.TypeName(true)))
		}
		return partialMetadata(obj, gv), gv.WithKind(asPartial), nil
	case asPartialList:
		if obj != nil {
			if !store.Typed() {
				// apiextensions' handler fails listing the object's items.
				return nil, schema.GroupVersionKind{}, errors.New("content is not a list")
			}
			return nil, schema.GroupVersionKind{}, notAcceptable(fmt.Sprintf(
				"you requested PartialObjectMetadataList, but the requested object is not a list (%s)", store.TypeName(false)))
		}
		list := &metav1.PartialObjectMetadataList{}
		if len(items) > 0 {
			list.Items = make([]metav1.PartialObjectMetadata, 0, len(items)) // none is null, as kube's
		}
		if listMeta != nil {
			list.ListMeta = *listMeta
		}
		for _, item := range items {
			// Each item carries its kind, as kube-apiserver's do.
			list.Items = append(list.Items, *partialMetadata(item, gv))
		}
		if gv.Version == "v1beta1" {
			// Its own type: in protobuf its fields are numbered otherwise.
			return &metav1beta1.PartialObjectMetadataList{ListMeta: list.ListMeta, Items: list.Items}, gv.WithKind(asPartialList), nil
		}
		return list, gv.WithKind(asPartialList), nil
	}
	if obj != nil {
		return obj, store.Info.GroupVersionKind(), nil
	}
	list, err := store.NewListOf(items)
	if err != nil {
		return nil, schema.GroupVersionKind{}, err
	}
	if listMeta != nil {
		lm, _ := meta.ListAccessor(list)
		lm.SetResourceVersion(listMeta.ResourceVersion)
		lm.SetContinue(listMeta.Continue)
		lm.SetRemainingItemCount(listMeta.RemainingItemCount)
	}
	return list, store.Info.ListGroupVersionKind(), nil
}

// notAcceptable is kube-apiserver's 406 for a conversion that does not
// fit what a request returns.
func notAcceptable(message string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable, Message: message,
	}}
}

// partialMetadata is an object's metadata alone; gv, when set, gives it
// its kind.
func partialMetadata(obj runtime.Object, gv schema.GroupVersion) *metav1.PartialObjectMetadata {
	out := &metav1.PartialObjectMetadata{}
	if m, err := meta.Accessor(obj); err == nil {
		out.ObjectMeta = *objectMetaOf(m)
	}
	if !gv.Empty() {
		out.SetGroupVersionKind(gv.WithKind(asPartial))
	}
	return out
}

func objectMetaOf(m metav1.Object) *metav1.ObjectMeta {
	if om, ok := m.(*metav1.ObjectMeta); ok {
		return om.DeepCopy()
	}
	return &metav1.ObjectMeta{
		Name: m.GetName(), GenerateName: m.GetGenerateName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
		ResourceVersion: m.GetResourceVersion(), Generation: m.GetGeneration(),
		CreationTimestamp: m.GetCreationTimestamp(), DeletionTimestamp: m.GetDeletionTimestamp(),
		DeletionGracePeriodSeconds: m.GetDeletionGracePeriodSeconds(), Labels: m.GetLabels(),
		Annotations: m.GetAnnotations(), OwnerReferences: m.GetOwnerReferences(), Finalizers: m.GetFinalizers(),
		ManagedFields: m.GetManagedFields(),
	}
}

// table prints obj, or when it is nil the list of items, as a Table, each
// row carrying what includeObject asks for, encoded as JSON.
func (t readTarget) table(store *registry.Store, obj runtime.Object, items []runtime.Object) (*metav1.Table, error) {
	printer := printerFor(store.Info)
	now := time.Now()
	var rows []metav1.TableRow
	if obj != nil {
		// Printed alone, as kube prints an object read alone.
		items, rows = []runtime.Object{obj}, []metav1.TableRow{printer.One(obj, now)}
	} else {
		rows = printer.Rows(items, now)
	}
	table := &metav1.Table{ColumnDefinitions: printer.Columns}
	if len(items) > 0 || !printer.NoRowsIsNull {
		table.Rows = make([]metav1.TableRow, 0, len(items))
	}
	jsonEncoder := codecs.Factory.SupportedMediaTypes()[0].Serializer
	for i, row := range rows {
		// The row's own item, where the printer orders rows otherwise.
		item := items[i]
		if row.Object.Object != nil {
			item = row.Object.Object
		}
		row.Object = runtime.RawExtension{}
		var embedded runtime.Object
		switch {
		case t.includeObject == metav1.IncludeObject:
			embedded = item
		case t.includeObject == metav1.IncludeMetadata, endsInitialEvents(item):
			// In the Table's own version, as kube-apiserver's rows. The
			// bookmark that ends a watch's initial events keeps its
			// metadata, which says so, whatever includeObject asks.
			embedded = partialMetadata(item, schema.GroupVersion{Group: metaGroup, Version: cmp.Or(t.conv.Version, "v1")})
		}
		if embedded != nil {
			var buf bytes.Buffer
			if err := jsonEncoder.Encode(embedded, &buf); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			row.Object = runtime.RawExtension{Raw: bytes.TrimSpace(buf.Bytes())}
		}
		table.Rows = append(table.Rows, row)
	}
	return table, nil
}

// endsInitialEvents tells whether obj is the bookmark that ends a watch's
// initial events.
func endsInitialEvents(obj runtime.Object) bool {
	ends, err := storage.HasInitialEventsEndBookmarkAnnotation(obj)
	return err == nil && ends
}

// watchObject is one watch event's object in the target representation: a
// Table of one row, or the object's metadata. Conversion failures fall back
// to a Status the client can report.
func (t readTarget) watchObject(store *registry.Store, typ watch.EventType, obj runtime.Object) runtime.Object {
	if t.conv.As == "" {
		return obj
	}
	out, gvk, err := t.transform(store, obj, nil, nil)
	if err != nil {
		status := apiStatus(err)
		status.SetGroupVersionKind(statusGVK)
		return status
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out
}

// printerFor is the Table printer of a resource: its printer columns when
// it defines them, else the built-in printer (or Name and Created At).
func printerFor(info *resources.Info) *printers.Printer {
	if len(info.PrinterColumns) == 0 {
		return printers.For(info.GroupVersionKind(), schema.GroupResource{Group: info.Group, Resource: info.Resource})
	}
	columns := make([]printers.CustomColumn, len(info.PrinterColumns))
	for i, c := range info.PrinterColumns {
		columns[i] = printers.CustomColumn(c)
	}
	// A column whose path does not parse (the CRD's validation lets some
	// through) drops it and the columns after it, as kube-apiserver
	// serves such a resource's tables.
	if printer, _ := printers.ForColumns(columns); printer != nil {
		return printer
	}
	return printers.For(info.GroupVersionKind(), schema.GroupResource{Group: info.Group, Resource: info.Resource})
}
