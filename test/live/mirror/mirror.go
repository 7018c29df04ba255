// Package mirror is the registry side of the live lab (test/live): an
// in-process OCI registry (go-containerregistry's pkg/registry) served over
// TLS with a CA generated at Start, holding a stand-in OpenShift release
// payload pushed by digest only, as an air-gapped mirror would.
//
// The release image and its component images are built from the project's
// own Go code: one static stand-in binary (test/live/standin, built here with
// CGO_ENABLED=0 unless Options.StandinBinary names one) in a layer shared by
// every image, plus a small layer of symbolic links and files per image:
//
//	release image               /usr/bin/cluster-version-operator (entrypoint;
//	                            "image NAME" prints a component pull spec),
//	                            /release-manifests/{release-metadata,
//	                            image-references, coreos-bootimages ConfigMap}
//	agent-installer-api-server  /assisted-service (default command: the REST
//	                            API on :8090), /usr/local/bin/agent-installer-client,
//	                            /start_db.sh run by /bin/bash, /etc/passwd with
//	                            the postgres user
//	agent-installer-node-agent  /usr/bin/agent (default command), /usr/bin/cp
//	agent-installer-orchestrator  /usr/bin/assisted-installer (entrypoint; the
//	                            install step: reports the Installing stage)
//	agent-installer-csr-approver, agent-installer-utils, installer
//	                            /usr/bin/component (prints what it stands for)
//	docker-registry             (Options.RegistryBinary only) the real
//	                            distribution registry as /usr/bin/distribution
//	                            and /etc/registry/config.yaml, no stand-in: what
//	                            an extended ISO's hosts run (registry.go)
//
// The release image's image-references names each component by digest
// under the SOURCE registry (quay.io/openshift-release-dev/ocp-v4.0-art-dev),
// so the hosts reach them only through the imageDigestSources mirrors. The
// payload files are laid out by internal/fake/testrelease, the payload builder of
// pkg/release's tests, so agentiso's release reader and the lab agree.
//
// Nothing is pushed by tag: a tag pull from the mirror is answered 404, and
// Resolve refuses to map a tag reference, as containers/image does with
// mirror-by-digest-only mirrors. Every manifest and blob request made after
// Start returns is recorded (Pulls) so a test can assert digest-only pulls.
//
// The stand-in assisted-service keeps its own request log, readable at
// assisted.LabRequestsPath (/api/assisted-install/v2/lab/requests) with the user
// or watcher token, besides the usual /v2/events.
package mirror

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/seed-a052040e/agentiso/pkg/credentials"
)

// Source registries of the stand-in payload, as in a real OpenShift release.
const (
	SourceReleaseRepo   = "quay.io/openshift-release-dev/ocp-release"
	SourceComponentRepo = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"
	// MirrorReleaseRepo and MirrorComponentRepo are the repositories on the mirror.
	MirrorReleaseRepo   = "openshift-release-dev/ocp-release"
	MirrorComponentRepo = "openshift-release-dev/ocp-v4.0-art-dev"
)

// Options configure Start.
type Options struct {
	// Listen is host:port (e.g. "192.168.111.1:5000"); port 0 picks one. The
	// serving certificate's subject alternative name is the host (IP or DNS name).
	Listen string
	// Version is the release version (default "4.20.0").
	Version string
	// Arch is the GOARCH of the stand-ins and the image platform (default "amd64").
	Arch string
	// StandinBinary is a prebuilt static stand-in; empty builds test/live/standin
	// with the go command (the caller's working directory must be inside this module).
	StandinBinary string
	// Upstream makes the agent-installer-api-server and
	// agent-installer-node-agent images of the real components
	// (NewUpstreamLayers) and adds the components the real service asks
	// for (machine-config-operator, must-gather). The live lab always sets
	// it; without it those two images are placeholders (componentSpecs).
	Upstream *UpstreamLayers
	// RegistryBinary, when set, adds the docker-registry component: the
	// real distribution registry at that path (hack/build-distribution.sh),
	// which an extended ISO's hosts run from the payload itself.
	RegistryBinary string
	Log            *slog.Logger
}

// Source is one imageDigestSources entry of install-config.
type Source struct {
	Source  string
	Mirrors []string
}

// Pull is one manifest or blob request the registry served.
type Pull struct {
	Method string
	// Repository is the repository path on the mirror (no host).
	Repository string
	// Kind is "manifests" or "blobs".
	Kind string
	// Reference is the tag or digest asked for.
	Reference string
	Status    int
}

// ByDigest reports whether the reference is a digest.
func (p Pull) ByDigest() bool { return strings.HasPrefix(p.Reference, "sha256:") }

func (p Pull) String() string {
	return fmt.Sprintf("%s %s/%s/%s -> %d", p.Method, p.Repository, p.Kind, p.Reference, p.Status)
}

// Image is one image of the payload.
type Image struct {
	// Component is the release component name; empty for the release image.
	Component string
	// Source is the by-digest pull spec under the source registry.
	Source string
	// Mirror is the by-digest pull spec on the mirror.
	Mirror string
	Digest string
	// Size is the compressed size: config and layers.
	Size int64
}

// Mirror is a running mirror registry.
type Mirror struct {
	// Addr is host:port of the registry.
	Addr string
	// CACertPEM is the CA that signed the serving certificate; it must reach
	// the hosts through install-config additionalTrustBundle.
	CACertPEM []byte
	// ReleaseImage is the source pull spec of the release by digest
	// (quay.io/openshift-release-dev/ocp-release@sha256:...).
	ReleaseImage string
	// ReleaseTag is the same release by tag, for a negative control: it is
	// never mirrored.
	ReleaseTag string
	// Version is the release version.
	Version string
	// ImageDigestSources map the two source repositories to the mirror.
	ImageDigestSources []Source
	// Images are the release image (first) and the components.
	Images []Image

	srv *http.Server
	ln  net.Listener

	mu        sync.Mutex
	recording bool
	pulls     []Pull
}

var pathRE = regexp.MustCompile(`^/v2/(.+)/(manifests|blobs)/([^/]+)$`)

// Start builds the stand-in images, starts the registry and pushes them.
func Start(ctx context.Context, opts Options) (*Mirror, error) {
	if opts.Version == "" {
		opts.Version = "4.20.0"
	}
	if opts.Arch == "" {
		opts.Arch = "amd64"
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	host, _, err := net.SplitHostPort(opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("mirror: Listen %q: %w", opts.Listen, err)
	}
	bin := opts.StandinBinary
	if bin == "" {
		dir, err := tempDir()
		if err != nil {
			return nil, err
		}
		defer removeAll(dir)
		if bin, err = BuildStandin(ctx, dir, opts.Arch); err != nil {
			return nil, err
		}
	}
	caPEM, certPair, err := serving(host)
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("mirror: listen on %s: %w", opts.Listen, err)
	}
	m := &Mirror{Addr: ln.Addr().String(), CACertPEM: caPEM, Version: opts.Version, ln: ln}
	if h, p, _ := net.SplitHostPort(m.Addr); h != host {
		// Keep the host the caller asked for (e.g. a name) with the resolved port.
		m.Addr = net.JoinHostPort(host, p)
	}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	m.srv = &http.Server{
		Handler:           m.record(reg),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{certPair}},
		ErrorLog:          slog.NewLogLogger(opts.Log.Handler(), slog.LevelDebug),
	}
	go func() { _ = m.srv.ServeTLS(ln, "", "") }()
	if err := m.populate(ctx, bin, opts); err != nil {
		_ = m.Close()
		return nil, err
	}
	m.mu.Lock()
	m.recording = true
	m.mu.Unlock()
	opts.Log.Info("mirror registry ready", "addr", m.Addr, "release", m.ReleaseImage)
	return m, nil
}

// serving makes a CA and a serving certificate for host.
func serving(host string) ([]byte, tls.Certificate, error) {
	now := time.Now()
	ca, err := credentials.NewSelfSignedCA(nil, "agentiso-lab-mirror-ca", now, 7*24*time.Hour)
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("mirror CA: %w", err)
	}
	req := credentials.LeafRequest{CommonName: host, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, Validity: 7 * 24 * time.Hour}
	if ip := net.ParseIP(host); ip != nil {
		req.IPs = []net.IP{ip}
	} else {
		req.DNSNames = []string{host}
	}
	leaf, err := credentials.SignLeaf(nil, *ca, req, now)
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("mirror serving certificate: %w", err)
	}
	pair, err := leaf.TLSCertificate()
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("mirror serving certificate: %w", err)
	}
	return []byte(ca.CertPEM), pair, nil
}

func (m *Mirror) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusWriter{ResponseWriter: w, code: 200}
		next.ServeHTTP(rec, r)
		sm := pathRE.FindStringSubmatch(r.URL.Path)
		if sm == nil {
			return
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.recording {
			m.pulls = append(m.pulls, Pull{Method: r.Method, Repository: sm[1], Kind: sm[2], Reference: sm[3], Status: rec.code})
		}
	})
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(c int) { s.code = c; s.ResponseWriter.WriteHeader(c) }

// Transport trusts only the mirror's CA and never uses a proxy.
func (m *Mirror) Transport() (*http.Transport, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(m.CACertPEM) {
		return nil, errors.New("mirror: the CA certificate is not valid PEM")
	}
	return &http.Transport{Proxy: nil, TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}}, nil
}

// populate builds the images and pushes them by digest.
func (m *Mirror) populate(ctx context.Context, bin string, opts Options) error {
	tr, err := m.Transport()
	if err != nil {
		return err
	}
	base, err := standinLayer(bin)
	if err != nil {
		return err
	}
	push := func(img v1.Image, repo string) (string, int64, error) {
		d, err := img.Digest()
		if err != nil {
			return "", 0, err
		}
		ref, err := name.NewDigest(m.Addr + "/" + repo + "@" + d.String())
		if err != nil {
			return "", 0, err
		}
		if err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithTransport(tr)); err != nil {
			return "", 0, fmt.Errorf("mirror: push %s: %w", ref, err)
		}
		size, err := imageSize(img)
		return d.String(), size, err
	}
	tags := map[string]string{}
	var comps []Image
	specs := componentSpecs()
	if opts.Upstream != nil {
		specs = upstreamSpecs(append(specs, upstreamOnlySpecs()...), opts.Upstream)
	}
	if opts.RegistryBinary != "" {
		rs, err := registrySpec(opts.RegistryBinary)
		if err != nil {
			return err
		}
		specs = append(specs, rs)
	}
	for _, s := range specs {
		img, err := image(base, withEnv(s), opts.Arch)
		if err != nil {
			return describe(err, "mirror: image "+s.Component)
		}
		d, size, err := push(img, MirrorComponentRepo)
		if err != nil {
			return err
		}
		src := SourceComponentRepo + "@" + d
		tags[s.Component] = src
		comps = append(comps, Image{Component: s.Component, Source: src, Mirror: m.Addr + "/" + MirrorComponentRepo + "@" + d, Digest: d, Size: size})
	}
	rimg, err := image(base, releaseSpec(opts.Version, releaseArch(opts.Arch), tags), opts.Arch)
	if err != nil {
		return describe(err, "mirror: release image")
	}
	d, size, err := push(rimg, MirrorReleaseRepo)
	if err != nil {
		return err
	}
	m.ReleaseImage = SourceReleaseRepo + "@" + d
	m.ReleaseTag = SourceReleaseRepo + ":" + opts.Version + "-" + releaseArch(opts.Arch)
	m.Images = append([]Image{{Source: m.ReleaseImage, Mirror: m.Addr + "/" + MirrorReleaseRepo + "@" + d, Digest: d, Size: size}}, comps...)
	m.ImageDigestSources = []Source{
		{Source: SourceReleaseRepo, Mirrors: []string{m.Addr + "/" + MirrorReleaseRepo}},
		{Source: SourceComponentRepo, Mirrors: []string{m.Addr + "/" + MirrorComponentRepo}},
	}
	return nil
}

func releaseArch(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return goarch
}

// Resolve maps a source pull spec to its pull spec on the mirror the way
// containers/image applies mirror-by-digest-only imageDigestSources: only a
// digest reference under a mirrored source is mapped; a tag reference is
// refused, because in an air gap its source is unreachable.
func (m *Mirror) Resolve(ref string) (string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", ref, err)
	}
	d, ok := r.(name.Digest)
	if !ok {
		return "", fmt.Errorf("resolve %q: a tag reference is not mirrored (imageDigestSources mirror digests only) and its source is unreachable in the air gap", ref)
	}
	repo := d.Context().Name()
	for _, s := range m.ImageDigestSources {
		if repo == s.Source || strings.HasPrefix(repo, s.Source+"/") {
			return s.Mirrors[0] + strings.TrimPrefix(repo, s.Source) + "@" + d.DigestStr(), nil
		}
	}
	return "", fmt.Errorf("resolve %q: no imageDigestSources entry covers %s", ref, repo)
}

// Component returns the image of a release component.
func (m *Mirror) Component(name string) (Image, bool) {
	i := slices.IndexFunc(m.Images, func(im Image) bool { return im.Component == name && name != "" })
	if i < 0 {
		return Image{}, false
	}
	return m.Images[i], true
}

// Pulls returns the manifest and blob requests served since Start returned.
func (m *Mirror) Pulls() []Pull {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.pulls)
}

// Close stops the registry at once, closing open connections.
func (m *Mirror) Close() error {
	err := m.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
