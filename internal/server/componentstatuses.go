package server

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/internal/controllers"
)

// componentStatuses reports what kube-apiserver's deprecated
// componentstatuses report: the controller manager and the scheduler,
// healthy when they run in this server and otherwise probed where
// kube-apiserver probes them (their secure ports on loopback, where one
// running beside kapi answers), and the storage, as etcd-0 (the name of
// its health check, whatever the backend).
func (s *Server) componentStatuses(selection controllers.Selection) func(context.Context) []corev1.ComponentStatus {
	return func(ctx context.Context) []corev1.ComponentStatus {
		storage := healthOf(s.health.storage(nil))
		return []corev1.ComponentStatus{
			componentStatus("controller-manager", probeUnlessInProcess(ctx, selection.ManagesControllers(), "https://127.0.0.1:10257/healthz")),
			componentStatus("scheduler", probeUnlessInProcess(ctx, selection.Enabled(controllers.Scheduler), "https://127.0.0.1:10259/healthz")),
			componentStatus("etcd-0", storage),
		}
	}
}

// componentHealth is one component's condition: healthy with a message,
// or not with why.
type componentHealth struct {
	ok      bool
	message string
}

func healthOf(err error) componentHealth {
	if err != nil {
		return componentHealth{message: err.Error()}
	}
	return componentHealth{ok: true, message: "ok"}
}

func componentStatus(name string, h componentHealth) corev1.ComponentStatus {
	status := corev1.ConditionFalse
	if h.ok {
		status = corev1.ConditionTrue
	}
	return corev1.ComponentStatus{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Conditions: []corev1.ComponentCondition{{Type: corev1.ComponentHealthy, Status: status, Message: h.message}},
	}
}

// probeClient asks a component's health endpoint, as kube-apiserver's
// prober does: over TLS without verifying the component's certificate.
var probeClient = &http.Client{
	Timeout:   5 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // kube-apiserver's prober does not verify either
}

func probeUnlessInProcess(ctx context.Context, inProcess bool, url string) componentHealth {
	if inProcess {
		return componentHealth{ok: true, message: "ok"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return healthOf(err)
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return healthOf(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 10<<10))
	return componentHealth{ok: resp.StatusCode >= 200 && resp.StatusCode < 400, message: string(body)}
}
