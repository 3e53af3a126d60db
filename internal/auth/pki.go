// Package auth holds kapi's credentials and authentication: the CA, the
// serving and admin certificates it creates on first start, the kubeconfig
// it writes for the admin, and the filter that authenticates requests.
package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// AdminUser and AdminGroup are the identity of the admin certificate.
const (
	AdminUser  = "kapi-admin"
	AdminGroup = "system:masters"
)

const validity = 10 * 365 * 24 * time.Hour

// PKI is the set of credentials kept in the data directory.
type PKI struct {
	CA    *x509.Certificate
	caKey *ecdsa.PrivateKey
	CAPEM []byte
	// CACertFile and CAKeyFile are where the CA is kept, for the CSR
	// signing controller (kube-controller-manager's
	// --cluster-signing-cert-file and --cluster-signing-key-file).
	CACertFile, CAKeyFile string
	// Server is the serving certificate kapi's CA issued, served unless
	// UseServingFiles gives another (serving).
	Server  tls.Certificate
	serving *servingFiles
	// ServingCAPEM verifies the certificate served: CAPEM, or what
	// UseServingFiles finds.
	ServingCAPEM []byte
	// AdminCertPEM and AdminKeyPEM are the admin's client credentials.
	AdminCertPEM []byte
	AdminKeyPEM  []byte
	// FrontProxyCAPEM signs FrontProxyCertPEM, the client certificate
	// kapi presents when it proxies a request to an aggregated API
	// server; those servers trust the identity headers of a client that
	// CA verifies, as they trust kube-apiserver's front proxy.
	FrontProxyCAPEM   []byte
	FrontProxyCertPEM []byte
	FrontProxyKeyPEM  []byte
	// ServiceAccountKey signs service account tokens (sa.key, as
	// kube-apiserver's --service-account-signing-key-file).
	ServiceAccountKey *ecdsa.PrivateKey
}

// FrontProxyUser is the name in the front proxy's client certificate.
const FrontProxyUser = "front-proxy-client"

// LoadOrCreate reads the credentials in dir, creating whatever is missing.
// The serving certificate covers 127.0.0.1, ::1, localhost and host; it is
// reissued if it does not cover host.
func LoadOrCreate(dir, host string) (*PKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &PKI{}
	var err error
	if p.CA, p.caKey, err = loadOrCreate(dir, "ca", func() (*x509.Certificate, *ecdsa.PrivateKey, error) {
		return newCert(&x509.Certificate{
			Subject:               pkix.Name{CommonName: "kapi-ca"},
			IsCA:                  true,
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
			BasicConstraintsValid: true,
		}, nil, nil)
	}, nil); err != nil {
		return nil, err
	}
	p.CAPEM = pemCert(p.CA)
	p.ServingCAPEM = p.CAPEM
	p.CACertFile, p.CAKeyFile = filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")

	sans := servingSANs(host)
	serverCert, serverKey, err := loadOrCreate(dir, "server", func() (*x509.Certificate, *ecdsa.PrivateKey, error) {
		return newCert(&x509.Certificate{
			Subject:     pkix.Name{CommonName: "kapi"},
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			DNSNames:    sans.dns,
			IPAddresses: sans.ips,
		}, p.CA, p.caKey)
	}, func(c *x509.Certificate) bool { return sans.coveredBy(c) && c.CheckSignatureFrom(p.CA) == nil })
	if err != nil {
		return nil, err
	}
	p.Server = tls.Certificate{Certificate: [][]byte{serverCert.Raw}, PrivateKey: serverKey, Leaf: serverCert}

	adminCert, adminKey, err := loadOrCreate(dir, "admin", func() (*x509.Certificate, *ecdsa.PrivateKey, error) {
		return newCert(&x509.Certificate{
			Subject:     pkix.Name{CommonName: AdminUser, Organization: []string{AdminGroup}},
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}, p.CA, p.caKey)
	}, func(c *x509.Certificate) bool { return c.CheckSignatureFrom(p.CA) == nil })
	if err != nil {
		return nil, err
	}
	p.AdminCertPEM = pemCert(adminCert)
	if p.AdminKeyPEM, err = pemKey(adminKey); err != nil {
		return nil, err
	}
	if err := p.loadOrCreateFrontProxy(dir); err != nil {
		return nil, err
	}
	p.ServiceAccountKey, err = loadOrCreateKey(filepath.Join(dir, "sa.key"))
	return p, err
}

// loadOrCreateKey reads a private key, creating it if it is missing.
func loadOrCreateKey(path string) (*ecdsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		block, _ := pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("%s is not PEM", path)
		}
		return x509.ParseECPrivateKey(block.Bytes)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	keyPEM, err := pemKey(key)
	if err != nil {
		return nil, err
	}
	return key, writeFile(path, keyPEM, 0o600)
}

// loadOrCreateFrontProxy reads or creates the front proxy's CA (a CA of
// its own, so that kapi's client CA never vouches for identity headers)
// and its client certificate.
func (p *PKI) loadOrCreateFrontProxy(dir string) error {
	ca, caKey, err := loadOrCreate(dir, "front-proxy-ca", func() (*x509.Certificate, *ecdsa.PrivateKey, error) {
		return newCert(&x509.Certificate{
			Subject:               pkix.Name{CommonName: "kapi-front-proxy-ca"},
			IsCA:                  true,
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
			BasicConstraintsValid: true,
		}, nil, nil)
	}, nil)
	if err != nil {
		return err
	}
	cert, key, err := loadOrCreate(dir, "front-proxy-client", func() (*x509.Certificate, *ecdsa.PrivateKey, error) {
		return newCert(&x509.Certificate{
			Subject:     pkix.Name{CommonName: FrontProxyUser},
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}, ca, caKey)
	}, func(c *x509.Certificate) bool { return c.CheckSignatureFrom(ca) == nil })
	if err != nil {
		return err
	}
	p.FrontProxyCAPEM = pemCert(ca)
	p.FrontProxyCertPEM = pemCert(cert)
	p.FrontProxyKeyPEM, err = pemKey(key)
	return err
}

type sanSet struct {
	dns []string
	ips []net.IP
}

func servingSANs(host string) sanSet {
	s := sanSet{dns: []string{"localhost"}, ips: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		if !slices.ContainsFunc(s.ips, ip.Equal) {
			s.ips = append(s.ips, ip)
		}
	} else if host != "" && ip == nil && host != "localhost" {
		s.dns = append(s.dns, host)
	}
	return s
}

func (s sanSet) coveredBy(c *x509.Certificate) bool {
	for _, d := range s.dns {
		if !slices.Contains(c.DNSNames, d) {
			return false
		}
	}
	for _, ip := range s.ips {
		if !slices.ContainsFunc(c.IPAddresses, ip.Equal) {
			return false
		}
	}
	return time.Now().Before(c.NotAfter)
}

// loadOrCreate reads NAME.crt and NAME.key from dir, or creates them when
// they are missing or valid says they no longer fit.
func loadOrCreate(dir, name string, create func() (*x509.Certificate, *ecdsa.PrivateKey, error), valid func(*x509.Certificate) bool) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPath, keyPath := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	cert, key, err := load(certPath, keyPath)
	if err == nil && (valid == nil || valid(cert)) {
		return cert, key, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("reading %s credentials: %w", name, err)
	}
	cert, key, err = create()
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := pemKey(key)
	if err != nil {
		return nil, nil, err
	}
	if err := writeFile(keyPath, keyPEM, 0o600); err != nil {
		return nil, nil, err
	}
	return cert, key, writeFile(certPath, pemCert(cert), 0o644)
}

func load(certPath, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, fmt.Errorf("%s or %s is not PEM", certPath, keyPath)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	return cert, key, err
}

func newCert(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(validity)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func pemCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func pemKey(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// writeFile writes atomically, so a crash never leaves half a credential.
func writeFile(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ClientCAs is the pool client certificates must chain to.
func (p *PKI) ClientCAs() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.CA)
	return pool
}

// WriteKubeconfig writes a kubeconfig for the admin that talks to server
// (an https URL).
func (p *PKI) WriteKubeconfig(path, server string) error {
	b64 := base64.StdEncoding.EncodeToString
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kapi
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: kapi
  context:
    cluster: kapi
    user: %s
    namespace: default
current-context: kapi
`, server, b64(p.ServingCAPEM), AdminUser, b64(p.AdminCertPEM), b64(p.AdminKeyPEM), AdminUser)
	return writeFile(path, []byte(config), 0o600)
}

// TLSConfig is the server's TLS configuration: it asks for a client
// certificate but does not verify it, so that a request with a missing or
// foreign certificate gets a 401 Status from the authentication filter
// rather than a failed handshake, as in kube-apiserver. As kube-apiserver,
// it names the CAs clientCAs gives at each handshake as those it accepts,
// for clients (openssl, curl with several certificates) that choose their
// certificate by them.
func (p *PKI) TLSConfig(clientCAs func() *x509.CertPool) *tls.Config {
	config := &tls.Config{
		GetCertificate: p.serverCertificate,
		ClientAuth:     tls.RequestClientCert,
		MinVersion:     tls.VersionTLS12,
		NextProtos:     []string{"h2", "http/1.1"},
	}
	config.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		handshake := config.Clone()
		handshake.GetConfigForClient = nil
		handshake.ClientCAs = clientCAs()
		return handshake, nil
	}
	return config
}

// ClientCertificate issues a client certificate for a user with groups
// (the certificate's organisations), signed by the CA clients are
// authenticated with; it is not stored.
func (p *PKI) ClientCertificate(user string, groups ...string) (certPEM, keyPEM []byte, err error) {
	cert, key, err := newCert(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, p.CA, p.caKey)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = pemKey(key)
	return pemCert(cert), keyPEM, err
}
