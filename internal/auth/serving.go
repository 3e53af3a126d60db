package auth

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"sync/atomic"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// servingFiles is a serving certificate an operator gives in files (as
// kube-apiserver's --tls-cert-file and --tls-private-key-file), read
// again when either file changes by kube-apiserver's own reloader (a file
// watch, and a look every minute).
type servingFiles struct {
	content *dynamiccertificates.DynamicCertKeyPairContent
	current atomic.Pointer[tls.Certificate]
}

// UseServingFiles makes kapi serve the certificate and key in certFile and
// keyFile instead of the one its CA issued. The certificates that verify
// it, which the admin kubeconfig and the kube-root-ca.crt ConfigMaps
// carry, become those after the first in certFile (its chain), or the
// certificate itself when it comes alone: a client trusting it verifies
// that certificate and no other.
func (p *PKI) UseServingFiles(certFile, keyFile string) error {
	content, err := dynamiccertificates.NewDynamicServingContentFromFiles("serving-cert", certFile, keyFile)
	if err != nil {
		return fmt.Errorf("--tls-cert-file %s, --tls-private-key-file %s: %w", certFile, keyFile, err)
	}
	files := &servingFiles{content: content}
	if err := files.load(); err != nil {
		return err
	}
	content.AddListener(files)
	p.serving = files
	p.ServingCAPEM = servingCAs(files.current.Load())
	return nil
}

// WatchServingFiles reads the serving files again whenever they change
// while ctx lasts; a pair that does not load (a certificate written before
// its key) is logged and the one served kept. It returns at once when
// kapi serves its own certificate.
func (p *PKI) WatchServingFiles(ctx context.Context) {
	if p.serving == nil {
		return
	}
	p.serving.content.Run(ctx, 1)
}

// Enqueue is called by the reloader with the pair it has just read, which
// it checked already.
func (f *servingFiles) Enqueue() {
	if err := f.load(); err != nil {
		utilruntime.HandleError(err)
	}
}

// load parses the reloader's current pair into the certificate served.
func (f *servingFiles) load() error {
	cert, key := f.content.CurrentCertKeyContent()
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return err
	}
	f.current.Store(&pair)
	return nil
}

// servingCAs is the PEM of the certificates that verify pair: its chain
// after the leaf, or the leaf.
func servingCAs(pair *tls.Certificate) []byte {
	chain := pair.Certificate
	if len(chain) > 1 {
		chain = chain[1:]
	}
	var out bytes.Buffer
	for _, der := range chain {
		pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	}
	return out.Bytes()
}

// serverCertificate is the tls.Config's GetCertificate: the files' pair
// when given, else kapi's own.
func (p *PKI) serverCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if p.serving != nil {
		return p.serving.current.Load(), nil
	}
	return &p.Server, nil
}
