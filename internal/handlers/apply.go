package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	cbordirect "k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

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
	mt := patchContentType(r)
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
	applied, asJSON, err := decodeApplied(r, body)
	if err != nil {
		writeError(w, r, err)
		return
	}
	logRequestPatch(r, asJSON)
	fm, err := a.pipeline.FieldManager(store.Info, req.Subresource)
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	merge := func(live runtime.Object) (runtime.Object, error) {
		live.GetObjectKind().SetGroupVersionKind(store.Info.GroupVersionKind())
		obj, err := fm.Apply(live, applied.DeepCopy(), opts.manager, opts.force)
		if err != nil {
			return nil, err
		}
		return obj, checkAppliedStrictly(r, body, opts.validation)
	}
	for attempt := 0; ; attempt++ {
		obj, code, err := a.applyOnce(r.Context(), req, store, pipeline.Options{DryRun: opts.dry, Subresource: req.Subresource, Asked: asked(r)}, merge, func() error { return a.authorizeCreate(r, req, store) })
		if apierrors.IsAlreadyExists(err) && attempt == 0 {
			continue // created in between: apply to it
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeResult(w, r, code, obj, store)
		return
	}
}

// applyOnce applies (merge) to the current object, or creates it from an
// empty one if the user may create it (mayCreate, checked where
// kube-apiserver checks it: once the merged object is found valid). The
// merged object must be the URL's (checkApplied); a created one must name
// no UID, which kube checks first.
func (a *API) applyOnce(ctx context.Context, req *request.Info, store *registry.Store, write pipeline.Options, merge registry.UpdateFunc, mayCreate func() error) (runtime.Object, int, error) {
	_, err := store.Get(ctx, req.Namespace, req.Name)
	if apierrors.IsNotFound(err) && req.Subresource == "" {
		obj, err := merge(store.New())
		if err != nil {
			return nil, 0, err
		}
		// A create by apply ignores a resourceVersion the configuration
		// sets, as kube-apiserver's create through an update does, but not
		// a UID, which names an object that is not there.
		m := mustAccessor(obj)
		if uid := m.GetUID(); uid != "" {
			return nil, 0, apierrors.NewConflict(store.GroupResource(), req.Name,
				fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", uid))
		}
		if err := checkApplied(obj, req, store); err != nil {
			return nil, 0, err
		}
		m.SetResourceVersion("")
		write.MayCreate = mayCreate
		created, err := a.pipeline.Create(ctx, store, obj, write)
		return created, http.StatusCreated, err
	}
	if err != nil {
		return nil, 0, err
	}
	updated, err := a.pipeline.Update(ctx, store, req.Namespace, req.Name, write, func(live runtime.Object) (runtime.Object, error) {
		obj, err := merge(live)
		if err != nil {
			return nil, err
		}
		return obj, checkApplied(obj, req, store)
	})
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
	opts := applyOpts{dry: dry, validation: validation, manager: q.Get("fieldManager"), force: queryTrue(q["force"])}
	if opts.manager == "" {
		return opts, optionsInvalid(r, field.Required(field.NewPath("fieldManager"), "is required for apply patch"))
	}
	return opts, nil
}

// decodeApplied reads an applied configuration (YAML or CBOR), integers
// as int64, as kube-apiserver reads it. Its kind is checked by the field
// manager, its name and namespace once it is merged (checkApplied).
func decodeApplied(r *http.Request, body []byte) (applied *unstructured.Unstructured, asJSON []byte, err error) {
	applied = &unstructured.Unstructured{Object: map[string]interface{}{}}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == applyCBORType {
		if err := cbordirect.Unmarshal(body, &applied.Object); err != nil {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		if applied.Object == nil {
			applied.Object = map[string]interface{}{}
		}
		asJSON, err := json.Marshal(applied.Object)
		if err != nil {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error encoding patch: %v", err))
		}
		return applied, asJSON, nil
	}
	// kube-apiserver first turns the configuration into JSON, which its
	// audit events carry.
	asJSON, err = utilyaml.ToJSON(body)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error encoding patch: %v", err))
	}
	if err := utilyaml.Unmarshal(body, &applied.Object); err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	if applied.Object == nil {
		applied.Object = map[string]interface{}{}
	}
	return applied, asJSON, nil
}

// checkAppliedStrictly reports the duplicate keys of an applied YAML
// configuration: an error with the Strict validation, warnings with Warn.
// As kube-apiserver, it runs after the merge, whose errors come first.
func checkAppliedStrictly(r *http.Request, body []byte, validation string) error {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != applyYAMLType || validation == metav1.FieldValidationIgnore {
		return nil
	}
	err := utilyaml.UnmarshalStrict(body, &map[string]interface{}{})
	if err == nil {
		return nil
	}
	if validation == metav1.FieldValidationStrict {
		return apierrors.NewBadRequest(fmt.Sprintf("error strict decoding patch: %v", err))
	}
	for _, msg := range yamlStrictMessages(err.Error()) {
		addWarning(r.Context(), msg)
	}
	return nil
}

// checkApplied checks that a merged object is the one of the URL: its
// namespace (where the resource has one) and its name, which an applied
// configuration may leave out when the object exists.
func checkApplied(obj runtime.Object, req *request.Info, store *registry.Store) error {
	m := mustAccessor(obj)
	if err := matchNamespace(m, req, store); err != nil {
		return err
	}
	return checkName(m.GetName(), req.Name)
}

// queryTrue is a boolean query parameter as kube-apiserver's parameter
// codec reads it: absent, "0" or "false" (in any case) is false, any
// other value (True, 1, an empty one) true; the first value counts.
func queryTrue(values []string) bool {
	return len(values) > 0 && values[0] != "0" && !strings.EqualFold(values[0], "false")
}
