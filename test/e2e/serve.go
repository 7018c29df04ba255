package e2e

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// GuestHostAddr is the host's loopback interface as a guest on QEMU user
// networking sees it.
const GuestHostAddr = "10.0.2.2"

// Request is one request the artifact server answered.
type Request struct {
	Method string
	Path   string
	Status int
}

// ArtifactServer serves a directory over HTTP on 127.0.0.1 only (a guest
// reaches it as GuestHostAddr) and records every request, so a test can
// tell what the guest fetched. Nothing else listens and nothing outside the
// machine can connect.
type ArtifactServer struct {
	Dir  string
	Addr string // where it listens on the host: 127.0.0.1:Port
	Port int
	srv  *http.Server
	done chan error
	mu   sync.Mutex
	reqs []Request
}

// ServeArtifacts starts serving dir on a free loopback port.
func ServeArtifacts(dir string) (*ArtifactServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("artifact server: %w", err)
	}
	s := &ArtifactServer{Dir: dir, Addr: ln.Addr().String(), Port: ln.Addr().(*net.TCPAddr).Port, done: make(chan error, 1)}
	files := http.FileServer(http.Dir(dir))
	s.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
			files.ServeHTTP(rec, r)
			s.mu.Lock()
			s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Status: rec.status})
			s.mu.Unlock()
		}),
		ReadHeaderTimeout: time.Minute,
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// BaseURL is the server's URL as the guest sees it, without a trailing slash.
func (s *ArtifactServer) BaseURL() string {
	return fmt.Sprintf("http://%s:%d", GuestHostAddr, s.Port)
}

// GuestURL is the URL of the file name in Dir as the guest sees it.
func (s *ArtifactServer) GuestURL(name string) string {
	return s.BaseURL() + "/" + strings.TrimPrefix(name, "/")
}

// Requests returns the requests answered so far, in order.
func (s *ArtifactServer) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Reset forgets the recorded requests (between boots).
func (s *ArtifactServer) Reset() {
	s.mu.Lock()
	s.reqs = nil
	s.mu.Unlock()
}

// Served reports whether path was answered with 200 at least once.
func (s *ArtifactServer) Served(path string) bool {
	for _, r := range s.Requests() {
		if r.Path == path && r.Status == http.StatusOK {
			return true
		}
	}
	return false
}

// Close stops the server.
func (s *ArtifactServer) Close() error {
	err := s.srv.Close()
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}
