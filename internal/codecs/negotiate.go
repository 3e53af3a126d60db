package codecs

import (
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/munnerz/goautoneg"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// mediaRange is one clause of an Accept header.
type mediaRange struct {
	mediaType string // "type/subtype", as sent: media types are case-sensitive
	params    map[string]string
	q         float64
}

// parseAccept splits an Accept header into clauses in the order of
// kube-apiserver's own parser (goautoneg's): by q, except that a clause
// naming a type can go before a range, even one of higher q ("*/*,
// application/yaml;q=0.5" prefers YAML). Parameters are kept as sent (not
// unquoted, keys not lower-cased); a q that does not parse is 0.
func parseAccept(header string) []mediaRange {
	clauses := goautoneg.ParseAccept(header)
	out := make([]mediaRange, 0, len(clauses))
	for _, c := range clauses {
		out = append(out, mediaRange{mediaType: c.Type + "/" + c.SubType, params: c.Params, q: c.Q})
	}
	return out
}

// CheckRoute is the check kube-apiserver's router (go-restful) makes of a
// request to one of its routes before any handler runs: some media type of
// the Accept header (its parameters, q=0 among them, ignored) is one the
// route produces, or */*. A route produces the media types of infos, and
// those streams lists (a collection's watch streams; nil for none), asked
// for only when infos do not do. No Accept header accepts anything; a
// header of no media types, such as ",,", accepts nothing. Endpoints
// kube-apiserver serves outside its router (a group's discovery, custom
// resources) make no such check: they also take media ranges such as
// application/*.
func CheckRoute(r *http.Request, infos []runtime.SerializerInfo, streams func() []string) error {
	accepted := routeAccepts(r, func(mediaType string) bool {
		return slices.ContainsFunc(infos, func(info runtime.SerializerInfo) bool { return info.MediaType == mediaType }) ||
			streams != nil && slices.ContainsFunc(streams(), func(stream string) bool { t, _, _ := strings.Cut(stream, ";"); return t == mediaType })
	})
	if accepted {
		return nil
	}
	produces := MediaTypes(infos)
	if streams != nil {
		produces = append(produces, streams()...)
	}
	return notAcceptableAtRoute(produces)
}

// CheckRouteProducing is CheckRoute for a route that produces the media
// types of produces, in that order (a pod's log: text/plain first).
func CheckRouteProducing(r *http.Request, produces []string) error {
	if routeAccepts(r, func(mediaType string) bool { return slices.Contains(produces, mediaType) }) {
		return nil
	}
	return notAcceptableAtRoute(produces)
}

// routeAccepts tells whether some media type of r's Accept header, its
// parameters ignored, is */* or one produced says the route produces; no
// header accepts anything.
func routeAccepts(r *http.Request, produced func(mediaType string) bool) bool {
	header := r.Header.Get("Accept")
	if strings.TrimSpace(header) == "" {
		return true
	}
	for rest, more := header, true; more; {
		var clause string
		clause, rest, more = strings.Cut(rest, ",")
		mediaType, _, _ := strings.Cut(clause, ";")
		mediaType = strings.TrimSpace(mediaType)
		if mediaType == "*/*" || produced(mediaType) {
			return true
		}
	}
	return false
}

// NegotiateOutput chooses the serializer for the response to r among infos
// (the first is the default). It fails with a 406 Status when none fits.
// Clauses asking for a conversion (as=...) are not served by it.
func NegotiateOutput(r *http.Request, infos []runtime.SerializerInfo) (runtime.SerializerInfo, error) {
	info, _, err := NegotiateOutputConversion(r, infos, nil)
	return info, err
}

// Conversion is what an Accept clause's g, v and as parameters ask for,
// such as a meta.k8s.io/v1 Table instead of the object itself.
type Conversion struct {
	Group, Version, As string
}

// NegotiateOutputConversion is NegotiateOutput for endpoints that can also
// answer with a conversion: a clause with as=... is taken when allowed
// accepts its conversion in that media type. The zero Conversion means the
// object itself. As kube-apiserver's negotiation, a clause asking for a
// stream (stream=...) is taken only for "watch" in a media type that
// streams, and one naming a server version (sv=...) only for meta's v1, as
// resources' endpoints take it (kube's discovery and error answers take
// none; kapi's do).
func NegotiateOutputConversion(r *http.Request, infos []runtime.SerializerInfo, allowed func(Conversion, string) bool) (runtime.SerializerInfo, Conversion, error) {
	header := r.Header.Get("Accept")
	clauses := parseAccept(header)
	if strings.TrimSpace(header) == "" {
		return infos[0], Conversion{}, nil
	}
	// As kube-apiserver's negotiation, each clause is tried on each
	// serializer it names, in order, and a conversion must be allowed in
	// the serializer's media type (*/*;as=Table is a Table in JSON).
	for _, c := range clauses {
		conv := Conversion{Group: c.params["g"], Version: c.params["v"], As: c.params["as"]}
		for _, info := range infos {
			if c.mediaType != "*/*" && info.MediaType != c.mediaType && !inRange(c.mediaType, info.MediaType) {
				continue
			}
			if !streamsAsAsked(c.params, info) || !serverVersionAllowed(c.params) {
				continue
			}
			switch {
			case hasConversion(c.params):
				if allowed == nil || !allowed(conv, info.MediaType) {
					continue
				}
			case conversionOnly(info):
				continue
			}
			return info, conv, nil
		}
	}
	return runtime.SerializerInfo{}, Conversion{}, NotAcceptable(MediaTypes(infos))
}

// streamsAsAsked: a clause's stream, if it asks for one, is a watch's, in
// a media type that streams.
func streamsAsAsked(params map[string]string, info runtime.SerializerInfo) bool {
	stream := params["stream"]
	return stream == "" || (stream == "watch" && info.StreamSerializer != nil)
}

// serverVersionAllowed: a clause's server version, if it names one, is
// meta's v1.
func serverVersionAllowed(params map[string]string) bool {
	sv := params["sv"]
	return sv == "" || sv == metav1.SchemeGroupVersion.Version
}

// inRange reports whether mediaType is in the range "type/*".
func inRange(mediaRange, mediaType string) bool {
	prefix, ok := strings.CutSuffix(mediaRange, "/*")
	return ok && strings.HasPrefix(mediaType, prefix+"/")
}

// AcceptParam is the parameter key of the first Accept clause of r
// taking mediaType (naming it, its range or */*), or "".
func AcceptParam(r *http.Request, mediaType, key string) string {
	for _, c := range parseAccept(r.Header.Get("Accept")) {
		if c.mediaType == mediaType || c.mediaType == "*/*" || inRange(c.mediaType, mediaType) {
			return c.params[key]
		}
	}
	return ""
}

func hasConversion(params map[string]string) bool {
	_, as := params["as"]
	_, group := params["g"]
	_, version := params["v"]
	return as || group || version
}

// MediaTypes lists the media types of infos.
func MediaTypes(infos []runtime.SerializerInfo) []string {
	out := make([]string, len(infos))
	for i, info := range infos {
		out[i] = info.MediaType
	}
	return out
}

// NegotiateInput chooses the decoder for a request body of contentType; an
// empty Content-Type means JSON, as in kube-apiserver.
func NegotiateInput(contentType string, infos []runtime.SerializerInfo) (runtime.SerializerInfo, error) {
	if strings.TrimSpace(contentType) == "" {
		return infos[0], nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err == nil {
		for _, info := range infos {
			if info.MediaType == mt && !conversionOnly(info) {
				return info, nil
			}
		}
	}
	// Listed as kube-apiserver lists them, the conversion-only protobuf of
	// custom resources included.
	return runtime.SerializerInfo{}, UnsupportedMediaType(MediaTypes(infos))
}

// StatusError is an error that carries the Status a client should see.
type StatusError struct{ ErrStatus metav1.Status }

func (e *StatusError) Error() string         { return e.ErrStatus.Message }
func (e *StatusError) Status() metav1.Status { return e.ErrStatus }

func failure(code int32, reason metav1.StatusReason, message string) *StatusError {
	return &StatusError{metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: message}}
}

// NotAcceptable is the 406 a handler answers when no Accept clause can be
// served with its parameters.
func NotAcceptable(types []string) error {
	return failure(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		"only the following media types are accepted: "+strings.Join(types, ", "))
}

// notAcceptableAtRoute is the 406 kube-apiserver's router answers when no
// Accept clause names a media type of the endpoint at all.
func notAcceptableAtRoute(types []string) error {
	err := failure(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		fmt.Sprintf("406: Not Acceptable\n\nAvailable representations: %s", strings.Join(types, ", ")))
	err.ErrStatus.Details = &metav1.StatusDetails{}
	return err
}

// UnsupportedMediaTypeAtRoute is the 415 kube-apiserver's router answers
// for a patch of a built-in resource in a media type its PATCH endpoint
// does not consume, before any handler reads it (its other endpoints
// consume any type, and their handlers answer UnsupportedMediaType).
func UnsupportedMediaTypeAtRoute() error {
	err := failure(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, "415: Unsupported Media Type")
	err.ErrStatus.Details = &metav1.StatusDetails{}
	return err
}

// UnsupportedMediaType is the 415 for a body the server cannot read.
func UnsupportedMediaType(types []string) error {
	return failure(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
		"the body of the request was in an unknown format - accepted media types include: "+strings.Join(types, ", "))
}
