package filters

import (
	"net/http"

	"k8s.io/apiserver/pkg/warning"

	"github.com/kapi-dev/kapi/internal/respond"
)

// withWarnings lets the code a request runs (kube's strategies and
// validation report deprecated fields and such through warning.AddWarning
// on the request's context) answer with Warning headers.
func withWarnings(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := warning.WithWarningRecorder(r.Context(), headerRecorder{w})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// headerRecorder turns warnings into headers of the response, which is
// written only after the object has been prepared.
type headerRecorder struct{ w http.ResponseWriter }

func (h headerRecorder) AddWarning(_, text string) {
	if text != "" {
		respond.Warning(h.w, text)
	}
}
