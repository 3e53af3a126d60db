package auth

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// ClientCAs are the CAs client certificates chain to: the server's own
// and, when given, those of an operator's file (kube-apiserver's
// --client-ca-file), which is read again whenever it changes by
// kube-apiserver's own reloader, as kube-apiserver reads it.
type ClientCAs struct {
	pki  *PKI
	file *dynamiccertificates.DynamicFileCAContent // nil without a file

	current atomic.Pointer[caBundle]

	mu      sync.Mutex
	changed []func()
}

// caBundle is one state of the CAs: their PEM and their pool.
type caBundle struct {
	pem  []byte
	pool *x509.CertPool
}

// NewClientCAs returns the CAs of p, and of file when it is not empty.
func NewClientCAs(p *PKI, file string) (*ClientCAs, error) {
	c := &ClientCAs{pki: p}
	if file != "" {
		content, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", file)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		c.file = content
	}
	c.load()
	if c.file != nil {
		c.file.AddListener(c)
	}
	return c, nil
}

// Pool is the CAs' current pool; callers must not modify it.
func (c *ClientCAs) Pool() *x509.CertPool { return c.current.Load().pool }

// PEM is the CAs' current bundle: the server's CA, then the file's.
func (c *ClientCAs) PEM() []byte { return c.current.Load().pem }

// OnChange has f called after every change of the file's CAs.
func (c *ClientCAs) OnChange(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.changed = append(c.changed, f)
}

// Run watches the file until ctx ends; it returns at once without one.
func (c *ClientCAs) Run(ctx context.Context) {
	if c.file != nil {
		c.file.Run(ctx, 1)
	}
}

// Enqueue is called by the reloader with the file's new content, which it
// checked already.
func (c *ClientCAs) Enqueue() {
	c.load()
	c.mu.Lock()
	changed := append([]func(){}, c.changed...)
	c.mu.Unlock()
	for _, f := range changed {
		f()
	}
}

// load makes the current bundle of the server's CA and the file's (which
// the reloader has parsed already).
func (c *ClientCAs) load() {
	bundle, pool := bytes.Clone(c.pki.CAPEM), c.pki.ClientCAs()
	if c.file != nil {
		content := c.file.CurrentCABundleContent()
		bundle = append(bundle, content...)
		pool.AppendCertsFromPEM(content)
	}
	c.current.Store(&caBundle{pem: bundle, pool: pool})
}
