package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
)

// maxJSONPatchOperations bounds a JSON patch, as in kube-apiserver.
const maxJSONPatchOperations = 10000

// maxJSONPatchCopyBytes bounds what a JSON patch's copy operations copy
// in all, as kube-apiserver's default does.
const maxJSONPatchCopyBytes = 3 << 20

// limitJSONPatchCopies sets the JSON patch library's limit, a variable
// of the process as in kube-apiserver, unless something set one already.
func limitJSONPatchCopies() {
	atomic.CompareAndSwapInt64(&jsonpatch.AccumulatedCopySizeLimit, 0, maxJSONPatchCopyBytes)
}

// patchTypes lists the patch types a resource accepts: strategic merge
// needs a Go type with patch strategies, so custom resources lack it.
func patchTypes(store *registry.Store) []string {
	if store.Typed() {
		return []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.StrategicMergePatchType), applyYAMLType, applyCBORType}
	}
	return []string{string(types.JSONPatchType), string(types.MergePatchType), applyYAMLType, applyCBORType}
}

// patch applies a JSON, merge or strategic merge patch to the current
// object and stores the result through the update strategy (SPEC U2).
func (a *API) patch(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	if isApply(r) {
		a.apply(w, r, req, store)
		return
	}
	if r.URL.Query().Has("force") { // any value, false too, as kube decodes it
		writeError(w, r, optionsInvalid(r, field.Forbidden(field.NewPath("force"), "may not be specified for non-apply patch")))
		return
	}
	dry, validation, err := dryRunAndValidation(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	patchType, err := negotiatePatchType(r, store)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	apply, patchStrict, err := patcher(patchType, body, validation, store)
	if err == nil {
		logRequestPatch(r, body)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	jsonInfo := store.Serializers()[0]
	updated, err := a.pipeline.Update(r.Context(), store, req.Namespace, req.Name, pipeline.Options{DryRun: dry, Manager: managerName(r), Subresource: req.Subresource, Asked: asked(r)}, func(current runtime.Object) (runtime.Object, error) {
		var original bytes.Buffer
		if err := jsonInfo.Serializer.Encode(current, &original); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		patched, err := apply(original.Bytes())
		if err != nil {
			return nil, err
		}
		obj, err := decodePatched(r.Context(), patched, sentPatch{patchType, body, original.Bytes()}, jsonInfo, validation, store, patchStrict)
		if err != nil {
			return nil, err
		}
		m := mustAccessor(obj)
		if err := matchNamespace(m, req, store); err != nil {
			return nil, err
		}
		return obj, checkName(m.GetName(), req.Name)
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeResult(w, r, http.StatusOK, updated, store)
}

func negotiatePatchType(r *http.Request, store *registry.Store) (types.PatchType, error) {
	supported := patchTypes(store)
	mt := patchContentType(r)
	if slices.Contains(supported, mt) {
		return types.PatchType(mt), nil
	}
	if store.Typed() && !routeConsumes(r.Header.Get("Content-Type"), supported) {
		// A built-in resource's PATCH route refuses what it does not
		// consume before its handler reads the patch type.
		return "", codecs.UnsupportedMediaTypeAtRoute()
	}
	return "", unsupportedPatch(supported)
}

// patchContentType is a patch's media type as kube-apiserver reads it:
// what comes before the first ';', as sent (no case folding, no
// trimming).
func patchContentType(r *http.Request) string {
	mt := r.Header.Get("Content-Type")
	if i := strings.Index(mt, ";"); i > 0 {
		mt = mt[:i]
	}
	return mt
}

// routeConsumes tells whether kube-apiserver's route of a patch takes a
// Content-Type: one of its comma-separated types, without parameters and
// surrounding spaces, is a patch type (compared as sent).
func routeConsumes(contentType string, supported []string) bool {
	for _, each := range strings.Split(contentType, ",") {
		mt, _, _ := strings.Cut(each, ";")
		if slices.Contains(supported, strings.Trim(mt, " ")) {
			return true
		}
	}
	return false
}

func unsupportedPatch(supported []string) error {
	return codecs.UnsupportedMediaType(supported)
}

// jsonPatchOp is one operation of a JSON patch, as kube-apiserver reads
// it to report its duplicate and unknown fields (and names it, as
// handlers.jsonPatchOp, in the error of a patch that is not a list).
type jsonPatchOp struct {
	Op    string      `json:"op"`
	Path  string      `json:"path"`
	From  string      `json:"from"`
	Value interface{} `json:"value"`
}

// patcher checks the patch body and returns the function that applies it
// to an object's JSON, and the patch's own duplicate or unknown fields,
// which the Strict and Warn validations report with the patched
// object's.
func patcher(patchType types.PatchType, body []byte, validation string, store *registry.Store) (func([]byte) ([]byte, error), []error, error) {
	if !json.Valid(body) {
		return nil, nil, apierrors.NewBadRequest("invalid JSON patch")
	}
	strict := validation != metav1.FieldValidationIgnore
	switch patchType {
	case types.JSONPatchType:
		var strictErrs []error
		if strict {
			var v []jsonPatchOp
			errs, err := kjson.UnmarshalStrict(body, &v)
			if err != nil {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
			for _, e := range errs {
				strictErrs = append(strictErrs, fmt.Errorf("json patch %v", e))
			}
		}
		ops, err := jsonpatch.DecodePatch(body)
		if err != nil {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
		if len(ops) > maxJSONPatchOperations {
			return nil, nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
				"The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(ops)))
		}
		return func(original []byte) ([]byte, error) {
			patched, err := ops.Apply(original)
			if err != nil {
				return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
			}
			return patched, nil
		}, strictErrs, nil
	case types.MergePatchType:
		var strictErrs []error
		if strict {
			var err error
			if strictErrs, err = kjson.UnmarshalStrict(body, &map[string]interface{}{}); err != nil {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
		}
		return func(original []byte) ([]byte, error) {
			patched, err := jsonpatch.MergePatch(original, body)
			if err == jsonpatch.ErrBadJSONPatch {
				return nil, apierrors.NewBadRequest(err.Error())
			}
			return patched, err
		}, strictErrs, nil
	case applyYAMLType, applyCBORType:
		return nil, nil, apierrors.NewBadRequest("server-side apply is not supported on this sub-resource")
	default: // strategic merge
		var strictErrs []error
		if strict {
			var err error
			if strictErrs, err = kjson.UnmarshalStrict(body, &map[string]interface{}{}); err != nil {
				return nil, nil, apierrors.NewBadRequest(err.Error())
			}
		}
		schemaObj := store.New()
		setsTypeMeta := setsTypeMeta(body)
		return func(original []byte) ([]byte, error) {
			patched, err := strategicpatch.StrategicMergePatch(original, body, schemaObj)
			if err != nil {
				return nil, strategicMergeError(err)
			}
			if setsTypeMeta {
				return withTypeMetaOf(original, patched)
			}
			return patched, nil
		}, strictErrs, nil
	}
}

// setsTypeMeta tells whether a strategic merge patch names an apiVersion
// or kind.
func setsTypeMeta(patch []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(patch, &top) != nil {
		return false
	}
	_, apiVersion := top["apiVersion"]
	_, kind := top["kind"]
	return apiVersion || kind
}

// withTypeMetaOf gives patched the apiVersion and kind of original:
// kube-apiserver applies a strategic merge patch to the object's fields
// and converts the result back to the object's type, so that what the
// patch says of either is dropped, not refused.
func withTypeMetaOf(original, patched []byte) ([]byte, error) {
	var from, to map[string]json.RawMessage
	if err := json.Unmarshal(original, &from); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(patched, &to); err != nil {
		return nil, err
	}
	for _, key := range []string{"apiVersion", "kind"} {
		if v, ok := from[key]; ok {
			to[key] = v
		} else {
			delete(to, key)
		}
	}
	return json.Marshal(to)
}

// strategicMergeError maps strategic merge errors as kube-apiserver does:
// those it does not classify are its plain 500s, with the error's text.
func strategicMergeError(err error) error {
	switch err {
	case mergepatch.ErrBadJSONDoc, mergepatch.ErrBadPatchFormatForPrimitiveList, mergepatch.ErrBadPatchFormatForRetainKeys,
		mergepatch.ErrBadPatchFormatForSetElementOrderList, mergepatch.ErrUnsupportedStrategicMergePatchFormat:
		return apierrors.NewBadRequest(err.Error())
	case mergepatch.ErrNoListOfLists, mergepatch.ErrPatchContentNotMatchRetainKeys:
		return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	return err
}

// sentPatch is a patch as the client sent it, and the object's JSON it
// was applied to.
type sentPatch struct {
	typ      types.PatchType
	body     []byte
	original []byte
}

// value is what kube-apiserver shows as the value of a patch it refuses
// after applying it: the patched object's JSON, or for a strategic merge
// patch the patch itself as a Go map, as the merge left it (kube's merge
// takes its directives, $setElementOrder and $retainKeys, and the lists
// they order out of the patch's map it then shows).
func (p sentPatch) value(patched []byte, store *registry.Store) string {
	if p.typ != types.StrategicMergePatchType {
		return string(patched)
	}
	var m map[string]interface{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(p.body, &m); err != nil {
		return string(p.body)
	}
	var original map[string]interface{}
	if kjson.UnmarshalCaseSensitivePreserveInts(p.original, &original) == nil {
		strategicpatch.StrategicMergeMapPatch(original, m, store.New()) // for what it does to m
	}
	return fmt.Sprintf("%+v", m)
}

// decodeFailure is why the patched object does not decode, in
// kube-apiserver's words: a strategic merge patch of a built-in kind is
// converted from its map form, whose converter says why.
func (p sentPatch) decodeFailure(patched []byte, store *registry.Store, err error) string {
	if p.typ != types.StrategicMergePatchType || !store.Typed() {
		return err.Error()
	}
	var m map[string]interface{}
	if kjson.UnmarshalCaseSensitivePreserveInts(patched, &m) != nil {
		return err.Error()
	}
	if cerr := runtime.DefaultUnstructuredConverter.FromUnstructured(m, store.New()); cerr != nil {
		return cerr.Error()
	}
	return err.Error()
}

func truncate(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}
