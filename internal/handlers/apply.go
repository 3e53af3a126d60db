package handlers

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
)

const (
	applyYAMLType = "application/apply-patch+yaml"
	applyCBORType = "application/apply-patch+cbor"
)

// isApply reports whether a PATCH is a server-side apply.
func isApply(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == applyYAMLType || mt == applyCBORType
}

// apply merges an applied configuration into the object, creating it if
// it does not exist, with the field ownership of server-side apply (SPEC
// U3): conflicts with other managers are 409 unless force is set.
func (a *API) apply(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	opts, err := applyOptions(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	logRequestPatch(r, body)
	applied, err := decodeApplied(w, r, body, opts.validation, store, req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	fm, err := a.pipeline.FieldManager(store.Info, req.Subresource)
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	merge := func(live runtime.Object) (runtime.Object, error) {
		live.GetObjectKind().SetGroupVersionKind(store.Info.GroupVersionKind())
		obj, err := fm.Apply(live, applied.DeepCopy(), opts.manager, opts.force)
		if err != nil {
			return nil, applyError(err)
		}
		return obj, nil
	}
	for attempt := 0; ; attempt++ {
		obj, code, err := a.applyOnce(r.Context(), req, store, opts.dry, merge)
		if apierrors.IsAlreadyExists(err) && attempt == 0 {
			continue // created in between: apply to it
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeObject(w, r, code, obj, store.Info.GroupVersionKind(), store.Serializers())
		return
	}
}

// applyOnce applies to the current object, or creates it from an empty one.
func (a *API) applyOnce(ctx context.Context, req *request.Info, store *registry.Store, dry bool, merge registry.UpdateFunc) (runtime.Object, int, error) {
	_, err := store.Get(ctx, req.Namespace, req.Name)
	if apierrors.IsNotFound(err) && req.Subresource == "" {
		live := store.New()
		m := mustAccessor(live)
		m.SetName(req.Name)
		if err := matchNamespace(m, req, store); err != nil {
			return nil, 0, err
		}
		obj, err := merge(live)
		if err != nil {
			return nil, 0, err
		}
		created, err := a.pipeline.Create(ctx, store, obj, pipeline.Options{DryRun: dry, Subresource: req.Subresource})
		return created, http.StatusCreated, err
	}
	if err != nil {
		return nil, 0, err
	}
	updated, err := a.pipeline.Update(ctx, store, req.Namespace, req.Name, pipeline.Options{DryRun: dry, Subresource: req.Subresource}, merge)
	return updated, http.StatusOK, err
}

type applyOpts struct {
	dry        bool
	force      bool
	manager    string
	validation string
}

func applyOptions(r *http.Request) (applyOpts, error) {
	dry, validation, err := dryRunAndValidation(r)
	if err != nil {
		return applyOpts{}, err
	}
	q := r.URL.Query()
	opts := applyOpts{dry: dry, validation: validation, manager: q.Get("fieldManager"), force: q.Get("force") == "true"}
	if opts.manager == "" {
		return opts, optionsInvalid(r, field.Required(field.NewPath("fieldManager"), "is required for apply patch"))
	}
	return opts, nil
}

// decodeApplied reads an applied configuration (YAML or CBOR) and checks
// that it is for the object of the URL.
func decodeApplied(w http.ResponseWriter, r *http.Request, body []byte, validation string, store *registry.Store, req *request.Info) (*unstructured.Unstructured, error) {
	applied := &unstructured.Unstructured{Object: map[string]interface{}{}}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == applyCBORType {
		info, _ := runtime.SerializerInfoForMediaType(codecs.UnstructuredSerializers, runtime.ContentTypeCBOR)
		if _, _, err := info.Serializer.Decode(body, nil, applied); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding CBOR: %v", err))
		}
	} else {
		if err := yaml.Unmarshal(body, &applied.Object); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
		}
		if validation != metav1.FieldValidationIgnore {
			if err := yaml.UnmarshalStrict(body, &map[string]interface{}{}); err != nil {
				if validation == metav1.FieldValidationStrict {
					return nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding YAML: %v", err))
				}
				addWarning(w, err.Error())
			}
		}
	}
	if applied.Object == nil {
		return nil, apierrors.NewBadRequest("the applied configuration is empty")
	}
	gvk := store.Info.GroupVersionKind()
	if got := applied.GroupVersionKind(); got != gvk {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s), or the kind (%s) does not match (%s)",
			got.GroupVersion(), gvk.GroupVersion(), got.Kind, gvk.Kind))
	}
	if applied.GetName() != req.Name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", applied.GetName(), req.Name))
	}
	if ns := applied.GetNamespace(); ns != "" && store.Info.Namespaced && ns != req.Namespace {
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return applied, nil
}

// applyError keeps the Status of conflicts and turns a configuration that
// does not fit the type's schema into a 400 (kube-apiserver answers some of
// these with a 500).
func applyError(err error) error {
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	msg := err.Error()
	if strings.Contains(msg, "not declared in schema") || strings.Contains(msg, "failed to create typed") {
		return apierrors.NewBadRequest(msg)
	}
	return apierrors.NewInternalError(err)
}
