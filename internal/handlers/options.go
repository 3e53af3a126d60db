package handlers

import (
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
)

// listOptions reads and validates the options of a list or watch the way
// kube-apiserver does: 400 for what does not parse, 422 for combinations
// that are not allowed, 400 for field selectors the resource lacks.
func listOptions(r *http.Request, req *request.Info, store *registry.Store) (*metainternalversion.ListOptions, error) {
	opts := &metainternalversion.ListOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	metainternalversion.SetListOptionsDefaults(opts, true)
	if errs := validation.ValidateListOptions(opts, true); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	// The deprecated /watch/ prefix watches with options defaulted and
	// checked as a list's, as kube-apiserver's handler forces its watch.
	if req.Verb == "watch" {
		opts.Watch = true
	}
	if opts.FieldSelector != nil && !opts.FieldSelector.Empty() {
		converted, err := store.Info.ConvertFieldSelector(opts.FieldSelector)
		if err != nil {
			return nil, err
		}
		opts.FieldSelector = converted
	}
	return opts, selectName(opts, req.Name)
}

// selectName makes a watch of one object by name (the deprecated
// /watch/.../NAME path) select that object, as kube-apiserver does: a
// field selector it also has must select the same name.
func selectName(opts *metainternalversion.ListOptions, name string) error {
	if name == "" {
		return nil
	}
	if opts.FieldSelector == nil || opts.FieldSelector.Empty() {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", name)
		return nil
	}
	if selected, ok := opts.FieldSelector.RequiresExactMatch("metadata.name"); !ok || selected != name {
		return apierrors.NewBadRequest("fieldSelector metadata.name doesn't match requested name")
	}
	return nil
}

// filterFor builds the cache filter of a request: its namespace and its
// label and field selectors.
func filterFor(req *request.Info, store *registry.Store, opts *metainternalversion.ListOptions) cache.Filter {
	return store.Filter(req.Namespace, opts.LabelSelector, opts.FieldSelector)
}

// cacheError turns a cache error into the Status kube-apiserver answers.
func cacheError(err error) error { return cache.APIError(err) }

// internalListOptions is the parsed form of list and watch options.
type internalListOptions = metainternalversion.ListOptions

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }
