package resources

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Field selectors take two steps in kube-apiserver, and kapi mirrors both:
//
//  1. The list/watch handler passes every requirement through the field label
//     conversion func the scheme registers for the resource's kind and
//     version (scheme.ConvertFieldLabel). A kind without one falls back to
//     runtime.DefaultMetaV1FieldSelectorConversion, which only knows
//     metadata.name and metadata.namespace. A failure becomes a 400
//     BadRequest carrying the func's message verbatim, so the wording differs
//     per kind. A conversion func may also rename a label (pods' legacy
//     "spec.host", events.k8s.io's "regarding.*").
//  2. The storage filters objects with the resource's GetAttrs, which returns
//     the selectable fields of one object. A label that passed step 1 but is
//     not in that set reads as "" (fields.Set.Get).
//
// The two steps do not always agree, and kube's quirks are kept: apps/v1
// ReplicaSets expose status.replicas in GetAttrs but register no conversion
// func, so the label is rejected (kubernetes/kubernetes#135136); pods accept
// status.podIPs but never expose it; namespaces, PVs and PVCs expose a legacy
// "name" field no conversion func accepts.

// fieldSupport is kube-apiserver's field selector behaviour for one resource.
type fieldSupport struct {
	// attrs returns the resource-specific fields of GetAttrs; metadata.name
	// and (for namespaced resources) metadata.namespace are added by
	// SelectableFields. nil means the generic metadata-only GetAttrs.
	attrs func(obj runtime.Object) fields.Set
	// convert is the field label conversion func registered for the served
	// version's kind; nil means runtime.DefaultMetaV1FieldSelectorConversion.
	convert func(label, value string) (string, string, error)
}

// fieldSupports lists the resources whose field selectors differ from the
// generic metadata-only behaviour, keyed by group and resource. The sources
// are pkg/apis/<group>/<version>/conversion.go (convert) and
// pkg/registry/<group>/<resource>/strategy.go or storage.go (attrs).
var fieldSupports = map[schema.GroupResource]fieldSupport{
	{Resource: "pods"}: {
		attrs: typedAttrs(podFields),
		convert: func(label, value string) (string, string, error) {
			switch label {
			case "metadata.name", "metadata.namespace",
				"spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
				"spec.serviceAccountName", "spec.hostNetwork",
				"status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName":
				return label, value, nil
			case "spec.host": // old v1 clients
				return "spec.nodeName", value, nil
			}
			return "", "", labelNotSupported(label)
		},
	},
	{Resource: "nodes"}: {
		attrs: typedAttrs(func(n *corev1.Node) fields.Set {
			return fields.Set{"spec.unschedulable": strconv.FormatBool(n.Spec.Unschedulable)}
		}),
		convert: acceptLabels(labelNotSupported, "metadata.name", "spec.unschedulable"),
	},
	{Resource: "namespaces"}: {
		attrs: typedAttrs(func(ns *corev1.Namespace) fields.Set {
			// "name" is a legacy field kube keeps in GetAttrs; no
			// conversion func accepts it.
			return fields.Set{"status.phase": string(ns.Status.Phase), "name": ns.Name}
		}),
		convert: acceptLabels(labelNotSupported, "status.phase", "metadata.name"),
	},
	{Resource: "secrets"}: {
		attrs:   typedAttrs(func(s *corev1.Secret) fields.Set { return fields.Set{"type": string(s.Type)} }),
		convert: acceptLabels(labelNotSupported, "type", "metadata.namespace", "metadata.name"),
	},
	{Resource: "services"}: {
		attrs: typedAttrs(func(s *corev1.Service) fields.Set {
			return fields.Set{"spec.clusterIP": s.Spec.ClusterIP, "spec.type": string(s.Spec.Type)}
		}),
		convert: acceptLabels(labelNotSupported, "metadata.namespace", "metadata.name", "spec.clusterIP", "spec.type"),
	},
	{Resource: "replicationcontrollers"}: {
		attrs: typedAttrs(func(rc *corev1.ReplicationController) fields.Set {
			return fields.Set{"status.replicas": strconv.Itoa(int(rc.Status.Replicas))}
		}),
		convert: acceptLabels(labelNotSupported, "metadata.name", "metadata.namespace", "status.replicas"),
	},
	{Resource: "events"}: {
		attrs: coreEventAttrs,
		convert: acceptLabels(labelNotSupported,
			"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
			"involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
			"involvedObject.fieldPath", "reason", "reportingComponent", "source", "type",
			"metadata.namespace", "metadata.name"),
	},
	{Resource: "persistentvolumes"}: {
		attrs: typedAttrs(func(pv *corev1.PersistentVolume) fields.Set { return fields.Set{"name": pv.Name} }),
	},
	{Resource: "persistentvolumeclaims"}: {
		attrs: typedAttrs(func(pvc *corev1.PersistentVolumeClaim) fields.Set { return fields.Set{"name": pvc.Name} }),
	},
	// events.k8s.io shares the core Event storage and GetAttrs; its
	// conversion func maps the events.k8s.io names onto that field set.
	{Group: "events.k8s.io", Resource: "events"}: {
		attrs: func(obj runtime.Object) fields.Set {
			if core, ok := obj.(*corev1.Event); ok { // as its cache holds it
				return coreEventAttrs(core)
			}
			return eventsV1Attrs(obj)
		},
		convert: mapLabels(map[string]string{
			"reason":                    "reason",
			"regarding.kind":            "involvedObject.kind",
			"regarding.namespace":       "involvedObject.namespace",
			"regarding.name":            "involvedObject.name",
			"regarding.uid":             "involvedObject.uid",
			"regarding.apiVersion":      "involvedObject.apiVersion",
			"regarding.resourceVersion": "involvedObject.resourceVersion",
			"regarding.fieldPath":       "involvedObject.fieldPath",
			"reportingController":       "reportingComponent",
			"type":                      "type",
			"metadata.namespace":        "metadata.namespace",
			"metadata.name":             "metadata.name",
		}),
	},
	{Group: "resource.k8s.io", Resource: "resourceslices"}: {
		attrs: typedAttrs(func(slice *resourcev1.ResourceSlice) fields.Set {
			return fields.Set{
				resourcev1.ResourceSliceSelectorNodeName: ptrString(slice.Spec.NodeName),
				resourcev1.ResourceSliceSelectorDriver:   slice.Spec.Driver,
				"spec.pool.name":                         slice.Spec.Pool.Name,
			}
		}),
		convert: acceptLabels(func(label string) error {
			return fmt.Errorf("field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: %s", label)
		}, "metadata.name", resourcev1.ResourceSliceSelectorNodeName, resourcev1.ResourceSliceSelectorDriver, "spec.pool.name"),
	},
	// apps/v1 registers no conversion func: status.replicas is exposed but
	// rejected with the generic message.
	{Group: "apps", Resource: "replicasets"}: {
		attrs: typedAttrs(func(rs *appsv1.ReplicaSet) fields.Set {
			return fields.Set{"status.replicas": strconv.Itoa(int(rs.Status.Replicas))}
		}),
	},
	{Group: "batch", Resource: "jobs"}: {
		attrs: typedAttrs(func(j *batchv1.Job) fields.Set {
			return fields.Set{"status.successful": strconv.Itoa(int(j.Status.Succeeded))}
		}),
		convert: acceptLabels(func(label string) error { return fmt.Errorf("field label %q not supported for Job", label) },
			"metadata.name", "metadata.namespace", "status.successful"),
	},
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: {
		attrs: typedAttrs(func(csr *certificatesv1.CertificateSigningRequest) fields.Set {
			return fields.Set{"spec.signerName": csr.Spec.SignerName}
		}),
		convert: acceptLabels(labelNotSupported, "metadata.name", "spec.signerName"),
	},
	{Group: "certificates.k8s.io", Resource: "clustertrustbundles"}: {
		attrs: typedAttrs(func(b *certificatesv1.ClusterTrustBundle) fields.Set {
			return fields.Set{"spec.signerName": b.Spec.SignerName}
		}),
		convert: acceptLabels(labelNotSupported, "metadata.name", "spec.signerName"),
	},
	// Namespaced, yet its conversion func does not accept metadata.namespace.
	{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}: {
		attrs: typedAttrs(func(r *certificatesv1.PodCertificateRequest) fields.Set {
			return fields.Set{
				"spec.signerName": r.Spec.SignerName,
				"spec.podName":    r.Spec.PodName,
				"spec.nodeName":   string(r.Spec.NodeName),
			}
		}),
		convert: acceptLabels(labelNotSupported, "metadata.name", "spec.signerName", "spec.podName", "spec.nodeName"),
	},
}

// builtinGroupResources holds every built-in resource; anything else is a
// custom resource.
var builtinGroupResources = func() map[schema.GroupResource]bool {
	m := make(map[schema.GroupResource]bool, len(builtinResources))
	for i := range builtinResources {
		m[schema.GroupResource{Group: builtinResources[i].Group, Resource: builtinResources[i].Resource}] = true
	}
	return m
}()

// SelectableFields returns the fields a field selector can match for obj, as
// kube-apiserver's GetAttrs for the resource returns them: metadata.name,
// metadata.namespace for namespaced resources only, and the resource's own
// fields (booleans as "true"/"false", integers in decimal). An object of an
// unexpected type, or an unstructured one that does not convert to the
// resource's type, gets only the metadata fields.
func (i *Info) SelectableFields(obj runtime.Object) fields.Set {
	set := fields.Set{}
	if i.FieldAttrs != nil {
		for k, v := range i.FieldAttrs(obj) {
			set[k] = v
		}
	} else if fs, ok := fieldSupports[i.groupResource()]; ok && fs.attrs != nil {
		for k, v := range fs.attrs(obj) {
			set[k] = v
		}
	}
	if m, err := meta.Accessor(obj); err == nil {
		set["metadata.name"] = m.GetName()
		if i.Namespaced {
			set["metadata.namespace"] = m.GetNamespace()
		}
	}
	return set
}

// FieldsOf is SelectableFields for matching a selector: metadata.name and
// (for namespaced resources) metadata.namespace are read from the object
// as asked, and the set of every field is built only when the selector
// names another. A watch or list selecting by name matches each object it
// passes over without building a map for it.
func (i *Info) FieldsOf(obj runtime.Object) fields.Fields {
	return &lazyFields{info: i, obj: obj}
}

type lazyFields struct {
	info *Info
	obj  runtime.Object
	all  fields.Set
}

func (l *lazyFields) Has(field string) bool {
	if _, ok := l.metadata(field); ok {
		return true
	}
	return l.set().Has(field)
}

func (l *lazyFields) Get(field string) string {
	if value, ok := l.metadata(field); ok {
		return value
	}
	return l.set().Get(field)
}

// metadata answers for the fields SelectableFields takes from the object's
// metadata; ok is false for the others.
func (l *lazyFields) metadata(field string) (value string, ok bool) {
	if field != "metadata.name" && (field != "metadata.namespace" || !l.info.Namespaced) {
		return "", false
	}
	m, err := meta.Accessor(l.obj)
	if err != nil {
		return "", false
	}
	if field == "metadata.name" {
		return m.GetName(), true
	}
	return m.GetNamespace(), true
}

func (l *lazyFields) set() fields.Set {
	if l.all == nil {
		l.all = l.info.SelectableFields(l.obj)
	}
	return l.all
}

// CheckFieldSelector returns nil when every requirement of sel names a field
// the resource supports, else the error kube-apiserver returns: a 400
// BadRequest whose message is the resource's field label conversion error.
func (i *Info) CheckFieldSelector(sel fields.Selector) error {
	_, err := i.ConvertFieldSelector(sel)
	return err
}

// ConvertFieldSelector applies the resource's field label conversion to sel,
// as kube-apiserver does before listing or watching: legacy or
// version-specific labels become the names SelectableFields uses (pods'
// spec.host becomes spec.nodeName, events.k8s.io's regarding.name becomes
// involvedObject.name). Match objects with the returned selector. Errors are
// those of CheckFieldSelector; a nil sel converts to Everything.
func (i *Info) ConvertFieldSelector(sel fields.Selector) (fields.Selector, error) {
	if sel == nil {
		return fields.Everything(), nil
	}
	out, err := sel.Transform(i.convertFieldLabel)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return out, nil
}

// convertFieldLabel is scheme.ConvertFieldLabel for the resource.
func (i *Info) convertFieldLabel(label, value string) (string, string, error) {
	if i.FieldLabelConversion != nil {
		return i.FieldLabelConversion(label, value)
	}
	gr := i.groupResource()
	if fs, ok := fieldSupports[gr]; ok && fs.convert != nil {
		return fs.convert(label, value)
	}
	if !builtinGroupResources[gr] {
		return i.convertCustomFieldLabel(label, value)
	}
	return runtime.DefaultMetaV1FieldSelectorConversion(label, value)
}

// convertCustomFieldLabel is apiextensions-apiserver's crConverter: name
// always, namespace only for namespaced resources. The CRD's own
// selectableFields are not known here.
func (i *Info) convertCustomFieldLabel(label, value string) (string, string, error) {
	switch {
	case label == "metadata.name":
		return label, value, nil
	case i.Namespaced && label == "metadata.namespace":
		return label, value, nil
	}
	return "", "", labelNotSupported(label)
}

func (i *Info) groupResource() schema.GroupResource {
	return schema.GroupResource{Group: i.Group, Resource: i.Resource}
}

// labelNotSupported is the message most registered conversion funcs use.
func labelNotSupported(label string) error {
	return fmt.Errorf("field label not supported: %s", label)
}

// acceptLabels builds a conversion func that passes the listed labels
// through unchanged and rejects any other with reject.
func acceptLabels(reject func(label string) error, labels ...string) func(string, string) (string, string, error) {
	ok := make(map[string]bool, len(labels))
	for _, l := range labels {
		ok[l] = true
	}
	return func(label, value string) (string, string, error) {
		if ok[label] {
			return label, value, nil
		}
		return "", "", reject(label)
	}
}

// mapLabels builds a conversion func that renames the listed labels and
// rejects any other with labelNotSupported.
func mapLabels(mapping map[string]string) func(string, string) (string, string, error) {
	return func(label, value string) (string, string, error) {
		if to, ok := mapping[label]; ok {
			return to, value, nil
		}
		return "", "", labelNotSupported(label)
	}
}

// typedAttrs adapts a GetAttrs over a typed object to any runtime.Object;
// unstructured input is converted to the type first.
// coreEventAttrs are a core Event's fields; events.k8s.io reads them too,
// from the core Events its cache holds.
var coreEventAttrs = typedAttrs(func(e *corev1.Event) fields.Set {
	return eventFields(e.InvolvedObject, e.Reason, e.ReportingController, e.Source.Component, e.Type)
})

var eventsV1Attrs = typedAttrs(func(e *eventsv1.Event) fields.Set {
	return eventFields(e.Regarding, e.Reason, e.ReportingController, e.DeprecatedSource.Component, e.Type)
})

func typedAttrs[T any, PT interface {
	*T
	runtime.Object
}](fn func(PT) fields.Set) func(runtime.Object) fields.Set {
	return func(obj runtime.Object) fields.Set {
		if o, ok := obj.(PT); ok {
			return fn(o)
		}
		if u, ok := obj.(runtime.Unstructured); ok {
			o := PT(new(T))
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), o); err == nil {
				return fn(o)
			}
		}
		return nil
	}
}

// podFields is the pod part of pkg/registry/core/pod ToSelectableFields,
// read from a v1 Pod.
func podFields(p *corev1.Pod) fields.Set {
	// The internal Pod keeps only podIPs; converting from v1 makes podIP
	// authoritative when set, else the first of podIPs.
	podIP := p.Status.PodIP
	if podIP == "" && len(p.Status.PodIPs) > 0 {
		podIP = p.Status.PodIPs[0].IP
	}
	return fields.Set{
		"spec.nodeName":            p.Spec.NodeName,
		"spec.restartPolicy":       string(p.Spec.RestartPolicy),
		"spec.schedulerName":       p.Spec.SchedulerName,
		"spec.serviceAccountName":  p.Spec.ServiceAccountName,
		"spec.hostNetwork":         strconv.FormatBool(p.Spec.HostNetwork),
		"status.phase":             string(p.Status.Phase),
		"status.podIP":             podIP,
		"status.nominatedNodeName": p.Status.NominatedNodeName,
	}
}

// eventFields is the event part of pkg/registry/core/event ToSelectableFields,
// shared by core and events.k8s.io Events.
func eventFields(involved corev1.ObjectReference, reason, reportingController, sourceComponent, eventType string) fields.Set {
	source := sourceComponent
	if source == "" {
		source = reportingController
	}
	return fields.Set{
		"involvedObject.kind":            involved.Kind,
		"involvedObject.namespace":       involved.Namespace,
		"involvedObject.name":            involved.Name,
		"involvedObject.uid":             string(involved.UID),
		"involvedObject.apiVersion":      involved.APIVersion,
		"involvedObject.resourceVersion": involved.ResourceVersion,
		"involvedObject.fieldPath":       involved.FieldPath,
		"reason":                         reason,
		"reportingComponent":             reportingController,
		"source":                         source,
		"type":                           eventType,
	}
}

func ptrString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
