package respond

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestErrorAfterTheDeadline: an error written once the request's time ran
// out is kube-apiserver's 504 Timeout, whatever the handler failed with
// (its timeout filter answers for the handler); before, the error itself.
func TestErrorAfterTheDeadline(t *testing.T) {
	for name, c := range map[string]struct {
		deadline time.Duration
		code     int
		reason   metav1.StatusReason
	}{
		"in time":  {time.Hour, http.StatusInternalServerError, ""},
		"too late": {-time.Second, http.StatusGatewayTimeout, metav1.StatusReasonTimeout},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), c.deadline)
		r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil).WithContext(ctx)
		w := httptest.NewRecorder()
		Error(w, r, errors.New("the storage gave up"))
		cancel()
		var status metav1.Status
		if err := json.Unmarshal(w.Body.Bytes(), &status); err != nil {
			t.Fatalf("%s: %v: %s", name, err, w.Body)
		}
		if w.Code != c.code || status.Reason != c.reason {
			t.Errorf("%s: %d %+v", name, w.Code, status)
		}
		if c.reason == metav1.StatusReasonTimeout && status.Message != "Timeout: request did not complete within the allotted timeout" {
			t.Errorf("%s: message %q", name, status.Message)
		}
	}
}
