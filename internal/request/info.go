// Package request parses the URL and method of an API request into the
// resource it addresses and the verb it performs, as kube-apiserver does.
package request

import (
	"context"
	"net/http"
	"strings"
)

// Info is what a request addresses.
type Info struct {
	// IsResourceRequest is false for discovery and other non-resource paths.
	IsResourceRequest bool
	Verb              string
	Prefix            string // "api" or "apis"
	Group             string
	Version           string
	Namespace         string
	Resource          string
	Name              string
	Subresource       string
	// Extra holds path segments past the sub-resource (proxy paths).
	Extra []string
	// WatchPath is set when the deprecated /watch/ path prefix made the
	// request a watch: kube-apiserver then reads no list options into its
	// request info (no name from a field selector, no selectors).
	WatchPath bool
	// ProxyPath is set when the path had the removed /proxy/ prefix
	// (/api/v1/proxy/namespaces/NS/pods/NAME): the verb is proxy, and
	// no route serves it.
	ProxyPath bool
	// EmptyNamespace is set when the path's namespace segment is there
	// but empty (/api/v1/namespaces//configmaps).
	EmptyNamespace bool
	// UnderNamespace is set when the resource follows a namespaces/NS/
	// prefix; a namespace's own path (namespaces/NAME) has none.
	UnderNamespace bool

	// Deprecated is set by the handler that finds the request addresses
	// a version deprecated in this release, and RemovedRelease to the
	// release that removes it, if known: kube-apiserver's request
	// metrics count the deprecated APIs requested.
	Deprecated     bool
	RemovedRelease string
}

// Parse classifies r. Paths that are not /api/v1/... or /apis/GROUP/VERSION/...
// with a resource are non-resource requests.
func Parse(r *http.Request) *Info {
	info := &Info{Verb: strings.ToLower(r.Method)}
	parts := splitPath(r.URL.Path)
	if len(parts) == 0 || (parts[0] != "api" && parts[0] != "apis") {
		return info
	}
	info.Prefix = parts[0]
	parts = parts[1:]
	if info.Prefix == "apis" {
		if len(parts) == 0 {
			return info
		}
		info.Group, parts = parts[0], parts[1:]
	}
	if len(parts) == 0 {
		return info
	}
	info.Version, parts = parts[0], parts[1:]
	if len(parts) == 0 {
		return info
	}
	info.IsResourceRequest = true

	watchPath := false
	switch {
	case parts[0] == "watch": // the deprecated /watch/ path prefix
		watchPath, parts = true, parts[1:]
	case parts[0] == "proxy" && len(parts) > 1:
		// The /proxy/ prefix kube-apiserver's request info still reads
		// as the verb proxy, though no route serves it any more.
		info.ProxyPath, parts = true, parts[1:]
	}
	info.WatchPath = watchPath
	if len(parts) >= 2 && parts[0] == "namespaces" {
		info.Namespace = parts[1]
		info.EmptyNamespace = parts[1] == "" && len(parts) > 2
		// namespaces/NAME/finalize and namespaces/NAME/status are
		// sub-resources of the namespace itself, not namespaced resources.
		if len(parts) > 2 && parts[2] != "finalize" && parts[2] != "status" {
			parts = parts[2:]
			info.UnderNamespace = true
		}
	}
	if len(parts) > 0 {
		info.Resource = parts[0]
	}
	if len(parts) > 1 {
		info.Name = parts[1]
	}
	if len(parts) > 2 {
		info.Subresource = parts[2]
	}
	if len(parts) > 3 {
		info.Extra = parts[3:]
	}
	if info.Resource == "namespaces" && len(parts) > 1 && !info.UnderNamespace {
		info.Namespace = info.Name // a namespace lives in itself
	}
	info.Verb = verbFor(r, info.Name, watchPath)
	if info.ProxyPath {
		// As kube's request info: the proxy verb has no sub-resource,
		// the rest of the path is the proxied one's.
		info.Verb = "proxy"
		if info.Subresource != "" {
			info.Extra = append([]string{info.Subresource}, info.Extra...)
			info.Subresource = ""
		}
	}
	return info
}

// verbFor is the request's verb as kube-apiserver's RequestInfo names
// it: under the deprecated /watch/ prefix every method's is watch (the
// route then takes GET alone).
func verbFor(r *http.Request, name string, watchPath bool) string {
	if watchPath {
		return "watch"
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case name != "":
			return "get" // ?watch only turns collection reads into watches
		case isWatch(r):
			return "watch"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if name == "" {
			return "deletecollection"
		}
		return "delete"
	}
	return ""
}

// isWatch reads the watch option as kube-apiserver's parameter conversion
// does: present and anything but "false" or "0" is true.
func isWatch(r *http.Request) bool {
	values, ok := r.URL.Query()["watch"]
	if !ok || len(values) == 0 {
		return false
	}
	v := strings.ToLower(values[0])
	return v != "false" && v != "0"
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

type infoKey struct{}

// WithInfo returns ctx carrying info, so that a request is parsed once.
func WithInfo(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, infoKey{}, info)
}

// From returns the Info a filter stored in ctx.
func From(ctx context.Context) (*Info, bool) {
	info, ok := ctx.Value(infoKey{}).(*Info)
	return info, ok
}
