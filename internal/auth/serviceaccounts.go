package auth

import (
	"crypto/ecdsa"
	"net/http"

	"github.com/emicklei/go-restful/v3"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/kubernetes/pkg/routes"
	"k8s.io/kubernetes/pkg/serviceaccount"

	"github.com/kapi-dev/kapi/internal/respond"
)

// DefaultIssuer is the issuer of service account tokens, as kubeadm's
// default --service-account-issuer; it is also the audience the API
// accepts.
const DefaultIssuer = "https://kubernetes.default.svc.cluster.local"

// ServiceAccountTokens issues the JWTs of service accounts (TokenRequest)
// and authenticates them, with kube-apiserver's own generator, claims and
// validator: a token is accepted while it has not expired and the service
// account (and the pod, secret or node it is bound to) still exists with
// the same UID.
type ServiceAccountTokens struct {
	Issuer string
	// Audiences are the API's own: a token for another audience does not
	// authenticate to it.
	Audiences authenticator.Audiences
	Generator serviceaccount.TokenGenerator
	// LegacyGenerator signs the long-lived tokens kube-controller-manager's
	// tokens controller puts in Secrets of type
	// kubernetes.io/service-account-token, with the legacy issuer.
	LegacyGenerator serviceaccount.TokenGenerator
	// Authenticator authenticates bearer tokens that are service account
	// tokens.
	Authenticator authenticator.Token
	// Legacy authenticates the tokens of Secrets: as kube-apiserver's,
	// while the Secret still holds the token and the service account
	// exists with the token's UID, labelling the Secret with the day it
	// was last used.
	Legacy authenticator.Token
	// Discovery serves the OpenID discovery documents (issuer
	// configuration and key set) others verify the tokens with.
	Discovery http.Handler
}

// NewServiceAccountTokens signs with key; getter looks up the objects a
// token names, and secrets labels the Secrets whose tokens are used.
func NewServiceAccountTokens(key *ecdsa.PrivateKey, issuer, externalAddress string, getter serviceaccount.ServiceAccountTokenGetter, secrets typedcorev1.SecretsGetter) (*ServiceAccountTokens, error) {
	generator, err := serviceaccount.JWTTokenGenerator(issuer, key)
	if err != nil {
		return nil, err
	}
	legacyGenerator, err := serviceaccount.JWTTokenGenerator(serviceaccount.LegacyIssuer, key)
	if err != nil {
		return nil, err
	}
	serviceaccount.RegisterMetrics() // the tokens' use, as kube-apiserver counts it
	legacyValidator, err := serviceaccount.NewLegacyValidator(true, getter, secrets)
	if err != nil {
		return nil, err
	}
	keys, err := serviceaccount.StaticPublicKeysGetter([]interface{}{&key.PublicKey})
	if err != nil {
		return nil, err
	}
	audiences := authenticator.Audiences{issuer}
	metadata, err := serviceaccount.NewOpenIDMetadataProvider(issuer, "", externalAddress, keys)
	if err != nil {
		return nil, err
	}
	discovery := restful.NewContainer()
	discovery.ServiceErrorHandler(respond.RouteError)
	routes.NewOpenIDMetadataServer(metadata).Install(discovery)
	return &ServiceAccountTokens{
		Issuer: issuer, Audiences: audiences, Generator: generator, LegacyGenerator: legacyGenerator,
		Authenticator: serviceaccount.JWTTokenAuthenticator([]string{issuer}, keys, audiences, serviceaccount.NewValidator(getter)),
		Legacy:        serviceaccount.JWTTokenAuthenticator([]string{serviceaccount.LegacyIssuer}, keys, audiences, legacyValidator),
		Discovery:     discovery,
	}, nil
}
