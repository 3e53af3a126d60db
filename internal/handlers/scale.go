package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
)

var scaleGVK = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// scale serves the scale sub-resource: an object's replicas as an
// autoscaling/v1 Scale, read and written through its type's Scale hook.
func (a *API) scale(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	scale := store.Backend().Hooks.Scale
	if scale == nil {
		writeError(w, r, errNoRoute)
		return
	}
	infos := codecs.Factory.SupportedMediaTypes()
	var obj runtime.Object
	var err error
	switch req.Verb {
	case "get":
		obj, err = store.Get(r.Context(), req.Namespace, req.Name)
	case "update", "patch":
		obj, err = a.writeScale(w, r, req, store, scale)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	s, err := scale.Of(obj)
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	writeObject(w, r, http.StatusOK, s, scaleGVK, infos)
}

// writeScale applies a Scale (PUT) or a patch of one (PATCH) to the
// workload's replicas.
func (a *API) writeScale(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store, scale *registry.Scale) (runtime.Object, error) {
	dry, validation, err := dryRunAndValidation(r)
	if err != nil {
		return nil, err
	}
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	desiredScale, err := scaleRequest(w, r, req, body, validation)
	if err != nil {
		return nil, err
	}
	return a.pipeline.Update(r.Context(), store, req.Namespace, req.Name, pipeline.Options{DryRun: dry, Manager: managerName(r), Subresource: req.Subresource}, func(current runtime.Object) (runtime.Object, error) {
		currentScale, err := scale.Of(current)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		wanted, err := desiredScale(currentScale)
		if err != nil {
			return nil, err
		}
		if wanted.Spec.Replicas < 0 {
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: "autoscaling", Kind: "Scale"}, req.Name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "replicas"), wanted.Spec.Replicas, "must be greater than or equal to 0"),
			})
		}
		next, err := scale.WithReplicas(current, wanted.Spec.Replicas)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		// A resourceVersion in the Scale is a precondition on the workload.
		mustAccessor(next).SetResourceVersion(wanted.ResourceVersion)
		if wanted.ResourceVersion == "" {
			mustAccessor(next).SetResourceVersion(currentScale.ResourceVersion)
		}
		return next, nil
	})
}

// scaleRequest reads the body of a scale write into a function from the
// current Scale to the wanted one.
func scaleRequest(w http.ResponseWriter, r *http.Request, req *request.Info, body []byte, validation string) (func(*autoscalingv1.Scale) (*autoscalingv1.Scale, error), error) {
	infos := codecs.Factory.SupportedMediaTypes()
	decode := func(data []byte, info runtime.SerializerInfo) (*autoscalingv1.Scale, error) {
		s := &autoscalingv1.Scale{}
		if _, _, err := info.Serializer.Decode(data, &scaleGVK, s); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("Scale in version \"v1\" cannot be handled as a Scale: %v", decodeErrorText(err)))
		}
		return checkScaleName(s, req)
	}
	if req.Verb == "update" {
		info, err := codecs.NegotiateInput(r.Header.Get("Content-Type"), infos)
		if err != nil {
			return nil, err
		}
		s, err := decode(body, info)
		if err != nil {
			return nil, err
		}
		return func(*autoscalingv1.Scale) (*autoscalingv1.Scale, error) { return s, nil }, nil
	}
	patchType, err := negotiatePatchType(r, scaleStore)
	if err != nil {
		return nil, err
	}
	if !json.Valid(body) {
		return nil, apierrors.NewBadRequest("invalid JSON patch")
	}
	apply, patchStrict, err := patcher(patchType, body, validation, scaleStore)
	if err != nil {
		return nil, err
	}
	return func(current *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
		var original bytes.Buffer
		current.SetGroupVersionKind(scaleGVK)
		if err := infos[0].Serializer.Encode(current, &original); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		patched, err := apply(original.Bytes())
		if err != nil {
			return nil, err
		}
		obj, err := decodePatched(w, patched, patchValue(patchType, patched, body), infos[0], validation, scaleStore, patchStrict)
		if err != nil {
			return nil, err
		}
		return checkScaleName(obj.(*autoscalingv1.Scale), req)
	}, nil
}

// checkScaleName refuses a Scale named otherwise than the URL's object.
func checkScaleName(s *autoscalingv1.Scale, req *request.Info) (*autoscalingv1.Scale, error) {
	if s.Name != req.Name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", s.Name, req.Name))
	}
	return s, nil
}

// scaleStore lets the patch machinery treat Scale as a typed kind.
var scaleStore = registry.StoreOfKind(scaleGVK)
