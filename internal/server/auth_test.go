package server

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/internal/auth"
)

// TestClientCAFile: client certificates of the CAs in --client-ca-file
// authenticate (CN the user, O the groups) besides kapi's own; without it
// they do not.
func TestClientCAFile(t *testing.T) {
	other, err := auth.LoadOrCreate(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, other.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := other.ClientCertificate("carol", "devs")
	if err != nil {
		t.Fatal(err)
	}
	whoami := func(s *Server) (*authenticationv1.SelfSubjectReview, error) {
		cfg := rest.AnonymousClientConfig(restConfig(t, s.Kubeconfig))
		cfg.CertData, cfg.KeyData = certPEM, keyPEM
		return kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(
			context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	}
	with, err := Start(context.Background(), Config{
		DataDir: t.TempDir(), Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler),
		OpenStorage: StorageBackend("memory", "", nil), Controllers: onlyLifecycle, ClientCAFile: caFile,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { with.Shutdown(context.Background()) })
	review, err := whoami(with)
	if err != nil {
		t.Fatal(err)
	}
	if info := review.Status.UserInfo; info.Username != "carol" || len(info.Groups) != 2 || info.Groups[0] != "devs" {
		t.Errorf("authenticated as %+v", info)
	}
	publishes := func(ca []byte) bool {
		cm, err := kubernetes.NewForConfigOrDie(restConfig(t, with.Kubeconfig)).CoreV1().ConfigMaps("kube-system").Get(
			context.Background(), "extension-apiserver-authentication", metav1.GetOptions{})
		return err == nil && strings.Contains(cm.Data["client-ca-file"], string(ca))
	}
	if !publishes(other.CAPEM) {
		t.Error("extension-apiserver-authentication does not carry the file's CA")
	}
	// A CA written over the file replaces the first, as kube-apiserver
	// reads its file again: carol's certificate no longer authenticates,
	// and the ConfigMap follows.
	third, err := auth.LoadOrCreate(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(caFile, third.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err := whoami(with)
		if apierrors.IsUnauthorized(err) && publishes(third.CAPEM) && !publishes(other.CAPEM) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the file changed: %v, the new CA published %v", err, publishes(third.CAPEM))
		}
	}
	without := startServer(t, onlyLifecycle...)
	if _, err := whoami(without); !apierrors.IsUnauthorized(err) {
		t.Errorf("without --client-ca-file: %v, want 401", err)
	}
}
