package auth

import (
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/emicklei/go-restful/v3"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/kubernetes/pkg/routes"
	"k8s.io/kubernetes/pkg/serviceaccount"

	"github.com/kapi-dev/kapi/internal/respond"
)

// DefaultIssuer is the issuer of service account tokens, as kubeadm's
// default --service-account-issuer; it is also the audience the API
// accepts.
const DefaultIssuer = "https://kubernetes.default.svc.cluster.local"

// TokenOptions are kube-apiserver's flags for service account tokens.
type TokenOptions struct {
	// Issuers (--service-account-issuer): the first is the issuer of the
	// tokens made, all are accepted; DefaultIssuer when none is given.
	Issuers []string
	// APIAudiences (--api-audiences) are the API's own audiences: a token
	// for none of them does not authenticate to it. The issuers when
	// none is given.
	APIAudiences []string
	// SigningKeyFile (--service-account-signing-key-file) holds the PEM
	// private key (RSA or ECDSA) tokens are signed with, instead of
	// kapi's own key.
	SigningKeyFile string
	// KeyFiles (--service-account-key-file) hold more public keys (or
	// private keys, or certificates) whose tokens are accepted and
	// published in the key set: the keys of an earlier signing key, while
	// its tokens are still in use.
	KeyFiles []string
	// MaxExpiration (--service-account-max-token-expiration) shortens a
	// TokenRequest asking for longer; 0 means no maximum, otherwise from
	// an hour to 2^32 seconds.
	MaxExpiration time.Duration
	// ExtendExpiration (--service-account-extend-token-expiration, on in
	// kube-apiserver by default) makes the tokens of pods' projected
	// volumes, which ask for kube's default hour and seven seconds, last
	// a year but warn after their hour.
	ExtendExpiration bool
	// JWKSURI (--service-account-jwks-uri) is the key set's address that
	// the OpenID discovery document names, instead of kapi's own.
	JWKSURI string
}

// Validate checks the options as kube-apiserver checks its flags, with its
// messages.
func (o TokenOptions) Validate() error {
	var errs []error
	seen := map[string]bool{}
	for _, issuer := range o.Issuers {
		if strings.Contains(issuer, ":") {
			if _, err := url.Parse(issuer); err != nil {
				errs = append(errs, fmt.Errorf("service-account-issuer %q contained a ':' but was not a valid URL: %v", issuer, err))
				continue
			}
		}
		if issuer == "" {
			errs = append(errs, errors.New("service-account-issuer should not be an empty string"))
			continue
		}
		if seen[issuer] {
			errs = append(errs, fmt.Errorf("service-account-issuer %q is already specified", issuer))
		}
		seen[issuer] = true
	}
	if o.JWKSURI != "" {
		if u, err := url.Parse(o.JWKSURI); err != nil {
			errs = append(errs, fmt.Errorf("service-account-jwks-uri must be a valid URL: %v", err))
		} else if u.Scheme != "https" {
			errs = append(errs, fmt.Errorf("service-account-jwks-uri requires https scheme, parsed as: %v", u.String()))
		}
	}
	if o.MaxExpiration != 0 && (o.MaxExpiration < time.Hour || o.MaxExpiration > time.Duration(1<<32)*time.Second) {
		errs = append(errs, errors.New("the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"))
	}
	return errors.Join(errs...)
}

// Warnings are kube-apiserver's warnings of options that work together
// otherwise than one may think: a maximum expiration below the life of
// the tokens it extends.
func (o TokenOptions) Warnings() []string {
	if !o.ExtendExpiration || o.MaxExpiration == 0 {
		return nil
	}
	var warnings []string
	if o.MaxExpiration < serviceaccount.WarnOnlyBoundTokenExpirationSeconds*time.Second {
		warnings = append(warnings, fmt.Sprintf("service-account-extend-token-expiration is true, in order to correctly trigger safe transition logic, service-account-max-token-expiration must be set longer than %d seconds (currently %s)", serviceaccount.WarnOnlyBoundTokenExpirationSeconds, o.MaxExpiration))
	}
	if o.MaxExpiration < serviceaccount.ExpirationExtensionSeconds*time.Second {
		warnings = append(warnings, fmt.Sprintf("service-account-extend-token-expiration is true, enabling tokens valid up to %d seconds, which is longer than service-account-max-token-expiration set to %s", serviceaccount.ExpirationExtensionSeconds, o.MaxExpiration))
	}
	return warnings
}

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
	// MaxExpirationSeconds shortens longer token requests (0: none).
	MaxExpirationSeconds int64
	// ExtendExpiration extends the tokens of pods' projected volumes to a
	// year, warning after the hour they asked for.
	ExtendExpiration bool
	Generator        serviceaccount.TokenGenerator
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
	// configuration and key set) others verify the tokens with; nil, for
	// DiscoveryError, when the issuer is no https URL.
	Discovery      http.Handler
	DiscoveryError error
}

// NewServiceAccountTokens signs with opts' signing key, or key when it
// names none; getter looks up the objects a token names, and secrets
// labels the Secrets whose tokens are used.
func NewServiceAccountTokens(opts TokenOptions, key crypto.Signer, externalAddress string, getter serviceaccount.ServiceAccountTokenGetter, secrets typedcorev1.SecretsGetter) (*ServiceAccountTokens, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	issuers := opts.Issuers
	if len(issuers) == 0 {
		issuers = []string{DefaultIssuer}
	}
	audiences := authenticator.Audiences(opts.APIAudiences)
	if len(audiences) == 0 {
		audiences = authenticator.Audiences(issuers)
	}
	if opts.SigningKeyFile != "" {
		signingKey, err := signingKeyFromFile(opts.SigningKeyFile)
		if err != nil {
			return nil, err
		}
		key = signingKey
	}
	publicKeys, err := verifyingKeys(key, opts.KeyFiles)
	if err != nil {
		return nil, err
	}
	generator, err := serviceaccount.JWTTokenGenerator(issuers[0], key)
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
	keys, err := serviceaccount.StaticPublicKeysGetter(publicKeys)
	if err != nil {
		return nil, err
	}
	// As kube-apiserver, an issuer the OpenID discovery documents cannot
	// name (not an https URL) leaves them unserved, tokens working.
	var discovery http.Handler
	metadata, discoveryErr := serviceaccount.NewOpenIDMetadataProvider(issuers[0], opts.JWKSURI, externalAddress, keys)
	if discoveryErr == nil {
		container := restful.NewContainer()
		container.ServiceErrorHandler(respond.RouteError)
		routes.NewOpenIDMetadataServer(metadata).Install(container)
		discovery = container
	}
	return &ServiceAccountTokens{
		Issuer: issuers[0], Audiences: audiences,
		MaxExpirationSeconds: int64(opts.MaxExpiration / time.Second), ExtendExpiration: opts.ExtendExpiration,
		Generator: generator, LegacyGenerator: legacyGenerator,
		Authenticator: serviceaccount.JWTTokenAuthenticator(issuers, keys, audiences, serviceaccount.NewValidator(getter)),
		Legacy:        serviceaccount.JWTTokenAuthenticator([]string{serviceaccount.LegacyIssuer}, keys, audiences, legacyValidator),
		Discovery:     discovery, DiscoveryError: discoveryErr,
	}, nil
}

// signingKeyFromFile reads --service-account-signing-key-file.
func signingKeyFromFile(path string) (crypto.Signer, error) {
	key, err := keyutil.PrivateKeyFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to parse service-account-issuer-key-file: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("failed to parse service-account-issuer-key-file: %T is not a signing key", key)
	}
	return signer, nil
}

// verifyingKeys are the public keys tokens are accepted from: the signing
// key's, then those of the key files (each once).
func verifyingKeys(signing crypto.Signer, keyFiles []string) ([]interface{}, error) {
	keys := []interface{}{signing.Public()}
	for _, path := range keyFiles {
		fileKeys, err := keyutil.PublicKeysFromFile(path)
		if err != nil {
			return nil, err
		}
		keys = append(keys, fileKeys...)
	}
	seen := map[string]bool{} // by DER encoding
	var unique []interface{}
	for _, key := range keys {
		der, err := x509.MarshalPKIXPublicKey(key)
		if err != nil {
			return nil, fmt.Errorf("service account key: %w", err)
		}
		if !seen[string(der)] {
			seen[string(der)] = true
			unique = append(unique, key)
		}
	}
	return unique, nil
}
