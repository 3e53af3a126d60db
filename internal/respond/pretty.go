package respond

import (
	"net/http"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/codecs"
)

// Pretty reports whether a JSON answer to r is indented, as kube-apiserver
// decides it: when its Accept asks for pretty=1 JSON, else by the pretty
// query parameter when it is given, otherwise for a browser, curl or Wget.
func Pretty(r *http.Request) bool {
	// Every JSON answer asks: the header is parsed only when it may say so.
	if strings.Contains(r.Header.Get("Accept"), "pretty") && codecs.AcceptParam(r, runtime.ContentTypeJSON, "pretty") == "1" {
		return true
	}
	if strings.Contains(r.URL.RawQuery, "pretty") {
		if v := r.URL.Query().Get("pretty"); v != "" {
			pretty, _ := strconv.ParseBool(v)
			return pretty
		}
	}
	agent := r.UserAgent()
	return strings.HasPrefix(agent, "curl") || strings.HasPrefix(agent, "Wget") || strings.HasPrefix(agent, "Mozilla/5.0")
}
