package handlers

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit"
	requestmetrics "k8s.io/apiserver/pkg/endpoints/handlers/metrics"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
)

// maxBodyBytes is kube-apiserver's limit on a request body.
const maxBodyBytes = 3 * 1024 * 1024

// exactBodyBytes bounds the bodies read into memory of their declared
// length.
const exactBodyBytes = 64 * 1024

// readBody reads the whole request body within the size limit, and
// records its size in kube-apiserver's apiserver_request_body_size_bytes.
func readBody(r *http.Request) ([]byte, error) {
	data, err := readWithinLimit(r)
	if err == nil {
		recordBodySize(r, len(data))
	}
	return data, err
}

// bodyVerbs are kube-apiserver's verb labels of body sizes, by method.
var bodyVerbs = map[string]requestmetrics.RequestBodyVerb{
	http.MethodPost: requestmetrics.Create, http.MethodPut: requestmetrics.Update,
	http.MethodPatch: requestmetrics.Patch, http.MethodDelete: requestmetrics.Delete,
}

// recordBodySize records a body read, under the resource addressed (a
// sub-resource's body under its resource, as kube records it).
func recordBodySize(r *http.Request, size int) {
	req, ok := request.From(r.Context())
	if !ok {
		req = request.Parse(r)
	}
	verb := bodyVerbs[r.Method]
	if req.Verb == "deletecollection" {
		verb = requestmetrics.DeleteCollection
	}
	requestmetrics.RecordRequestBodySize(r.Context(), schema.GroupResource{Group: req.Group, Resource: req.Resource}, verb, size)
}

// readWithinLimit reads the whole request body within the size limit.
func readWithinLimit(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= exactBodyBytes {
		// Read at its declared size at once, instead of growing a buffer
		// by doubling: the server refuses a body longer than declared.
		// Only for a small one: a client declaring megabytes and sending
		// them slowly would hold that memory from the start.
		// A body that cannot be read (shorter than declared, badly
		// chunked) is kube-apiserver's 500 with the error's own text.
		data := make([]byte, n)
		if _, err := io.ReadFull(r.Body, data); err != nil {
			return nil, err
		}
		return data, nil
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", maxBodyBytes))
	}
	return data, nil
}

// fieldValidation reads the fieldValidation option (Warn by default).
func fieldValidation(r *http.Request) (string, error) {
	v := r.URL.Query().Get("fieldValidation")
	switch v {
	case "":
		return metav1.FieldValidationWarn, nil
	case metav1.FieldValidationIgnore, metav1.FieldValidationWarn, metav1.FieldValidationStrict:
		return v, nil
	}
	return "", optionsInvalid(r, metav1validation.ValidateFieldValidation(field.NewPath("fieldValidation"), v)...)
}

// decodeBody reads the request body into a new object of the store's kind.
// Unknown and duplicate fields are dropped, reported as warnings or refused
// according to fieldValidation.
func decodeBody(w http.ResponseWriter, r *http.Request, store *registry.Store) (runtime.Object, error) {
	return decodeBodyAccepting(w, r, store, nil)
}

// decodeBodyAccepting is decodeBody for a body that may also be of the
// store's kind in one of the group-versions accepts (an Eviction of
// policy/v1beta1 to pods/eviction), converted to the store's.
func decodeBodyAccepting(w http.ResponseWriter, r *http.Request, store *registry.Store, accepts []schema.GroupVersion) (runtime.Object, error) {
	validation, err := fieldValidation(r)
	if err != nil {
		return nil, err
	}
	infos := store.Serializers()
	info, err := codecs.NegotiateInput(r.Header.Get("Content-Type"), infos)
	if err != nil {
		return nil, err
	}
	data, err := readBody(r)
	if err != nil {
		return nil, err
	}
	obj, err := decodeObject(r.Context(), data, info, validation, store, accepts...)
	if err == nil {
		logRequestObject(r, store, obj)
	}
	return obj, err
}

// logRequestObject records a decoded body in the request's audit event.
// kube-apiserver's decoder sets a body's defaults before audit records
// it; kapi's write sets them later, so a request audited with its body
// records a copy with its defaults set.
func logRequestObject(r *http.Request, store *registry.Store, obj runtime.Object) {
	ctx := r.Context()
	ac := audit.AuditContextFrom(ctx)
	if !ac.Enabled() {
		return
	}
	if !ac.GetEventLevel().Less(auditinternal.LevelRequest) {
		obj = obj.DeepCopyObject()
		store.Default(obj)
	}
	audit.LogRequestObject(ctx, obj, store.Info.GroupVersionKind().GroupVersion(),
		store.Info.GroupVersionResource(), subresourceOf(r), codecs.Factory)
}

// subresourceOf is the sub-resource a request addresses, as audit records
// it.
func subresourceOf(r *http.Request) string {
	if req, ok := request.From(r.Context()); ok {
		return req.Subresource
	}
	return ""
}

// logRequestPatch records a patch in the request's audit event, if it has
// one.
func logRequestPatch(r *http.Request, patch []byte) {
	if audit.AuditContextFrom(r.Context()).Enabled() {
		audit.LogRequestPatch(r.Context(), patch)
	}
}

// decodeObject decodes a request body into a new object of the store's
// kind, handling unknown and duplicate fields according to validation.
func decodeObject(ctx context.Context, data []byte, info runtime.SerializerInfo, validation string, store *registry.Store, accepts ...schema.GroupVersion) (runtime.Object, error) {
	obj, actual, strictErr, err := decodeStrict(data, info, validation, store, accepts...)
	if err != nil && runtime.IsNotRegisteredError(err) && actual != nil {
		err = kubeOnlyVersion(*actual, store, err)
	}
	if err == nil && strictErr != nil && validation == metav1.FieldValidationStrict {
		err = strictErr
	}
	if _, isStatus := err.(apierrors.APIStatus); err != nil && !isStatus {
		err = decodeError(err, actual, store.Info.Kind, data)
	}
	if err != nil {
		return nil, err
	}
	warnStrict(ctx, strictErr)
	return obj, nil
}

// kubeOnlyVersion answers for a body of a version kapi does not serve but
// kube-apiserver's scheme still knows (extensions/v1beta1, apps/v1beta2,
// ...), as kube-apiserver, which decodes it before it looks at the
// version: a body of another kind does not convert, one of the kind is of
// the wrong version. Other unknown versions keep err.
func kubeOnlyVersion(actual schema.GroupVersionKind, store *registry.Store, err error) error {
	if !legacyscheme.Scheme.Recognizes(actual) {
		return err
	}
	want := store.Info.GroupVersionKind()
	if actual.Kind != want.Kind && store.Typed() {
		obj, _ := legacyscheme.Scheme.New(actual)
		return notConvertible(obj, want)
	}
	return versionMismatch(actual.GroupVersion(), want.GroupVersion())
}

// versionMismatch is kube-apiserver's answer to a body of the right kind
// in another version than the request's.
func versionMismatch(actual, want schema.GroupVersion) error {
	return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", actual, want))
}

// decodeError is kube-apiserver's answer to a body that does not decode
// into the kind named into: after the kind the body gave, when it gave
// one, else with the start of the body.
func decodeError(err error, actual *schema.GroupVersionKind, into string, body []byte) error {
	if actual != nil && actual.Kind != "" {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", actual.Kind, actual.Version, into, err))
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", into, err, bodySummary(body)))
}

// bodySummary is how kube-apiserver shows a body it could not read: its
// first 30 bytes, as text if it looks like JSON, else in hex.
func bodySummary(body []byte) string {
	const most = 30
	shown, more := body, ""
	if len(body) > most {
		shown, more = body[:most], " ..."
	}
	switch {
	case len(body) == 0:
		return "<empty>"
	case body[0] == '{':
		return string(shown) + more
	}
	return hex.EncodeToString(shown) + more
}

// decodePatched decodes the result of a patch, answering as
// kube-apiserver does for patches: an object that does not decode is a
// 422 on the patch, whose value (sentPatch.value) the cause shows; its unknown
// or duplicate fields and the patch's own (patchStrict) are one 422 too
// under Strict validation, warnings under Warn.
func decodePatched(ctx context.Context, data []byte, sent sentPatch, info runtime.SerializerInfo, validation string, store *registry.Store, patchStrict []error) (runtime.Object, error) {
	obj, actual, strictErr, err := decodeStrict(data, info, validation, store)
	if err != nil && actual != nil && actual.GroupVersion() != store.Info.GroupVersionKind().GroupVersion() {
		if !store.Typed() {
			return nil, otherVersionPatched(data, *actual, store)
		}
		if legacyscheme.Scheme.Recognizes(*actual) {
			obj, strictErr, err = decodeOtherVersion(data, *actual, validation, store)
		}
	}
	if err != nil {
		if _, isStatus := err.(apierrors.APIStatus); isStatus {
			return nil, err
		}
		return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
			field.Invalid(field.NewPath("patch"), sent.value(data, store), sent.decodeFailure(data, store, err)),
		})
	}
	if strict, ok := runtime.AsStrictDecodingError(strictErr); ok {
		patchStrict = append(patchStrict, strict.Errors()...)
	}
	if len(patchStrict) == 0 {
		return obj, nil
	}
	if validation == metav1.FieldValidationStrict {
		return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
			field.Invalid(field.NewPath("patch"), sent.value(data, store), runtime.NewStrictDecodingError(patchStrict).Error()),
		})
	}
	warnStrict(ctx, runtime.NewStrictDecodingError(patchStrict))
	return obj, nil
}

// decodeOtherVersion decodes a patched built-in object that names another
// version of its kind than the request's, one kube-apiserver's scheme
// knows (served or not: extensions/v1beta1 Deployments), as
// kube-apiserver's patcher, whose codec decodes any such version,
// defaults it and converts it through the kind's internal form: the patch
// goes through as if the object were of that version. An object of
// another kind does not convert.
func decodeOtherVersion(data []byte, actual schema.GroupVersionKind, validation string, store *registry.Store) (obj runtime.Object, strictErr, err error) {
	decoder := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, legacyscheme.Scheme, legacyscheme.Scheme,
		kjson.SerializerOptions{Strict: validation != metav1.FieldValidationIgnore})
	decoded, _, err := decoder.Decode(data, nil, nil)
	if err != nil && runtime.IsStrictDecodingError(err) && decoded != nil {
		strictErr, err = err, nil
	}
	if err != nil {
		return nil, nil, err
	}
	want := store.Info.GroupVersionKind()
	if actual.Kind != want.Kind {
		return nil, nil, notConvertible(decoded, want)
	}
	legacyscheme.Scheme.Default(decoded)
	internal, err := legacyscheme.Scheme.New(want.GroupKind().WithVersion(runtime.APIVersionInternal))
	if err != nil {
		return nil, nil, err
	}
	obj = store.New()
	if err := legacyscheme.Scheme.Convert(decoded, internal, nil); err != nil {
		return nil, nil, err
	}
	if err := legacyscheme.Scheme.Convert(internal, obj, nil); err != nil {
		return nil, nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(want)
	return obj, strictErr, nil
}

// otherVersionPatched refuses a patched custom resource that names another
// version: apiextensions decodes it as it is, and its validation refuses
// the version.
func otherVersionPatched(data []byte, actual schema.GroupVersionKind, store *registry.Store) error {
	var named struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(data, &named) // it decoded once already
	want := store.Info.GroupVersionKind()
	return apierrors.NewInvalid(want.GroupKind(), named.Metadata.Name, field.ErrorList{
		field.Invalid(field.NewPath("apiVersion"), actual.GroupVersion().String(), "must be "+want.GroupVersion().String()),
	})
}

// decodeStrict decodes data into a new object of the store's kind, and
// tells the kind the data gave. Unknown or duplicate fields are reported
// apart (strictErr) unless validation is Ignore; err is any other failure
// (decodeError makes kube-apiserver's answer of it), or the Status of a
// body of another version. A custom resource of another kind is left to
// its validation, which names the kind it must be. A body of the store's
// kind in a group-version of accepts is converted to the store's version.
func decodeStrict(data []byte, info runtime.SerializerInfo, validation string, store *registry.Store, accepts ...schema.GroupVersion) (obj runtime.Object, actual *schema.GroupVersionKind, strictErr, err error) {
	gvk := store.Info.GroupVersionKind()
	decoder := info.Serializer
	if validation != metav1.FieldValidationIgnore && info.StrictSerializer != nil {
		decoder = info.StrictSerializer
	}
	obj, actual, err = decoder.Decode(data, &gvk, store.New())
	if err != nil && runtime.IsStrictDecodingError(err) && obj != nil {
		strictErr, err = err, nil
	}
	if err != nil || actual == nil || actual.Kind == "" {
		return obj, actual, strictErr, err
	}
	if actual.Kind == gvk.Kind && slices.Contains(accepts, actual.GroupVersion()) {
		converted := store.New()
		if err := codecs.Scheme.Convert(obj, converted, nil); err != nil {
			return nil, actual, nil, err
		}
		return converted, actual, strictErr, nil
	}
	// As kube-apiserver's decoder, which converts the body to the kind's
	// internal type before it looks at the version: a body of another
	// kind does not convert.
	if actual.Kind != gvk.Kind && store.Typed() {
		return nil, actual, nil, notConvertible(obj, gvk)
	}
	if actual.GroupVersion() != gvk.GroupVersion() {
		return nil, actual, nil, versionMismatch(actual.GroupVersion(), gvk.GroupVersion())
	}
	return obj, actual, strictErr, nil
}

// notConvertible is the error of kube's conversion of a decoded object of
// another kind to the internal type of kind.
func notConvertible(obj runtime.Object, kind schema.GroupVersionKind) error {
	internal, err := legacyscheme.Scheme.New(kind.GroupKind().WithVersion(runtime.APIVersionInternal))
	if err != nil || obj == nil {
		return fmt.Errorf("converting to %s: unknown conversion", kind.Kind)
	}
	return fmt.Errorf("converting (%s) to (%s): unknown conversion", reflect.TypeOf(obj).Elem(), reflect.TypeOf(internal).Elem())
}

// warnStrict reports unknown and duplicate fields as warnings (the Warn
// validation).
func warnStrict(ctx context.Context, strictErr error) {
	if strictErr == nil {
		return
	}
	for _, msg := range strictMessages(strictErr) {
		addWarning(ctx, msg)
	}
}

func strictMessages(err error) []string {
	strict, ok := runtime.AsStrictDecodingError(err)
	if !ok {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range strict.Errors() {
		out = append(out, yamlStrictMessages(e.Error())...)
	}
	return out
}

// yamlStrictMessages splits a YAML decoder's strict error (duplicate
// keys, one line each after its heading) into its lines, as
// kube-apiserver warns of each; any other error is one message.
func yamlStrictMessages(msg string) []string {
	rest, ok := strings.CutPrefix(msg, "error converting YAML to JSON: ")
	if rest, ok = strings.CutPrefix(rest, "yaml: unmarshal errors:\n"); !ok {
		return []string{msg}
	}
	lines := strings.Split(rest, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return lines
}

// addWarning adds a warning to the answer, through the request's
// recorder: once per message, truncated as kube-apiserver truncates them.
func addWarning(ctx context.Context, msg string) { warning.AddWarning(ctx, "", msg) }

// optionsInvalid is the 422 kube-apiserver answers for invalid query
// options, naming the options kind of the verb.
func optionsInvalid(r *http.Request, errs ...*field.Error) error {
	kind := map[string]string{
		http.MethodPost:   "CreateOptions",
		http.MethodPut:    "UpdateOptions",
		http.MethodPatch:  "PatchOptions",
		http.MethodDelete: "DeleteOptions",
	}[r.Method]
	if kind == "" {
		kind = "ListOptions"
	}
	return apierrors.NewInvalid(metav1.SchemeGroupVersion.WithKind(kind).GroupKind(), "", errs)
}

// dryRun reads the dryRun query option: true for All, an error for
// anything else. Every write reads it first, so it also checks the
// fieldManager option the write's options carry.
func dryRun(r *http.Request) (bool, error) {
	if m := r.URL.Query().Get("fieldManager"); m != "" {
		if errs := metav1validation.ValidateFieldManager(m, field.NewPath("fieldManager")); len(errs) > 0 {
			return false, optionsInvalid(r, errs...)
		}
	}
	return checkDryRun(r, r.URL.Query()["dryRun"])
}

// checkDryRun accepts no value or values that are all All, with kube's
// validation, answering anything else with its 422 on the verb's options.
func checkDryRun(r *http.Request, values []string) (bool, error) {
	if errs := metav1validation.ValidateDryRun(field.NewPath("dryRun"), values); len(errs) > 0 {
		return false, optionsInvalid(r, errs...)
	}
	return len(values) > 0, nil
}

// dryRunAndValidation reads the dryRun and fieldValidation options of a
// write whose body is decoded later.
func dryRunAndValidation(r *http.Request) (dry bool, validation string, err error) {
	if dry, err = dryRun(r); err != nil {
		return false, "", err
	}
	validation, err = fieldValidation(r)
	return dry, validation, err
}
