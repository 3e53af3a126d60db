package e2e

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// TestWatchOverWebSocket: a watch that asks to upgrade to a WebSocket (as
// browsers' clients do) gets each event as one text message, as from
// kube-apiserver, and ends at its timeout.
func TestWatchOverWebSocket(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	tlsConfig, err := rest.TLSConfigFor(k.config)
	if err != nil {
		t.Fatal(err)
	}
	host, err := url.Parse(k.config.Host)
	if err != nil {
		t.Fatal(err)
	}
	config, err := websocket.NewConfig("wss://"+host.Host+"/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=10", "http://localhost")
	if err != nil {
		t.Fatal(err)
	}
	config.TlsConfig = tlsConfig
	ws, err := websocket.DialConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if _, err := k.clientset().CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "over-ws"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ws.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		var message string
		if err := websocket.Message.Receive(ws, &message); err != nil {
			t.Fatalf("no event for the new configmap: %v", err)
		}
		if strings.Count(strings.TrimSuffix(message, "\n"), "\n") != 0 {
			t.Fatalf("a message holds more than one event: %q", message)
		}
		var event metav1.WatchEvent
		if err := json.Unmarshal([]byte(message), &event); err != nil {
			t.Fatalf("a message that is no watch event: %q: %v", message, err)
		}
		var cm corev1.ConfigMap
		if err := json.Unmarshal(event.Object.Raw, &cm); err != nil {
			t.Fatal(err)
		}
		if event.Type == "ADDED" && cm.Name == "over-ws" {
			break
		}
	}
	var rest string
	if err := websocket.Message.Receive(ws, &rest); err == nil {
		t.Errorf("a message after the only change: %q", rest)
	}
}
