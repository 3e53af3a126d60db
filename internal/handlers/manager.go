package handlers

import (
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"

	"github.com/kapi-dev/kapi/internal/pipeline"
)

// managerName is the field manager of a write: the fieldManager option, or
// else the client's user agent up to its first "/", or "unknown" when
// that is empty, as kube-apiserver names it.
func managerName(r *http.Request) string {
	if m := r.URL.Query().Get("fieldManager"); m != "" {
		return m
	}
	if agent := agentManager(r.UserAgent()); agent != "" {
		return agent
	}
	return "unknown"
}

// agentManager is the manager name kube-apiserver makes of a user agent:
// the product before the first "/", without its unprintable characters
// (an invalid byte is read as U+FFFD, which is printable), and only the
// whole characters that fit in a manager name's 128 bytes.
func agentManager(agent string) string {
	product, _, _ := strings.Cut(agent, "/")
	var name strings.Builder
	for _, r := range product {
		if !unicode.IsPrint(r) {
			continue
		}
		if name.Len()+utf8.RuneLen(r) > metav1validation.FieldManagerMaxLength {
			break
		}
		name.WriteRune(r)
	}
	return name.String()
}

// asked are a write's dryRun, fieldManager and fieldValidation options as
// the request gave them, for admission.
func asked(r *http.Request) pipeline.Asked {
	q := r.URL.Query()
	return pipeline.Asked{DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")}
}
