package respond

import (
	"net/http"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Warning adds a Warning header in the form kube-apiserver writes
// (`299 - "message"`), once per message: a retried update prepares its
// object again and must not repeat its warnings.
func Warning(w http.ResponseWriter, msg string) {
	value, err := utilnet.NewWarningHeader(299, "-", msg)
	if err != nil {
		return // a message that cannot be a header value
	}
	for _, v := range w.Header().Values("Warning") {
		if v == value {
			return
		}
	}
	w.Header().Add("Warning", value)
}
