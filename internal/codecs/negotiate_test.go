package codecs

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	jsonType     = "application/json"
	yamlType     = "application/yaml"
	protobufType = "application/vnd.kubernetes.protobuf"
)

// statusOf returns the Status err carries, failing the test if it has none.
func statusOf(t *testing.T, err error) metav1.Status {
	t.Helper()
	var withStatus interface{ Status() metav1.Status }
	if !errors.As(err, &withStatus) {
		t.Fatalf("error %T %q has no Status()", err, err)
	}
	return withStatus.Status()
}

func requestAccepting(accept string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil)
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	return r
}

// TestSupportedMediaTypes pins the order the 406 messages below list, which
// is also kube-apiserver's with CBOR serving on: JSON (the default), YAML,
// protobuf, CBOR.
func TestSupportedMediaTypes(t *testing.T) {
	got := MediaTypes(Factory.SupportedMediaTypes())
	want := []string{jsonType, yamlType, protobufType, "application/cbor"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("SupportedMediaTypes() = %v, want %v", got, want)
	}
	got = MediaTypes(UnstructuredSerializers)
	if strings.Join(got, ",") != jsonType+","+yamlType+",application/cbor" {
		t.Fatalf("UnstructuredSerializers = %v, want JSON, YAML and CBOR", got)
	}
}

func TestNegotiateOutput(t *testing.T) {
	infos := Factory.SupportedMediaTypes()
	all := strings.Join(MediaTypes(infos), ", ")
	handlerMsg := "only the following media types are accepted: " + all

	tests := []struct {
		name   string
		accept string
		want   string // media type chosen; empty means a 406
		msg    string // exact 406 message
		skip   string
	}{
		{name: "no Accept", accept: "", want: jsonType},
		{name: "blank Accept", accept: "   ", want: jsonType},
		{name: "wildcard", accept: "*/*", want: jsonType},
		{name: "wildcard with q", accept: "*/*;q=0.8", want: jsonType},
		{name: "json", accept: "application/json", want: jsonType},
		{name: "json with charset", accept: "application/json; charset=utf-8", want: jsonType},
		{name: "json with stream param", accept: "application/json;stream=watch", want: jsonType},
		{name: "yaml", accept: "application/yaml", want: yamlType},
		{name: "protobuf", accept: "application/vnd.kubernetes.protobuf", want: protobufType},
		{name: "header order among equals", accept: "application/yaml, application/json", want: yamlType},
		{name: "header order among equals, json first", accept: "application/json, application/yaml", want: jsonType},
		{name: "q reorders", accept: "application/json;q=0.5, application/yaml", want: yamlType},
		{name: "q reorders three", accept: "application/json;q=0.1, application/yaml;q=0.8, application/vnd.kubernetes.protobuf;q=0.9", want: protobufType},
		{name: "q=1 beats default-less", accept: "application/yaml;q=0.9, application/json;q=1", want: jsonType},
		{name: "protobuf then json as kubectl sends", accept: "application/vnd.kubernetes.protobuf,application/json", want: protobufType},
		{name: "unknown first, wildcard fallback", accept: "text/html, */*;q=0.1", want: jsonType},
		{name: "unknown first, json second", accept: "text/plain, application/yaml", want: yamlType},
		{name: "spaces around clause parameters", accept: "application/json ; q=0.5", want: jsonType},
		{name: "tab between clauses", accept: "application/json,\tapplication/yaml", want: jsonType},

		// Outside kube-apiserver's router (CheckRoute, below) media
		// ranges are taken.
		{name: "application/* alone", accept: "application/*", want: jsonType},
		{name: "application/* and text/*", accept: "application/*, text/*", want: jsonType},
		// media types are compared case-sensitively.
		{name: "upper-case json", accept: "Application/JSON", msg: handlerMsg},
		{name: "upper-case yaml", accept: "APPLICATION/YAML", msg: handlerMsg},
		{name: "upper-case then json", accept: "Application/JSON, application/json", want: jsonType},
		{name: "text/plain", accept: "text/plain", msg: handlerMsg},
		{name: "text/html and image/png", accept: "text/html, image/png;q=0.5", msg: handlerMsg},
		{name: "garbage", accept: "garbage", msg: handlerMsg},
		// kube's parser reads "*" as */* (its router refuses it first,
		// CheckRoute; endpoints outside the router serve it).
		{name: "bare star", accept: "*", want: jsonType},
		// Among equal q, a named type goes before a range.
		{name: "star then yaml", accept: "*/*, application/yaml", want: "application/yaml"},
		{name: "star then lower-q yaml", accept: "*/*, application/yaml;q=0.5", want: "application/yaml"},
		{name: "range then yaml", accept: "application/*, application/yaml", want: "application/yaml"},
		// Parameters as sent: quoted or upper-case ones ask for no Table.
		{name: "quoted table", accept: `application/json;as="Table";v=v1;g=meta.k8s.io`, msg: handlerMsg},
		{name: "upper-case table", accept: "application/json;AS=Table;V=v1;G=meta.k8s.io", want: jsonType},
		// A stream only for a watch in a media type that streams; a
		// server version only meta's v1.
		{name: "yaml stream then json", accept: "application/yaml;stream=watch, application/json", want: jsonType},
		{name: "json stream of another kind", accept: "application/json;stream=other", msg: handlerMsg},
		{name: "server version v1", accept: "application/json;sv=v1", want: jsonType},
		{name: "other server version", accept: "application/json;sv=v2", msg: handlerMsg},

		// as=Table and other conversions are not served yet.
		{name: "table then json", accept: "application/json;as=Table;g=meta.k8s.io;v=v1, application/json", want: jsonType},
		{name: "kubectl get Accept", accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", want: jsonType},
		{name: "table then yaml", accept: "application/json;as=Table;g=meta.k8s.io;v=v1, application/yaml", want: yamlType},
		{name: "table alone", accept: "application/json;as=Table;g=meta.k8s.io;v=v1", msg: handlerMsg},
		{name: "partial metadata alone", accept: "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", msg: handlerMsg},
		{name: "protobuf table alone", accept: "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1", msg: handlerMsg},
		// A version or group alone, or an empty as, asks for a conversion
		// too, as kube-apiserver reads them.
		{name: "json with a version", accept: "application/json;v=v1", msg: handlerMsg},
		{name: "json with a group", accept: "application/json;g=meta.k8s.io", msg: handlerMsg},
		{name: "json with an empty as", accept: "application/json;as=;v=v1;g=meta.k8s.io", msg: handlerMsg},
		// kube-apiserver takes a clause of q=0 as the least preferred
		// (RFC 9110 would refuse it).
		{name: "json q=0", accept: "application/json;q=0", want: jsonType},
		{name: "json q=0 then yaml", accept: "application/json;q=0, application/yaml", want: yamlType},
		{name: "unknown then any q=0", accept: "image/png, */*;q=0", want: jsonType},

		// kube-apiserver's router and goautoneg ignore a parameter without
		// '=', so the clause still names application/json.
		{name: "parameter without value", accept: "application/json;foo", want: jsonType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			got, err := NegotiateOutput(requestAccepting(tc.accept), infos)
			if tc.want != "" {
				if err != nil {
					t.Fatalf("NegotiateOutput(%q) failed: %v", tc.accept, err)
				}
				if got.MediaType != tc.want {
					t.Fatalf("NegotiateOutput(%q) = %q, want %q", tc.accept, got.MediaType, tc.want)
				}
				if got.Serializer == nil {
					t.Fatalf("NegotiateOutput(%q) returned no serializer", tc.accept)
				}
				return
			}
			if err == nil {
				t.Fatalf("NegotiateOutput(%q) = %q, want a 406", tc.accept, got.MediaType)
			}
			if got.MediaType != "" || got.Serializer != nil {
				t.Errorf("NegotiateOutput(%q) failed but returned %q", tc.accept, got.MediaType)
			}
			s := statusOf(t, err)
			if s.Code != http.StatusNotAcceptable || s.Reason != metav1.StatusReasonNotAcceptable || s.Status != metav1.StatusFailure {
				t.Errorf("NegotiateOutput(%q) status = %d %q %q, want 406 NotAcceptable Failure", tc.accept, s.Code, s.Reason, s.Status)
			}
			if s.Message != tc.msg {
				t.Errorf("NegotiateOutput(%q) message = %q, want %q", tc.accept, s.Message, tc.msg)
			}
			if err.Error() != s.Message {
				t.Errorf("Error() = %q, want the Status message %q", err.Error(), s.Message)
			}
		})
	}
}

// TestNegotiateConversionInAnyType: a conversion asked of any media type
// is made in the first serializer that allows it, as kube-apiserver's
// negotiation makes */*;as=Table a Table in JSON.
func TestNegotiateConversionInAnyType(t *testing.T) {
	infos := Factory.SupportedMediaTypes()
	tables := func(c Conversion, mediaType string) bool {
		return c.As == "Table" && mediaType != protobufType
	}
	for accept, want := range map[string]string{
		"*/*;as=Table;v=v1;g=meta.k8s.io":                                 jsonType,
		"application/*;as=Table;v=v1;g=meta.k8s.io":                       jsonType,
		"application/vnd.kubernetes.protobuf;as=Table;v=v1, */*;as=Table": jsonType,
		"application/yaml;as=Table;v=v1;g=meta.k8s.io":                    yamlType,
	} {
		info, conv, err := NegotiateOutputConversion(requestAccepting(accept), infos, tables)
		if err != nil || info.MediaType != want || conv.As != "Table" {
			t.Errorf("Accept %q: %q %+v %v, want a Table in %s", accept, info.MediaType, conv, err, want)
		}
	}
}

// TestCheckRoute checks the Accept header as kube-apiserver's router
// does before a built-in resource's handler runs.
func TestCheckRoute(t *testing.T) {
	infos := []runtime.SerializerInfo{{MediaType: jsonType}, {MediaType: yamlType}, {MediaType: protobufType}}
	streams := func() []string { return []string{"application/json;stream=watch", "application/cbor-seq"} }
	routeMsg := "406: Not Acceptable\n\nAvailable representations: " + strings.Join(append(MediaTypes(infos), streams()...), ", ")
	for _, tc := range []struct {
		accept string
		ok     bool
	}{
		{"", true},
		{"*/*", true},
		{"application/json", true},
		{"application/json;as=Table;g=meta.k8s.io;v=v1", true},
		{"application/json;q=0", true},
		{"text/plain, application/yaml", true},
		{"image/png, */*;q=0", true},
		// application/* is not a wildcard at the router.
		{"application/*", false},
		{"application/*, text/*", false},
		// media types are compared case-sensitively.
		{"Application/JSON", false},
		{"APPLICATION/YAML", false},
		{"text/plain", false},
		{"text/html, image/png;q=0.5", false},
		{"garbage", false},
		{"*", false},
		{",,", false},
		// A stream the route produces besides its serializers.
		{"application/cbor-seq", true},
	} {
		err := CheckRoute(requestAccepting(tc.accept), infos, streams)
		if tc.ok {
			if err != nil {
				t.Errorf("CheckRoute(%q): %v", tc.accept, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("CheckRoute(%q) passed, want a 406", tc.accept)
			continue
		}
		// The router's Status carries empty details.
		if s := statusOf(t, err); s.Code != http.StatusNotAcceptable || s.Reason != metav1.StatusReasonNotAcceptable || s.Message != routeMsg || s.Details == nil {
			t.Errorf("CheckRoute(%q) = %+v, want 406 %q with details", tc.accept, s, routeMsg)
		}
	}
}

// TestNegotiateOutputUnstructured checks that the serializers of custom
// resources, which have no protobuf, refuse it and list only their own.
func TestNegotiateOutputUnstructured(t *testing.T) {
	infos := UnstructuredSerializers
	for _, tc := range []struct {
		accept, want, msg string
	}{
		{accept: "", want: jsonType},
		{accept: "*/*", want: jsonType},
		{accept: "application/yaml", want: yamlType},
		{accept: "application/vnd.kubernetes.protobuf, application/json", want: jsonType},
		{accept: "application/vnd.kubernetes.protobuf", msg: "only the following media types are accepted: application/json, application/yaml, application/cbor"},
		{accept: "application/json;as=Table;g=meta.k8s.io;v=v1", msg: "only the following media types are accepted: application/json, application/yaml, application/cbor"},
	} {
		got, err := NegotiateOutput(requestAccepting(tc.accept), infos)
		if tc.want != "" {
			if err != nil || got.MediaType != tc.want {
				t.Errorf("NegotiateOutput(%q) = %q, %v; want %q", tc.accept, got.MediaType, err, tc.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("NegotiateOutput(%q) = %q, want a 406", tc.accept, got.MediaType)
			continue
		}
		if s := statusOf(t, err); s.Code != http.StatusNotAcceptable || s.Message != tc.msg {
			t.Errorf("NegotiateOutput(%q) = %d %q, want 406 %q", tc.accept, s.Code, s.Message, tc.msg)
		}
	}
}

func TestNegotiateInput(t *testing.T) {
	infos := Factory.SupportedMediaTypes()
	unsupported := "the body of the request was in an unknown format - accepted media types include: " + strings.Join(MediaTypes(infos), ", ")
	tests := []struct {
		contentType string
		want        string // empty means a 415
	}{
		{"", jsonType},
		{"application/json", jsonType},
		{"application/json; charset=utf-8", jsonType},
		{"application/json;charset=UTF-8", jsonType},
		{"APPLICATION/JSON", jsonType}, // mime.ParseMediaType lower-cases, as in kube-apiserver
		{"application/yaml", yamlType},
		{"application/vnd.kubernetes.protobuf", protobufType},
		{"text/plain", ""},
		{"application/x-www-form-urlencoded", ""},
		{"application/merge-patch+json", ""},
		{"application/*", ""},
		{"*/*", ""},
		{"application/json; charset", ""}, // unparseable
		{"garbage/", ""},
	}
	for _, tc := range tests {
		t.Run(tc.contentType, func(t *testing.T) {
			got, err := NegotiateInput(tc.contentType, infos)
			if tc.want != "" {
				if err != nil {
					t.Fatalf("NegotiateInput(%q) failed: %v", tc.contentType, err)
				}
				if got.MediaType != tc.want {
					t.Fatalf("NegotiateInput(%q) = %q, want %q", tc.contentType, got.MediaType, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("NegotiateInput(%q) = %q, want a 415", tc.contentType, got.MediaType)
			}
			s := statusOf(t, err)
			if s.Code != http.StatusUnsupportedMediaType || s.Reason != metav1.StatusReasonUnsupportedMediaType || s.Status != metav1.StatusFailure {
				t.Errorf("NegotiateInput(%q) status = %d %q %q, want 415 UnsupportedMediaType Failure", tc.contentType, s.Code, s.Reason, s.Status)
			}
			if !strings.HasPrefix(s.Message, "the body of the request was in an unknown format - accepted media types include: ") || s.Message != unsupported {
				t.Errorf("NegotiateInput(%q) message = %q, want %q", tc.contentType, s.Message, unsupported)
			}
		})
	}
}

func TestNegotiateInputUnstructured(t *testing.T) {
	_, err := NegotiateInput("application/vnd.kubernetes.protobuf", UnstructuredSerializers)
	if err == nil {
		t.Fatal("custom resources accepted a protobuf body")
	}
	want := "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/cbor"
	if s := statusOf(t, err); s.Code != http.StatusUnsupportedMediaType || s.Message != want {
		t.Errorf("got %d %q, want 415 %q", s.Code, s.Message, want)
	}
}

// TestNegotiateInputListsConversionOnlyProtobuf: a custom resource's 415
// lists protobuf, as kube-apiserver's does, though a body in it is refused.
func TestNegotiateInputListsConversionOnlyProtobuf(t *testing.T) {
	infos := []runtime.SerializerInfo{UnstructuredSerializers[0], UnstructuredSerializers[1], MetaProtobuf, UnstructuredSerializers[2]}
	for _, contentType := range []string{"text/plain", "application/vnd.kubernetes.protobuf"} {
		_, err := NegotiateInput(contentType, infos)
		want := "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor"
		if s := statusOf(t, err); s.Code != http.StatusUnsupportedMediaType || s.Message != want {
			t.Errorf("%s: got %d %q, want 415 %q", contentType, s.Code, s.Message, want)
		}
	}
}

func TestParseAccept(t *testing.T) {
	tests := []struct {
		header string
		want   []string // media types in preference order
	}{
		{"", nil},
		{" , ,", nil},
		{"application/json", []string{jsonType}},
		{"application/yaml;q=0.5, application/json", []string{jsonType, yamlType}},
		{"a/b;q=0.5, c/d;q=0.5, e/f", []string{"e/f", "a/b", "c/d"}},
		{"Application/JSON", []string{"Application/JSON"}},
		// As kube-apiserver's parser: every q is kept, one that does not
		// parse as 0.
		{"application/json;q=0", []string{jsonType}},
		{"application/json;q=2", []string{jsonType}},
		{"application/json;q=-1", []string{jsonType}},
		{"application/json;q=abc", []string{jsonType}},
		{"application/yaml;q=0, application/json;q=abc, application/vnd.kubernetes.protobuf;q=0.1", []string{protobufType, yamlType, jsonType}},
		{"application/json;q=0.001", []string{jsonType}},
	}
	for _, tc := range tests {
		var got []string
		for _, c := range parseAccept(tc.header) {
			got = append(got, c.mediaType)
			if _, ok := c.params["q"]; ok {
				t.Errorf("parseAccept(%q) kept q among the parameters: %v", tc.header, c.params)
			}
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("parseAccept(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
	c := parseAccept("application/json;as=Table;g=meta.k8s.io;v=v1")
	if len(c) != 1 || c[0].params["as"] != "Table" || c[0].params["g"] != "meta.k8s.io" || c[0].params["v"] != "v1" || c[0].q != 1 {
		t.Errorf("parseAccept kept %+v", c)
	}
}

func FuzzParseAccept(f *testing.F) {
	for _, seed := range []string{
		"", "*/*", "application/json", "application/yaml;q=0.5, application/json",
		"application/json;as=Table;g=meta.k8s.io;v=v1, application/json",
		"application/*", "Application/JSON", "text/plain", "application/json;q=0",
		"application/json;q=abc", "application/json;foo", `application/json;x="a,b"`,
		"*", ",,;;==", "application/vnd.kubernetes.protobuf;stream=watch",
	} {
		f.Add(seed)
	}
	infos := Factory.SupportedMediaTypes()
	f.Fuzz(func(t *testing.T, header string) {
		for _, c := range parseAccept(header) {
			if c.mediaType == "" {
				t.Fatalf("parseAccept(%q) kept an empty media type", header)
			}
		}
		r := httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil)
		r.Header["Accept"] = []string{header}
		for _, set := range [][]runtime.SerializerInfo{infos, UnstructuredSerializers} {
			info, err := NegotiateOutput(r, set)
			if err == nil {
				if info.MediaType == "" || info.Serializer == nil {
					t.Fatalf("NegotiateOutput(%q) succeeded with no media type", header)
				}
				continue
			}
			s := statusOf(t, err)
			if s.Code != http.StatusNotAcceptable {
				t.Fatalf("NegotiateOutput(%q) failed with %d %q", header, s.Code, s.Message)
			}
		}
		if info, err := NegotiateInput(header, infos); err == nil && info.MediaType == "" {
			t.Fatalf("NegotiateInput(%q) succeeded with no media type", header)
		}
	})
}
