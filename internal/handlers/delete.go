package handlers

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
)

func (a *API) delete(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	opts, dry, err := deleteOptions(r, store)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if ptr.Deref(opts.IgnoreStoreReadErrorWithClusterBreakingPotential, false) {
		a.deleteCorrupt(w, r, req, store, dry)
		return
	}
	obj, gone, err := a.pipeline.Delete(r.Context(), store, req.Namespace, req.Name, opts, pipeline.Options{DryRun: dry})
	if err != nil {
		writeError(w, r, err)
		return
	}
	a.writeDeleted(w, r, store, obj, gone, opts)
}

// deleteCorrupt deletes an object that cannot be decoded, and answers as
// kube-apiserver does when it has no object to return.
func (a *API) deleteCorrupt(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store, dry bool) {
	if err := a.authorizeUnsafeDelete(r, req, store); err != nil {
		writeError(w, r, err)
		return
	}
	if err := a.pipeline.DeleteCorrupt(r.Context(), store, req.Namespace, req.Name, dry); err != nil {
		writeError(w, r, err)
		return
	}
	status := &metav1.Status{
		Status: metav1.StatusSuccess, Code: http.StatusOK,
		Details: &metav1.StatusDetails{Name: req.Name, Kind: store.Info.Kind},
	}
	writeObject(w, r, http.StatusOK, status, statusGVK, codecs.Factory.SupportedMediaTypes())
}

// unsafeDeleteVerb is the permission an unsafe deletion needs besides
// delete, as in kube-apiserver.
const unsafeDeleteVerb = "unsafe-delete-ignore-read-errors"

// authorizeUnsafeDelete checks that the user may delete objects of the
// resource without reading them.
func (a *API) authorizeUnsafeDelete(r *http.Request, req *request.Info, store *registry.Store) error {
	if a.opts.Authorizer == nil {
		return nil
	}
	u, _ := genericapirequest.UserFrom(r.Context())
	attrs := authorizer.AttributesRecord{
		User: u, Verb: unsafeDeleteVerb, Namespace: req.Namespace, Name: req.Name,
		APIGroup: req.Group, APIVersion: req.Version, Resource: req.Resource, ResourceRequest: true,
	}
	decision, reason, err := a.opts.Authorizer.Authorize(r.Context(), attrs)
	switch {
	case err != nil:
		return apierrors.NewForbidden(store.GroupResource(), req.Name, fmt.Errorf("error while checking permission for %q, %w", unsafeDeleteVerb, err))
	case decision != authorizer.DecisionAllow:
		return apierrors.NewForbidden(store.GroupResource(), req.Name, fmt.Errorf("not permitted to do %q, reason: %s", unsafeDeleteVerb, reason))
	}
	return nil
}

// authorizeCreate checks that the user of a write that turns into a
// create (a PUT or an apply of an object that does not exist) may create
// it, as kube-apiserver checks before such a create: the request itself
// was authorized as an update or a patch.
func (a *API) authorizeCreate(r *http.Request, req *request.Info, store *registry.Store) error {
	if a.opts.Authorizer == nil {
		return nil
	}
	u, _ := genericapirequest.UserFrom(r.Context())
	attrs := authorizer.AttributesRecord{
		User: u, Verb: "create", Namespace: req.Namespace, Name: req.Name, Path: r.URL.Path,
		APIGroup: req.Group, APIVersion: req.Version, Resource: req.Resource, Subresource: req.Subresource, ResourceRequest: true,
	}
	decision, reason, err := a.opts.Authorizer.Authorize(r.Context(), attrs)
	switch {
	case decision == authorizer.DecisionAllow:
		return nil
	case err != nil:
		return apierrors.NewInternalError(err)
	}
	return responsewriters.ForbiddenStatusError(attrs, reason)
}

// writeDeleted answers a delete with the object or a success Status by
// resource. Like kube-apiserver, it answers 202 only when the object is
// kept and the client asked for cascading deletion with
// orphanDependents=false; 200 otherwise.
func (a *API) writeDeleted(w http.ResponseWriter, r *http.Request, store *registry.Store, obj runtime.Object, gone bool, opts *metav1.DeleteOptions) {
	code := http.StatusOK
	//nolint:staticcheck // orphanDependents is deprecated but still decides the code
	if !gone && opts.OrphanDependents != nil && !*opts.OrphanDependents {
		code = http.StatusAccepted
	}
	if store.Info.ReturnsDeletedObject || !gone {
		writeResult(w, r, code, obj, store)
		return
	}
	m := mustAccessor(obj)
	status := &metav1.Status{
		Status: metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name: m.GetName(), Group: store.Info.Group, Kind: store.Info.Resource, UID: m.GetUID(),
		},
	}
	// A Status goes as it is, whatever conversion the client asked for.
	target, err := negotiateRead(r, store.Serializers(), "get")
	if err != nil {
		writeError(w, r, err)
		return
	}
	logResponse(r, status, statusGVK.GroupVersion())
	writeEncoded(w, r, code, status, statusGVK, target.info)
}

// deleteOptions reads DeleteOptions from the body, if any, and the query,
// and validates them as kube-apiserver does; options from a body are the
// audit event's request object. Without the
// AllowUnsafeMalformedObjectDeletion feature,
// ignoreStoreReadErrorWithClusterBreakingPotential is ignored.
func deleteOptions(r *http.Request, store *registry.Store) (*metav1.DeleteOptions, bool, error) {
	opts := &metav1.DeleteOptions{}
	data, err := readBody(r)
	if err != nil {
		return nil, false, err
	}
	if len(data) > 0 {
		// Decoded as kube-apiserver decodes it, by the codecs of the meta
		// types, to which DeleteOptions of any group or version are one
		// kind: audit records it in the version the decoder gave it
		// (meta.k8s.io/__internal). CBOR too, as kapi serves it.
		metaCodecs := codecs.MetaInternalFactory
		info, err := codecs.NegotiateInput(r.Header.Get("Content-Type"), metaCodecs.SupportedMediaTypes())
		if err != nil {
			return nil, false, err
		}
		defaultGVK := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
		obj, gvk, err := metaCodecs.DecoderToVersion(info.Serializer, defaultGVK.GroupVersion()).Decode(data, &defaultGVK, opts)
		if err != nil {
			return nil, false, apierrors.NewBadRequest(err.Error())
		}
		if obj != opts {
			return nil, false, apierrors.NewBadRequest("decoded object cannot be converted to DeleteOptions")
		}
		audit.LogRequestObject(r.Context(), obj, gvk.GroupVersion(), store.Info.GroupVersionResource(), subresourceOf(r), metaCodecs)
	} else if err := codecs.ParameterCodec.DecodeParameters(r.URL.Query(), coreV1, opts); err != nil {
		// As kube-apiserver, the query is read only without a body.
		return nil, false, apierrors.NewBadRequest(err.Error())
	}
	if !utilfeature.DefaultFeatureGate.Enabled(features.AllowUnsafeMalformedObjectDeletion) {
		opts.IgnoreStoreReadErrorWithClusterBreakingPotential = nil
	}
	dry, err := checkDryRun(r, opts.DryRun) // from the body or the query
	if err != nil {
		return nil, false, err
	}
	if errs := metav1validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, false, apierrors.NewInvalid(deleteOptionsKind, "", errs)
	}
	return opts, dry, nil
}

// deleteCollection deletes the objects a list with the request's options
// would answer (with a limit, only that page, as kube-apiserver) and
// answers that list.
func (a *API) deleteCollection(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	// The answer's representation first: one the client cannot take
	// refuses the request before anything is deleted.
	target, err := negotiateRead(r, store.Serializers(), "list")
	if err != nil {
		writeError(w, r, err)
		return
	}
	// The list's options are read before the delete's, as kube-apiserver
	// reads them: a request with both wrong gets the list's error.
	listOpts, err := listOptions(r, req, store)
	if err != nil {
		writeError(w, r, err)
		return
	}
	opts, dry, err := deleteOptions(r, store)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if ptr.Deref(opts.IgnoreStoreReadErrorWithClusterBreakingPotential, false) {
		writeError(w, r, apierrors.NewInvalid(deleteOptionsKind, "", field.ErrorList{field.Invalid(
			field.NewPath("ignoreStoreReadErrorWithClusterBreakingPotential"), true,
			"is not allowed with DELETECOLLECTION, try again after removing the option")}))
		return
	}
	listReq, err := listRequest(req, store, listOpts)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if listOpts.Limit <= 0 && listOpts.ResourceVersionMatch == "" && listReq.Consistency == cache.NotOlderThan {
		// kube-apiserver lists what it deletes in pages (of 10,000
		// without a limit), and a paged list at a version reads exactly
		// it.
		listReq.Consistency = cache.Exact
	}
	pipeline.WarnOfDelete(r.Context(), store, opts)
	res, err := store.Backend().Cache.List(r.Context(), listReq)
	if err != nil {
		writeError(w, r, cacheError(err))
		return
	}
	for _, item := range res.Items {
		m := mustAccessor(item)
		if _, _, err := a.pipeline.Delete(r.Context(), store, m.GetNamespace(), m.GetName(), opts, pipeline.Options{DryRun: dry, InCollection: true}); err != nil && !apierrors.IsNotFound(err) {
			writeError(w, r, err)
			return
		}
	}
	// The list of what was deleted, as it was before. A namespace's pods
	// deleted together are a list as large as any: spliced from their
	// encodings (the namespace deleter's list made them), and not kept
	// compressed, as nothing lists deleted objects again.
	a.writeList(w, r, store, target, res, false)
}

var deleteOptionsKind = schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}

// coreV1 is the group-version whose query-parameter conversions every
// option type has.
var coreV1 = schema.GroupVersion{Version: "v1"}
