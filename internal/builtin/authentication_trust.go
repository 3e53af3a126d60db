package builtin

import (
	"context"
	"encoding/json"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/internal/pipeline"
)

// AuthenticationTrust is what aggregated API servers need to authenticate
// kapi's requests, as kube-apiserver publishes it.
type AuthenticationTrust struct {
	ClientCA     []byte // verifies clients' certificates
	FrontProxyCA []byte // verifies the front proxy, whose identity headers are trusted
	// FrontProxyNames are the names the front proxy's certificate may have.
	FrontProxyNames []string
}

// EnsureAuthenticationTrust keeps the kube-system/extension-apiserver-
// authentication ConfigMap that kube-apiserver's cluster authentication
// trust controller maintains: an aggregated server (built on
// k8s.io/apiserver) reads from it which CAs and request headers to trust.
func EnsureAuthenticationTrust(ctx context.Context, p *pipeline.Pipeline, trust AuthenticationTrust) error {
	want := authenticationTrustConfigMap(trust)
	store := p.Registry().Snapshot().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	current, err := store.Get(ctx, want.Namespace, want.Name)
	if apierrors.IsNotFound(err) {
		_, err = p.CreateObject(ctx, want, "kube-apiserver")
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	if err != nil || maps.Equal(current.(*corev1.ConfigMap).Data, want.Data) {
		return err
	}
	_, err = p.Update(ctx, store, want.Namespace, want.Name, pipeline.Options{Manager: "kube-apiserver"},
		func(obj runtime.Object) (runtime.Object, error) {
			cm := obj.DeepCopyObject().(*corev1.ConfigMap)
			cm.Data = want.Data
			return cm, nil
		})
	return err
}

func authenticationTrustConfigMap(trust AuthenticationTrust) *corev1.ConfigMap {
	list := func(values ...string) string {
		data, _ := json.Marshal(values)
		return string(data)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "extension-apiserver-authentication", Namespace: metav1.NamespaceSystem},
		Data: map[string]string{
			"client-ca-file":                     string(trust.ClientCA),
			"requestheader-client-ca-file":       string(trust.FrontProxyCA),
			"requestheader-allowed-names":        list(trust.FrontProxyNames...),
			"requestheader-username-headers":     list("X-Remote-User"),
			"requestheader-group-headers":        list("X-Remote-Group"),
			"requestheader-extra-headers-prefix": list("X-Remote-Extra-"),
		},
	}
}
