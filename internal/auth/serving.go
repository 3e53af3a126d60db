package auth

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"
)

// servingFiles is a serving certificate an operator gives in files (as
// kube-apiserver's --tls-cert-file and --tls-private-key-file), read
// again when either file changes, as kube-apiserver reloads its own.
type servingFiles struct {
	certFile, keyFile string
	current           atomic.Pointer[tls.Certificate]
	// modified are the files' modification times when last read.
	modified [2]time.Time
}

// UseServingFiles makes kapi serve the certificate and key in certFile and
// keyFile instead of the one its CA issued. The certificates that verify
// it, which the admin kubeconfig and the kube-root-ca.crt ConfigMaps
// carry, become those after the first in certFile (its chain), or the
// certificate itself when it comes alone: a client trusting it verifies
// that certificate and no other.
func (p *PKI) UseServingFiles(certFile, keyFile string) error {
	files := &servingFiles{certFile: certFile, keyFile: keyFile}
	if err := files.read(); err != nil {
		return err
	}
	p.serving = files
	p.ServingCAPEM = servingCAs(files.current.Load())
	return nil
}

// WatchServingFiles reads the serving files again every interval while ctx
// lasts, when their modification times change; a pair that does not load
// (a certificate written before its key) is logged and the one served
// kept. It returns at once when kapi serves its own certificate.
func (p *PKI) WatchServingFiles(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	if p.serving == nil {
		return
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if !p.serving.changed() {
			continue
		}
		if err := p.serving.read(); err != nil {
			logger.Error("reading the serving certificate again failed; serving the previous one", "err", err)
			continue
		}
		logger.Info("serving certificate read again", "file", p.serving.certFile)
	}
}

func (f *servingFiles) read() error {
	modified, err := modTimes(f.certFile, f.keyFile)
	if err != nil {
		return err
	}
	pair, err := tls.LoadX509KeyPair(f.certFile, f.keyFile)
	if err != nil {
		return fmt.Errorf("--tls-cert-file %s, --tls-private-key-file %s: %w", f.certFile, f.keyFile, err)
	}
	f.modified = modified
	f.current.Store(&pair)
	return nil
}

func (f *servingFiles) changed() bool {
	modified, err := modTimes(f.certFile, f.keyFile)
	return err == nil && modified != f.modified
}

// modTimes are the modification times of a certificate and key file.
func modTimes(certFile, keyFile string) (times [2]time.Time, err error) {
	for i, path := range [2]string{certFile, keyFile} {
		info, err := os.Stat(path)
		if err != nil {
			return times, err
		}
		times[i] = info.ModTime()
	}
	return times, nil
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
