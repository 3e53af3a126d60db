package handlers

import (
	"bytes"
	"cmp"
	"fmt"
	"net/http"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/audit"
	kstorage "k8s.io/apiserver/pkg/storage"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
	"github.com/kapi-dev/kapi/internal/resources"
)

var scaleGVK = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// scale serves the scale sub-resource: an object's replicas as an
// autoscaling/v1 Scale, read and written through its type's Scale hook.
func (a *API) scale(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	scale := store.Scale()
	if scale == nil {
		writeError(w, r, errNoRoute)
		return
	}
	infos := codecs.Factory.SupportedMediaTypes()
	if !store.Typed() {
		// A custom resource's Scale is served as the custom resource is:
		// never in protobuf.
		infos = store.Serializers()
	}
	target, err := negotiateRead(r, infos, "get")
	if err != nil {
		writeError(w, r, err)
		return
	}
	var obj runtime.Object
	switch req.Verb {
	case "get":
		if rv := r.URL.Query().Get("resourceVersion"); rv != "" {
			// As any get: the version must be known (a get's is a lower
			// bound), waited for if it is ahead of the cache.
			if _, _, err := a.getAt(r, req, store, rv); err != nil {
				writeError(w, r, err)
				return
			}
		}
		if obj, err = store.Get(r.Context(), req.Namespace, req.Name); err == nil && scale.Readable != nil {
			err = scale.Readable(obj)
		}
	case "update", "patch":
		obj, err = a.writeScale(w, r, req, store, scale)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	s, err := scale.Of(obj)
	if err != nil {
		writeError(w, r, err) // kube's scale storage returns its error as it is
		return
	}
	s.SetGroupVersionKind(scaleGVK) // as a Table's row object shows it too
	writeTransformed(w, r, http.StatusOK, s, scaleStoreOf(store), target)
}

// writeScale applies a Scale (PUT), a patch of one (PATCH) or an
// applied configuration of one to the workload's replicas. As in
// kube-apiserver, a Scale's field manager tracks the write, over the
// managed fields of the replicas that the workload's entries convert to
// (managedfields.ScaleHandler), and the result is converted back to the
// workload's entries.
func (a *API) writeScale(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store, scale *registry.Scale) (runtime.Object, error) {
	dry, validation, err := dryRunAndValidation(r)
	if err != nil {
		return nil, err
	}
	var opts applyOpts
	if isApply(r) {
		if opts, err = applyOptions(r); err != nil {
			return nil, err
		}
	}
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	fm, err := a.pipeline.FieldManager(scaleStore.Info, req.Subresource)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	sw := scaleWrite{w: w, r: r, req: req, body: body, validation: validation, fm: fm}
	desiredScale, err := sw.change(store, opts)
	if err != nil {
		return nil, err
	}
	if req.Verb == "update" { // after the body's name, as for any replace
		if err := checkPathName(req, store); err != nil {
			return nil, err
		}
	}
	gv := store.Info.GroupVersionKind().GroupVersion()
	return a.pipeline.Update(r.Context(), store, req.Namespace, req.Name, pipeline.Options{DryRun: dry, Subresource: req.Subresource, Asked: asked(r)}, func(current runtime.Object) (runtime.Object, error) {
		currentScale, err := scale.Of(current)
		if err != nil {
			return nil, err // as kube's scale storage returns it
		}
		fields := managedfields.NewScaleHandler(mustAccessor(current).GetManagedFields(), gv, scale.ReplicasPaths)
		if currentScale.ManagedFields, err = fields.ToSubresource(); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		currentScale.SetGroupVersionKind(scaleGVK)
		wanted, err := desiredScale(currentScale)
		if err != nil {
			return nil, err
		}
		if err := checkScaleUID(req, store, scale, current, wanted.UID, dry); err != nil {
			return nil, err
		}
		next, err := scale.WithReplicas(current, wanted.Spec.Replicas)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		entries, err := fields.ToParent(wanted.ManagedFields)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		m := mustAccessor(next)
		m.SetManagedFields(entries)
		// A resourceVersion in the Scale is a precondition on the workload.
		m.SetResourceVersion(cmp.Or(wanted.ResourceVersion, currentScale.ResourceVersion))
		return next, nil
	})
}

// scaleWrite is the request of a scale write, read into the change it
// asks of the current Scale, its managed fields tracked by fm.
type scaleWrite struct {
	w          http.ResponseWriter
	r          *http.Request
	req        *request.Info
	body       []byte
	validation string
	fm         *managedfields.FieldManager
}

// scaleChange makes the wanted Scale from the current one.
type scaleChange func(current *autoscalingv1.Scale) (*autoscalingv1.Scale, error)

// change reads the request: a Scale (PUT), an applied configuration of one
// or a patch of one. The Scale of a custom resource has no strategic merge
// patch, as its object has none.
func (s scaleWrite) change(store *registry.Store, apply applyOpts) (scaleChange, error) {
	if s.req.Verb == "update" {
		return s.put(store)
	}
	patchType, err := negotiatePatchType(s.r, store)
	if err != nil {
		return nil, err
	}
	if isApply(s.r) {
		return s.apply(apply)
	}
	return s.patch(patchType)
}

// put takes the Scale sent as the wanted one (its unknown and duplicate
// fields refused or warned of by the request's field validation), which
// the request's audit event records as kube's update handler does: under
// the workload's resource and the sub-resource.
func (s scaleWrite) put(store *registry.Store) (scaleChange, error) {
	info, err := codecs.NegotiateInput(s.r.Header.Get("Content-Type"), codecs.Factory.SupportedMediaTypes())
	if err != nil {
		return nil, err
	}
	obj, err := decodeObject(s.r.Context(), s.body, info, s.validation, scaleStore)
	if err != nil {
		return nil, err
	}
	sent, ok := obj.(*autoscalingv1.Scale)
	if !ok { // a Scale of another group the scheme knows
		return nil, decodeError(notConvertible(obj, scaleGVK), nil, "Scale", s.body)
	}
	if audit.AuditContextFrom(s.r.Context()).Enabled() {
		audit.LogRequestObject(s.r.Context(), sent, scaleGVK.GroupVersion(), store.Info.GroupVersionResource(), s.req.Subresource, codecs.Factory)
	}
	if _, err := checkScaleName(sent, s.req); err != nil {
		return nil, err
	}
	return func(current *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
		return s.tracked(current, sent.DeepCopy()), nil
	}, nil
}

// patch applies the patch to the current Scale.
func (s scaleWrite) patch(patchType types.PatchType) (scaleChange, error) {
	patch, patchStrict, err := patcher(patchType, s.body, s.validation, scaleStore)
	if err != nil {
		return nil, err
	}
	logRequestPatch(s.r, s.body)
	jsonInfo := codecs.Factory.SupportedMediaTypes()[0]
	return func(current *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
		var original bytes.Buffer
		if err := jsonInfo.Serializer.Encode(current, &original); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		patched, err := patch(original.Bytes())
		if err != nil {
			return nil, err
		}
		obj, err := decodePatched(s.r.Context(), patched, sentPatch{patchType, s.body, original.Bytes()}, jsonInfo, s.validation, scaleStore, patchStrict)
		if err != nil {
			return nil, err
		}
		wanted, err := checkScaleName(obj.(*autoscalingv1.Scale), s.req)
		if err != nil {
			return nil, err
		}
		return s.tracked(current, wanted), nil
	}, nil
}

// apply merges an applied configuration of a Scale, as an apply to any
// object: its conflicts are with the managers of the replicas.
func (s scaleWrite) apply(opts applyOpts) (scaleChange, error) {
	applied, asJSON, err := decodeApplied(s.r, s.body)
	if err != nil {
		return nil, err
	}
	logRequestPatch(s.r, asJSON)
	return func(current *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
		obj, err := s.fm.Apply(current, applied.DeepCopy(), opts.manager, opts.force)
		if err != nil {
			return nil, err
		}
		if err := checkAppliedStrictly(s.r, s.body, opts.validation); err != nil {
			return nil, err
		}
		wanted, ok := obj.(*autoscalingv1.Scale)
		if !ok {
			return nil, apierrors.NewInternalError(fmt.Errorf("an applied Scale became a %T", obj))
		}
		return checkScaleName(wanted, s.req)
	}, nil
}

// checkScaleUID holds the workload to the uid the written Scale names, as
// kube does: a replaced Scale's is its storage's precondition; a patched
// one's is its patch handler's check (of the scale sub-resource), which
// custom resources' storage leaves out.
func checkScaleUID(req *request.Info, store *registry.Store, scale *registry.Scale, current runtime.Object, uid types.UID, dryRun bool) error {
	if uid == "" || uid == mustAccessor(current).GetUID() {
		return nil
	}
	if req.Verb == "update" {
		err := (&kstorage.Preconditions{UID: &uid}).Check(store.PreconditionKey(req.Namespace, req.Name, dryRun), current)
		return apierrors.NewConflict(store.GroupResource(), req.Name, err)
	}
	if scale.UIDOnlyReplaced {
		return nil
	}
	gr := store.GroupResource()
	gr.Resource += "/scale"
	return apierrors.NewConflict(gr, req.Name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, mustAccessor(current).GetUID()))
}

// tracked records the write of wanted over current in its managed fields.
func (s scaleWrite) tracked(current, wanted *autoscalingv1.Scale) *autoscalingv1.Scale {
	wanted.SetGroupVersionKind(scaleGVK)
	return s.fm.UpdateNoErrors(current, wanted, managerName(s.r)).(*autoscalingv1.Scale)
}

// checkScaleName refuses a Scale named otherwise than the URL's object,
// or in another namespace (checked first, as kube-apiserver does).
func checkScaleName(s *autoscalingv1.Scale, req *request.Info) (*autoscalingv1.Scale, error) {
	if err := pipeline.InNamespace(s, req.Namespace); err != nil {
		return nil, err
	}
	if err := checkName(s.Name, req.Name); err != nil {
		return nil, err
	}
	return s, nil
}

// scaleStore lets the patch machinery treat Scale as a typed kind.
var scaleStore = registry.StoreOfKind(scaleGVK)

// customScaleStore describes the Scale of custom resources, printed as a
// Table as apiextensions prints it: the replicas wanted and had, and the
// age (its scale paths are required, so every custom resource's Scale
// has both columns).
var customScaleStore = registry.NewStore(&resources.Info{
	Group: scaleGVK.Group, Version: scaleGVK.Version, Kind: scaleGVK.Kind,
	PrinterColumns: []resources.PrinterColumn{
		{Name: "Desired", Type: "integer", Description: "Number of desired replicas", JSONPath: ".spec.replicas"},
		{Name: "Available", Type: "integer", Description: "Number of actual replicas", JSONPath: ".status.replicas"},
		{Name: "Age", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"], JSONPath: ".metadata.creationTimestamp"},
	},
}, nil)

// scaleStoreOf describes the Scale of store's objects.
func scaleStoreOf(store *registry.Store) *registry.Store {
	if store.Typed() {
		return scaleStore
	}
	return customScaleStore
}
