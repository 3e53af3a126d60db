package handlers

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/request"
)

// get reads one object: the newest state from storage when no
// resourceVersion is given, otherwise from the watch cache (any state for
// "0", a state not older than the version for others).
func (a *API) get(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	target, err := negotiateRead(r, store.Serializers(), req.Verb)
	if err != nil {
		writeError(w, r, err)
		return
	}
	obj, enc, err := a.getAt(r, req, store, r.URL.Query().Get("resourceVersion"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	cached := enc != nil // the cache's own object, read only
	if cached && target.sendsKept(store) {
		auditObject(r, store, obj)
		writeShared(w, r, store, target.info, obj, enc)
		return
	}
	switch {
	case store.Converts():
		obj, err = store.FromStorage(obj)
	case cached:
		obj = obj.DeepCopyObject() // encoding sets its kind
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeTransformed(w, r, http.StatusOK, obj, store, target)
}

// getAt returns the object as stored: the cache's own (read only), with
// the encodings its readers share, or one read from storage, with none.
func (a *API) getAt(r *http.Request, req *request.Info, store *registry.Store, rvParam string) (runtime.Object, *cache.Encodings, error) {
	c := store.Backend().Cache
	key := store.Key(req.Namespace, req.Name)
	if rvParam == "" {
		// The most recent state, which kube-apiserver reads from etcd:
		// the watch cache has it once it caught up with storage.
		if obj, enc := c.GetFresh(r.Context(), key); obj != nil {
			return obj, enc, nil
		}
		obj, err := store.Get(r.Context(), req.Namespace, req.Name)
		return obj, nil, err
	}
	rev, err := storageRevision(rvParam)
	if err != nil {
		return nil, nil, err
	}
	if rev > 0 {
		err = c.WaitNotOlderThan(r.Context(), rev)
	} else {
		err = c.WaitServing(r.Context())
	}
	if unready := (*cache.ErrUnready)(nil); errors.As(err, &unready) {
		// As kube-apiserver's: a get finding the cache unbuilt reads
		// storage.
		obj, err := store.Get(r.Context(), req.Namespace, req.Name)
		return obj, nil, err
	}
	if err != nil {
		return nil, nil, cacheError(err)
	}
	obj, enc := c.GetEncoded(key)
	if obj == nil {
		return nil, nil, apierrors.NewNotFound(store.GroupResource(), req.Name)
	}
	return obj, enc, nil
}

// sendsKept says whether t is answered from the encodings the cache keeps
// of store's objects: the objects themselves (no Table or metadata), as
// stored (no conversion), in a media type that splices.
func (t readTarget) sendsKept(store *registry.Store) bool {
	return t.conv.As == "" && !store.Converts() && splices(store, t.info)
}

// list serves a page of a collection from the watch cache.
func (a *API) list(w http.ResponseWriter, r *http.Request, req *request.Info, store *registry.Store) {
	opts, err := listOptions(r, req, store)
	if err != nil {
		writeError(w, r, err)
		return
	}
	target, err := negotiateRead(r, store.Serializers(), req.Verb)
	if err != nil {
		writeError(w, r, err)
		return
	}
	listReq, err := listRequest(req, store, opts)
	if err != nil {
		writeError(w, r, err)
		return
	}
	res, err := store.Backend().Cache.List(r.Context(), listReq)
	if err != nil {
		writeError(w, r, cacheError(err))
		return
	}
	a.writeList(w, r, store, target, res, true)
}

// writeList answers the list res in the representation target says (a
// Table or metadata too). Without a conversion it is spliced from the
// items' encodings; keep says whether its compressed items section is
// kept for the next list of the same items.
func (a *API) writeList(w http.ResponseWriter, r *http.Request, store *registry.Store, target readTarget, res *cache.ListResult, keep bool) {
	listMeta := &metav1.ListMeta{
		ResourceVersion: formatRevision(res.Revision), Continue: res.Continue, RemainingItemCount: res.Remaining,
	}
	if target.sendsKept(store) {
		auditList(r, store, res.Items, listMeta)
		a.writeSplicedList(w, r, store, target.info, listMeta, res.Items, res.Encodings, keep)
		return
	}
	items, err := fromStorage(store, res.Items)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out, gvk, err := target.transform(store, nil, items, listMeta)
	if err != nil {
		writeError(w, r, err)
		return
	}
	logResponse(r, out, gvk.GroupVersion())
	writeEncoded(w, r, http.StatusOK, out, gvk, target.info)
}

// listRequest maps resourceVersion, resourceVersionMatch, limit and
// continue onto the consistency a list reads at (SPEC V3).
func listRequest(req *request.Info, store *registry.Store, opts *internalListOptions) (cache.ListRequest, error) {
	lr := cache.ListRequest{Filter: filterFor(req, store, opts), Limit: int(opts.Limit)}
	if opts.Limit < 0 {
		lr.Limit = 0
	}
	lr.AskedLimit = lr.Limit
	if opts.Continue != "" {
		token, err := cache.DecodeToken(opts.Continue)
		if err != nil {
			return lr, apierrors.NewBadRequest("invalid continue token: " + err.Error())
		}
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return lr, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		lr.Continue = token
		lr.Limit = limitAt(opts.ResourceVersion, lr.Limit)
		return lr, nil
	}
	rev, err := storageRevision(opts.ResourceVersion)
	if err != nil {
		// kube's list options validation says so.
		return lr, apierrors.NewBadRequest("invalid resource version: " + err.Error())
	}
	lr.Revision = rev
	switch {
	case opts.ResourceVersion == "":
		lr.Consistency = cache.Consistent
	case rev == 0:
		lr.Consistency = cache.Any
		lr.Limit = limitAt(opts.ResourceVersion, lr.Limit)
	case opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact:
		lr.Consistency = cache.Exact
	case opts.ResourceVersionMatch == "" && lr.Limit > 0:
		lr.Consistency = cache.Exact // a paged list at a version reads exactly it
	default:
		lr.Consistency = cache.NotOlderThan
	}
	return lr, nil
}

// limitAt is the page size a list at resourceVersion rv gets: none at
// "0", which kube-apiserver's watch cache serves whole, whatever the
// limit (a reflector's first list asks for pages of 500 at "0").
func limitAt(rv string, limit int) int {
	if rv == "0" {
		return 0
	}
	return limit
}

func formatRevision(rev int64) string {
	if rev == 0 {
		return ""
	}
	return fmtInt(rev)
}
