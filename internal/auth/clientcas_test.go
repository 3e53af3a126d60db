package auth

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestClientCAFileReadAgain: the CAs of a client CA file authenticate
// their clients along with the server's own, and a file written over it
// replaces them while the server runs (kube-apiserver's --client-ca-file
// reloads so): the new CA's clients are accepted, the old one's refused
// though it was accepted and remembered before, and the bundle published
// follows.
func TestClientCAFileReadAgain(t *testing.T) {
	own, first, second := newPKI(t), newPKI(t), newPKI(t)
	file := filepath.Join(t.TempDir(), "client-ca.crt")
	if err := os.WriteFile(file, first.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cas, err := NewClientCAs(own, file)
	if err != nil {
		t.Fatal(err)
	}
	var changes atomic.Int32
	cas.OnChange(func() { changes.Add(1) })
	a := NewAuthenticatorOf(cas.Pool)
	accepts := func(p *PKI) bool {
		_, ok := a.AuthenticateRequest(requestWith("/api", adminCert(t, p)))
		return ok
	}
	if !accepts(own) || !accepts(first) || accepts(second) {
		t.Fatalf("before the change: own %v, first %v, second %v; want true, true, false", accepts(own), accepts(first), accepts(second))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cas.Run(ctx)
	if err := os.WriteFile(file, second.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !accepts(second); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the CA written over the file does not authenticate its clients")
		}
	}
	if accepts(first) || !accepts(own) {
		t.Errorf("after the change: first %v, own %v; want false, true", accepts(first), accepts(own))
	}
	if changes.Load() == 0 {
		t.Error("no change reported")
	}
	if pem := cas.PEM(); !bytes.Contains(pem, own.CAPEM) || !bytes.Contains(pem, second.CAPEM) || bytes.Contains(pem, first.CAPEM) {
		t.Errorf("bundle after the change:\n%s", pem)
	}
}

// TestClientCAFileThatDoesNotLoad: a file without certificates is refused
// at the start, named by its flag.
func TestClientCAFileThatDoesNotLoad(t *testing.T) {
	file := filepath.Join(t.TempDir(), "client-ca.crt")
	if err := os.WriteFile(file, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewClientCAs(newPKI(t), file); err == nil || !bytes.Contains([]byte(err.Error()), []byte("--client-ca-file")) {
		t.Fatalf("a file without certificates: %v", err)
	}
}
