package filters

import (
	"context"
	"net/http"

	"k8s.io/apiserver/pkg/warning"

	"github.com/kapi-dev/kapi/internal/respond"
)

// recordWarnings lets the code a request runs (kube's strategies and
// validation report deprecated fields and such through warning.AddWarning
// on the request's context) answer with Warning headers.
func recordWarnings(ctx context.Context, w http.ResponseWriter) context.Context {
	return warning.WithWarningRecorder(ctx, headerRecorder{w})
}

// headerRecorder turns warnings into headers of the response, which is
// written only after the object has been prepared.
type headerRecorder struct{ w http.ResponseWriter }

func (h headerRecorder) AddWarning(_, text string) {
	if text != "" {
		respond.Warning(h.w, text)
	}
}
