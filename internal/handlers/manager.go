package handlers

import (
	"net/http"
	"strings"

	"github.com/kapi-dev/kapi/internal/pipeline"
)

// managerName is the field manager of a write: the fieldManager option, or
// else the client's user agent up to its first "/", or "unknown" when
// that is empty, as kube-apiserver names it.
func managerName(r *http.Request) string {
	if m := r.URL.Query().Get("fieldManager"); m != "" {
		return m
	}
	agent := strings.Split(r.UserAgent(), "/")[0]
	if len(agent) > 128 {
		agent = agent[:128]
	}
	if agent == "" {
		return "unknown"
	}
	return agent
}

// asked are a write's dryRun, fieldManager and fieldValidation options as
// the request gave them, for admission.
func asked(r *http.Request) pipeline.Asked {
	q := r.URL.Query()
	return pipeline.Asked{DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")}
}
