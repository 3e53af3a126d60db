// Package server assembles kapi: storage, the API handlers, the filters and
// the HTTPS listener, and creates what a fresh data directory needs.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/internal/auth"
	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/controllers"
	"github.com/kapi-dev/kapi/internal/handlers"
	"github.com/kapi-dev/kapi/internal/resources"
	"github.com/kapi-dev/kapi/internal/storage"
	"github.com/kapi-dev/kapi/internal/storage/pebble"
)

// Config says where kapi keeps its data and where it listens.
type Config struct {
	DataDir string
	Listen  string // host:port
	Logger  *log.Logger
	// HistoryWindow is how long past revisions stay readable and
	// watchable (default 5 minutes).
	HistoryWindow time.Duration
	// MinRequestTimeout bounds long watches (default 30 minutes).
	MinRequestTimeout time.Duration
	// BookmarkInterval is how often watches get bookmarks (default 1 minute).
	BookmarkInterval time.Duration
}

// Server is a running kapi.
type Server struct {
	cfg      Config
	store    storage.Store
	http     *http.Server
	listener net.Listener
	done     chan error
	stop     context.CancelFunc // ends the caches and the compactor
	// URL is the https address clients use.
	URL string
	// Kubeconfig is the path of the admin kubeconfig.
	Kubeconfig string
}

// bootstrapNamespaces exist from the first start on.
var bootstrapNamespaces = []string{
	metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease,
}

// Start opens the data directory and starts serving; it returns once the
// server accepts requests.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = log.New(os.Stderr, "kapi: ", log.LstdFlags)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %w", cfg.Listen, err)
	}
	pki, err := auth.LoadOrCreate(filepath.Join(cfg.DataDir, "pki"), host)
	if err != nil {
		return nil, err
	}
	store, err := pebble.Open(filepath.Join(cfg.DataDir, "db"))
	if err != nil {
		return nil, err
	}
	if cfg.HistoryWindow <= 0 {
		cfg.HistoryWindow = 5 * time.Minute
	}
	runCtx, stop := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, store: store, done: make(chan error, 1), stop: stop}
	ver := Version()
	api := handlers.New(resources.NewBuiltin(), store, ver.GitVersion, handlers.Options{
		MinRequestTimeout: cfg.MinRequestTimeout,
		Cache: cache.Options{
			Window: cfg.HistoryWindow, BookmarkInterval: cfg.BookmarkInterval, Logger: cfg.Logger,
		},
	})
	api.Run(runCtx)
	go compact(runCtx, store, cfg.HistoryWindow, cfg.Logger)
	namespaces := &controllers.Namespaces{API: api, Logger: cfg.Logger}
	go namespaces.Run(runCtx)
	if err := api.WaitReady(ctx); err != nil {
		stop()
		store.Close()
		return nil, err
	}
	if err := ensureNamespaces(ctx, api); err != nil {
		stop()
		store.Close()
		return nil, err
	}

	s.listener, err = net.Listen("tcp", cfg.Listen)
	if err != nil {
		store.Close()
		return nil, err
	}
	s.URL = "https://" + clientAddress(s.listener.Addr().(*net.TCPAddr))
	s.Kubeconfig = filepath.Join(cfg.DataDir, "kubeconfig")
	if err := pki.WriteKubeconfig(s.Kubeconfig, s.URL); err != nil {
		s.listener.Close()
		store.Close()
		return nil, err
	}
	s.http = &http.Server{
		Handler:           handlers.Recover(auth.Authenticate(s.routes(api, ver), pki.ClientCAs(), handlers.Unauthorized), cfg.Logger.Printf),
		TLSConfig:         pki.TLSConfig(),
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          cfg.Logger,
	}
	go func() { s.done <- s.http.ServeTLS(s.listener, "", "") }()
	return s, nil
}

// clientAddress is where clients reach a listener: a wildcard address is
// reached on loopback.
func clientAddress(addr *net.TCPAddr) string {
	ip := addr.IP
	if ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(addr.Port))
}

func (s *Server) routes(api http.Handler, ver interface{}) http.Handler {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok"))
	}
	mux.HandleFunc("/healthz", ok)
	mux.HandleFunc("/livez", ok)
	mux.HandleFunc("/readyz", ok)
	versionJSON, _ := json.MarshalIndent(ver, "", "  ")
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(versionJSON)
	})
	mux.Handle("/", api)
	return mux
}

// ensureNamespaces creates the bootstrap namespaces through the API.
func ensureNamespaces(ctx context.Context, api *handlers.API) error {
	for _, name := range bootstrapNamespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := api.CreateInternal(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
	}
	return nil
}

// Wait blocks until the server stops and returns why.
func (s *Server) Wait() error {
	err := <-s.done
	s.done <- err
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting requests, lets running ones finish within ctx,
// and closes storage.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	s.stop()
	if cerr := s.store.Close(); err == nil {
		err = cerr
	}
	return err
}
