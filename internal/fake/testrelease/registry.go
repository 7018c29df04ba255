package testrelease

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Auth selects the registry's authentication.
type Auth int

// Values of Auth.
const (
	AuthNone   Auth = iota
	AuthBasic       // HTTP basic on every /v2/ request
	AuthBearer      // token service at /token (basic credentials), then Bearer tokens
)

// RegistryOptions configure StartRegistry. The zero value is an anonymous
// TLS registry on 127.0.0.1.
type RegistryOptions struct {
	Auth               Auth
	Username, Password string // default "user" / "pass"
	// DropBlobs makes the first DropBlobs blob downloads break half-way
	// (the connection is closed).
	DropBlobs int
	// DropMatch, when set, limits DropBlobs to blob paths containing it
	// (e.g. a layer digest).
	DropMatch string
	// Tamper, when set, rewrites response bodies of GET requests
	// (path is the URL path), e.g. to corrupt a layer or a manifest.
	Tamper func(path string, body []byte) []byte
	// StallMatch, when set, makes every GET whose path contains it send its
	// headers and half its body, then nothing more until the client gives
	// up (a stalled registry).
	StallMatch string
}

// Registry is a running TLS registry (go-containerregistry/pkg/registry).
type Registry struct {
	// Host is "127.0.0.1:<port>".
	Host string
	// CAPEM is the PEM of the CA that signed the server certificate.
	CAPEM []byte
	opts  RegistryOptions
	srv   *httptest.Server
	token string

	blobBytes atomic.Int64
	drops     atomic.Int64
	mu        sync.Mutex
	requests  []string
}

// StartRegistry starts a registry and stops it when the test ends.
func StartRegistry(t testing.TB, opts RegistryOptions) *Registry {
	t.Helper()
	r, err := NewRegistry(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// NewRegistry starts a registry; Close stops it.
func NewRegistry(opts RegistryOptions) (*Registry, error) {
	if opts.Username == "" {
		opts.Username, opts.Password = "user", "pass"
	}
	caPEM, leaf, err := newCerts()
	if err != nil {
		return nil, err
	}
	r := &Registry{CAPEM: caPEM, opts: opts, token: "tok-" + fmt.Sprint(time.Now().UnixNano())}
	inner := registry.New(registry.Logger(nopLogger()))
	r.srv = httptest.NewUnstartedServer(r.handler(inner))
	r.srv.Config.ErrorLog = nopLogger()
	r.srv.TLS = &tls.Config{Certificates: []tls.Certificate{leaf}, MinVersion: tls.VersionTLS12}
	r.srv.StartTLS()
	r.Host = strings.TrimPrefix(r.srv.URL, "https://")
	return r, nil
}

// Close stops the registry.
func (r *Registry) Close() { r.srv.Close() }

// BlobBytes is the number of blob (layer and config) bytes served so far.
func (r *Registry) BlobBytes() int64 { return r.blobBytes.Load() }

// Requests lists "METHOD path" of every request so far.
func (r *Registry) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

// PullSecret returns a pull secret with this registry's credentials.
func (r *Registry) PullSecret() []byte {
	auth := base64.StdEncoding.EncodeToString([]byte(r.opts.Username + ":" + r.opts.Password))
	b, _ := json.Marshal(map[string]any{"auths": map[string]any{r.Host: map[string]string{"auth": auth}}})
	return b
}

// Transport returns an HTTPS transport trusting the registry's CA.
func (r *Registry) Transport() http.RoundTripper {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(r.CAPEM)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	tr.Proxy = nil
	return tr
}

// Push writes an image or index (v1.Image or v1.ImageIndex) to repo:tag on
// this registry (repo without host, e.g. "ocp/release") and returns its
// digest. An empty tag pushes by digest only.
func (r *Registry) Push(repo, tag string, obj any) (string, error) {
	var dg v1.Hash
	var err error
	switch o := obj.(type) {
	case v1.Image:
		dg, err = o.Digest()
	case v1.ImageIndex:
		dg, err = o.Digest()
	default:
		return "", fmt.Errorf("testrelease: cannot push %T", obj)
	}
	if err != nil {
		return "", err
	}
	var ref name.Reference
	if tag != "" {
		ref, err = name.NewTag(r.Host + "/" + repo + ":" + tag)
	} else {
		ref, err = name.NewDigest(r.Host + "/" + repo + "@" + dg.String())
	}
	if err != nil {
		return "", err
	}
	opts := []remote.Option{remote.WithTransport(r.Transport()),
		remote.WithAuth(&authn.Basic{Username: r.opts.Username, Password: r.opts.Password})}
	switch o := obj.(type) {
	case v1.Image:
		err = remote.Write(ref, o, opts...)
	case v1.ImageIndex:
		err = remote.WriteIndex(ref, o, opts...)
	}
	if err != nil {
		return "", fmt.Errorf("testrelease: push %s: %w", ref, err)
	}
	return dg.String(), nil
}

func (r *Registry) handler(inner http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests = append(r.requests, req.Method+" "+req.URL.Path)
		r.mu.Unlock()
		if req.URL.Path == "/token" {
			u, p, ok := req.BasicAuth()
			if r.opts.Auth != AuthBearer || !ok || u != r.opts.Username || p != r.opts.Password {
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED"}]}`, http.StatusUnauthorized)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]string{"token": r.token, "access_token": r.token})
			return
		}
		if !r.authorized(req) {
			switch r.opts.Auth {
			case AuthBasic:
				w.Header().Set("WWW-Authenticate", `Basic realm="testrelease"`)
			case AuthBearer:
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="https://%s/token",service="testrelease"`, r.Host))
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`))
			return
		}
		isBlob := req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/")
		stall := req.Method == http.MethodGet && r.opts.StallMatch != "" && strings.Contains(req.URL.Path, r.opts.StallMatch)
		if req.Method != http.MethodGet || (r.opts.Tamper == nil && !isBlob && !stall) {
			inner.ServeHTTP(w, req)
			return
		}
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, req)
		body := rec.Body.Bytes()
		if r.opts.Tamper != nil {
			body = r.opts.Tamper(req.URL.Path, bytes.Clone(body))
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(rec.Code)
		if stall {
			_, _ = w.Write(body[:len(body)/2])
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			<-req.Context().Done()
			return
		}
		if isBlob && rec.Code == http.StatusOK && strings.Contains(req.URL.Path, r.opts.DropMatch) && r.drops.Add(1) <= int64(r.opts.DropBlobs) {
			half := body[:len(body)/2]
			_, _ = w.Write(half)
			r.blobBytes.Add(int64(len(half)))
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			panic(http.ErrAbortHandler)
		}
		n, _ := w.Write(body)
		if isBlob {
			r.blobBytes.Add(int64(n))
		}
	})
}

func (r *Registry) authorized(req *http.Request) bool {
	switch r.opts.Auth {
	case AuthBasic:
		u, p, ok := req.BasicAuth()
		return ok && u == r.opts.Username && p == r.opts.Password
	case AuthBearer:
		return req.Header.Get("Authorization") == "Bearer "+r.token
	}
	return true
}

// newCerts makes a CA and a server certificate for 127.0.0.1, ::1 and
// localhost.
func newCerts() ([]byte, tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "testrelease CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "testrelease registry"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return caPEM, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
