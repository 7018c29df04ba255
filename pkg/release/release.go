// Package release reads OpenShift release payloads from container registries in pure Go: digest, version, architectures, component images and the RHCOS stream, through mirrors.
package release

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coreos/stream-metadata-go/stream"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/net/http/httpproxy"

	"github.com/seed-a052040e/agentiso/internal/jsonbound"
	"github.com/seed-a052040e/agentiso/pkg/arch"
)

// Bounds on a manifest (or manifest list) and an image config, checked
// before either is parsed (docs/release.md, "Limits"): a manifest of empty
// layer objects costs about 185 bytes of memory per byte of text once
// parsed. A release payload's manifest lists a handful of layers and its
// manifest list one image per architecture; the OCI distribution spec asks
// registries to accept manifests of at least 4 MiB, so no portable manifest
// is larger.
const (
	// MaxManifestBytes is the largest manifest read.
	MaxManifestBytes = 4 << 20
	// MaxManifestObjects is the most JSON objects and arrays a manifest or
	// an image config may hold.
	MaxManifestObjects = 10_000
)

// Proxy is the HTTP proxy to reach registries through (install-config
// proxy). A nil *Proxy in Options means the environment's proxy settings.
type Proxy struct {
	HTTPProxy, HTTPSProxy, NoProxy string
}

// Options configure a Client.
type Options struct {
	// PullSecret is the pull secret JSON ({"auths": {...}}); empty means
	// anonymous.
	PullSecret []byte
	// Mirrors are the install-config imageDigestSources /
	// imageContentSources, in order.
	Mirrors []Mirror
	// TrustBundle is PEM added to the system trust store
	// (additionalTrustBundle).
	TrustBundle []byte
	// Proxy, when not nil, replaces the environment's proxy settings.
	Proxy *Proxy
	// Arch is the cluster's architecture (either spelling). A single-arch
	// release for another architecture is an *ArchMismatchError; for a
	// manifest list it selects the image whose manifests are read. Empty
	// accepts any architecture and prefers x86_64 in a list.
	Arch string
	// ArchFrom, when set, says where Arch came from, for an
	// *ArchMismatchError (its WantFrom).
	ArchFrom string
	// Local, when set, answers every registry request instead of the
	// network (an oc-mirror v2 archive, ocmirror.Store): no host is
	// contacted, and every answer is checked as a registry's is.
	Local http.RoundTripper
	// WrapTransport, when set, wraps the HTTP transport (tests count bytes
	// with it).
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// Logger receives debug messages; nil discards them.
	Logger *slog.Logger
	// LayerRetries is how often a layer whose download breaks is read again
	// (0 means 2; negative means never).
	LayerRetries int
	// StallTimeout ends a request that receives no data for this long:
	// no answer after the request, or nothing more of its body (0 means
	// DefaultStallTimeout).
	StallTimeout time.Duration
}

// DefaultStallTimeout is how long a registry may send nothing before the
// request fails: the base ISO download's default (baseiso.DefaultStallTimeout).
const DefaultStallTimeout = 2 * time.Minute

// Client resolves release payloads. It is safe for sequential use.
type Client struct {
	opts       Options
	secret     *pullSecret
	mirrors    []Mirror
	rt         http.RoundTripper
	bundleDesc string
	log        *slog.Logger
}

// New checks the options and builds a Client.
func New(opts Options) (*Client, error) {
	ps, err := parsePullSecret(opts.PullSecret)
	if err != nil {
		return nil, err
	}
	c := &Client{opts: opts, secret: ps, mirrors: mergeMirrors(opts.Mirrors), log: opts.Logger}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if opts.Arch != "" {
		if _, ok := arch.RPM(opts.Arch); !ok {
			return nil, fmt.Errorf("unknown architecture %q (want x86_64, aarch64, ppc64le or s390x)", opts.Arch)
		}
	}
	if c.rt, c.bundleDesc, err = newTransport(opts); err != nil {
		return nil, err
	}
	return c, nil
}

// newTransport builds an HTTPS-only transport trusting the system roots
// plus the bundle, through the proxy.
func newTransport(opts Options) (http.RoundTripper, string, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	desc := "the system trust store"
	if len(strings.TrimSpace(string(opts.TrustBundle))) > 0 {
		var subjects []string
		rest := opts.TrustBundle
		for {
			var blk *pem.Block
			blk, rest = pem.Decode(rest)
			if blk == nil {
				break
			}
			if blk.Type != "CERTIFICATE" {
				continue
			}
			cert, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				return nil, "", fmt.Errorf("additionalTrustBundle: certificate %d: %w", len(subjects)+1, err)
			}
			pool.AddCert(cert)
			subjects = append(subjects, fmt.Sprintf("%q", cert.Subject.String()))
		}
		if len(subjects) == 0 {
			return nil, "", errors.New("additionalTrustBundle holds no PEM certificate")
		}
		desc += " and additionalTrustBundle (" + strings.Join(subjects, ", ") + ")"
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	stall := opts.StallTimeout
	if stall <= 0 {
		stall = DefaultStallTimeout
	}
	tr.ResponseHeaderTimeout = stall
	if opts.Proxy != nil {
		pf := (&httpproxy.Config{HTTPProxy: opts.Proxy.HTTPProxy, HTTPSProxy: opts.Proxy.HTTPSProxy, NoProxy: opts.Proxy.NoProxy}).ProxyFunc()
		tr.Proxy = func(r *http.Request) (*url.URL, error) { return pf(r.URL) }
	}
	var base http.RoundTripper = tr
	if opts.Local != nil {
		base = opts.Local
	}
	var rt http.RoundTripper = httpsOnly{boundedManifests{idleTimeout{base, stall}}}
	if opts.WrapTransport != nil {
		rt = opts.WrapTransport(rt)
	}
	return rt, desc, nil
}

// httpsOnly refuses plain HTTP: credentials never leave in clear text, and
// a registry is trusted only through TLS (as the hosts' podman does without
// an "insecure" registries.conf entry, which agentiso never writes).
type httpsOnly struct{ rt http.RoundTripper }

func (h httpsOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "https" {
		return nil, fmt.Errorf("refusing plain HTTP to %s: registries are reached over HTTPS only", r.URL.Host)
	}
	return h.rt.RoundTrip(r)
}

// idleTimeout ends a response body that sends no data for timeout while
// it is being read (a stalled registry), with an error naming the registry.
// Time the reader spends elsewhere (writing what it read) does not count.
type idleTimeout struct {
	rt      http.RoundTripper
	timeout time.Duration
}

func (t idleTimeout) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if err != nil {
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() && r.Context().Err() == nil {
			return nil, fmt.Errorf("registry %s sent no answer for %s: giving up: %w", r.URL.Host, t.timeout, err)
		}
		return nil, err
	}
	b := &idleBody{rc: resp.Body, timeout: t.timeout, host: r.URL.Host}
	b.timer = time.AfterFunc(t.timeout, b.stall)
	b.timer.Stop()
	resp.Body = b
	return resp, nil
}

type idleBody struct {
	rc      io.ReadCloser
	timeout time.Duration
	host    string
	timer   *time.Timer
	stalled atomic.Bool
}

func (b *idleBody) stall() {
	b.stalled.Store(true)
	b.rc.Close() // unblocks the Read waiting for data
}

func (b *idleBody) Read(p []byte) (int, error) {
	b.timer.Reset(b.timeout)
	n, err := b.rc.Read(p)
	b.timer.Stop()
	if b.stalled.Load() {
		return n, fmt.Errorf("registry %s sent no data for %s: giving up on a stalled transfer", b.host, b.timeout)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	return b.rc.Close()
}

// boundedManifests reads every manifest answer whole, refusing one over
// MaxManifestBytes or MaxManifestObjects before go-containerregistry parses
// it (remote.Get parses up to 100 MiB, by tag with no digest to check first).
type boundedManifests struct{ rt http.RoundTripper }

func (b boundedManifests) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.rt.RoundTrip(r)
	if err != nil || r.Method != http.MethodGet || resp.StatusCode != http.StatusOK ||
		!strings.HasPrefix(r.URL.Path, "/v2/") || !strings.Contains(r.URL.Path, "/manifests/") {
		return resp, err
	}
	defer resp.Body.Close()
	refuse := func(why string) error {
		return fmt.Errorf("the manifest %s serves at %s %s, which no release or machine-os image does: refusing it",
			r.URL.Host, r.URL.Path, why)
	}
	if resp.ContentLength > MaxManifestBytes {
		return nil, refuse(fmt.Sprintf("is larger than %d MiB", MaxManifestBytes>>20))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxManifestBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxManifestBytes {
		return nil, refuse(fmt.Sprintf("is larger than %d MiB", MaxManifestBytes>>20))
	}
	if jsonbound.Containers(body, MaxManifestObjects) > MaxManifestObjects {
		return nil, refuse(fmt.Sprintf("holds more than %d JSON objects and arrays", MaxManifestObjects))
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

// Release is what a payload says about itself.
type Release struct {
	// PullSpec is the reference as the user wrote it.
	PullSpec string `json:"pullSpec"`
	// Digest is the manifest (list) digest the reference resolved to.
	Digest string `json:"digest"`
	// Pinned is the source repository by digest (repo@sha256:...): what
	// hosts pull, through digest-only mirrors.
	Pinned string `json:"pinned"`
	// From is the location (mirror or source) it was read from.
	From string `json:"from"`
	// Attempts lists every location considered, in order.
	Attempts []Attempt `json:"-"`
	// Version is the release version (release-metadata).
	Version string `json:"version"`
	// Arch is "multi" for a multi-architecture payload, else its one
	// architecture (RPM spelling).
	Arch string `json:"arch"`
	// Architectures are the architectures the payload provides (RPM
	// spelling): the manifest list's platforms, or Arch.
	Architectures []string `json:"architectures"`
	// Components maps image-references tag names to pull specs.
	Components map[string]string `json:"components"`
	// Stream is the payload's CoreOS boot-image stream; nil when the
	// payload has none (releases before 4.8).
	Stream    *stream.Stream `json:"-"`
	StreamRaw []byte         `json:"-"`
	// Metadata is the release-metadata "metadata" map.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// fetched is one manifest fetched through the mirror candidates.
type fetched struct {
	desc     *remote.Descriptor
	location name.Reference // where it was found
	attempts []Attempt
}

func (c *Client) remoteOpts(ctx context.Context) []remote.Option {
	return []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(c.secret), remote.WithTransport(c.rt),
		remote.WithUserAgent("agentiso")}
}

// parseRef parses a pull spec strictly enough to reject typos.
func parseRef(spec string) (name.Reference, error) {
	if strings.TrimSpace(spec) != spec || spec == "" {
		return nil, fmt.Errorf("release image %q is not an image pull spec (e.g. quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64)", spec)
	}
	ref, err := name.ParseReference(spec)
	if err != nil {
		return nil, fmt.Errorf("release image %q is not an image pull spec: %w", spec, err)
	}
	return ref, nil
}

// get fetches ref's manifest from the first candidate location that has it.
func (c *Client) get(ctx context.Context, spec string, ref name.Reference) (*fetched, error) {
	atts := candidates(c.mirrors, ref)
	var contacted []int
	for i := range atts {
		a := &atts[i]
		if a.Skipped != "" {
			continue
		}
		loc, err := name.ParseReference(a.Location)
		if err != nil {
			a.Err = err
			continue
		}
		contacted = append(contacted, i)
		desc, err := remote.Get(loc, c.remoteOpts(ctx)...)
		if err != nil {
			a.Err = c.classify(err, a.Location, loc.Context().RegistryStr())
			c.log.Debug("release: location failed", "location", a.Location, "err", a.Err)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		if d, ok := ref.(name.Digest); ok && desc.Digest.String() != d.DigestStr() {
			a.Err = fmt.Errorf("served manifest has digest %s, want %s", desc.Digest, d.DigestStr())
			continue
		}
		// Locations after the one that served it were not contacted.
		return &fetched{desc: desc, location: loc, attempts: atts[:i+1]}, nil
	}
	if len(atts) == 1 && len(contacted) == 1 {
		return nil, fmt.Errorf("%s: %w", spec, atts[0].Err)
	}
	return nil, &MirrorMissError{Ref: spec, Attempts: atts}
}

// Resolve reads the release payload named by spec. Registry text in its
// error is escaped (termsafe).
func (c *Client) Resolve(ctx context.Context, spec string) (*Release, error) {
	r, err := c.resolve(ctx, spec)
	return r, safeError(err)
}

func (c *Client) resolve(ctx context.Context, spec string) (*Release, error) {
	ref, err := parseRef(spec)
	if err != nil {
		return nil, err
	}
	f, err := c.get(ctx, spec, ref)
	if err != nil {
		return nil, err
	}
	r := &Release{PullSpec: spec, Digest: f.desc.Digest.String(), From: f.location.String(), Attempts: f.attempts,
		Pinned: ref.Context().Name() + "@" + f.desc.Digest.String()}
	want := ""
	if c.opts.Arch != "" {
		want, _ = arch.RPM(c.opts.Arch)
	}
	var img v1.Image
	if f.desc.MediaType.IsIndex() {
		idx, err := f.desc.ImageIndex()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", spec, err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return nil, fmt.Errorf("%s: manifest list: %w", spec, err)
		}
		archs := map[string]bool{}
		var pick *v1.Descriptor
		for i := range im.Manifests {
			d := &im.Manifests[i]
			if d.Platform == nil || d.Platform.OS != "linux" {
				continue
			}
			ra, ok := arch.RPM(d.Platform.Architecture)
			if !ok {
				continue
			}
			archs[ra] = true
			if pick == nil && (want == ra || (want == "" && ra == arch.Default)) {
				pick = d
			}
		}
		r.Architectures = sortedKeys(archs)
		if len(archs) == 0 {
			return nil, &NotReleaseError{Ref: spec, Digest: r.Digest, Reason: "its manifest list has no linux image of a known architecture"}
		}
		if pick == nil && want != "" {
			return nil, &ArchMismatchError{Ref: spec, Want: want, Available: r.Architectures, WantFrom: c.opts.ArchFrom}
		}
		if pick == nil {
			for i := range im.Manifests {
				if d := &im.Manifests[i]; d.Platform != nil {
					if _, ok := arch.RPM(d.Platform.Architecture); ok && d.Platform.OS == "linux" {
						pick = d
						break
					}
				}
			}
		}
		r.Arch = "multi"
		child := f.location.Context().Digest(pick.Digest.String())
		if img, err = remote.Image(child, c.remoteOpts(ctx)...); err != nil {
			return nil, fmt.Errorf("%s: image %s of the manifest list: %w", spec, pick.Digest, c.classify(err, child.String(), child.RegistryStr()))
		}
	} else {
		if img, err = f.desc.Image(); err != nil {
			return nil, fmt.Errorf("%s: %w", spec, err)
		}
	}
	cf, err := c.configFile(ctx, img)
	if err != nil {
		return nil, fmt.Errorf("%s: image config: %w", spec, c.classify(err, f.location.String(), f.location.Context().RegistryStr()))
	}
	files, err := c.readFiles(ctx, img, spec, []string{MetadataPath, ImageReferencesPath, BootImagesPath}, MetadataPath,
		map[string]int64{MetadataPath: maxMetadata, ImageReferencesPath: maxImageReferences, BootImagesPath: maxBootImages})
	if err != nil {
		return nil, err
	}
	if files[MetadataPath] == nil || files[ImageReferencesPath] == nil {
		return nil, &NotReleaseError{Ref: spec, Digest: r.Digest, Reason: "it has no /" + MetadataPath + " and /" + ImageReferencesPath}
	}
	md, err := ParseMetadata(files[MetadataPath])
	if err != nil {
		return nil, &NotReleaseError{Ref: spec, Digest: r.Digest, Reason: err.Error()}
	}
	isName, comps, err := ParseImageReferences(files[ImageReferencesPath])
	if err != nil {
		return nil, &NotReleaseError{Ref: spec, Digest: r.Digest, Reason: err.Error()}
	}
	if isName != "" && isName != md.Version {
		return nil, &NotReleaseError{Ref: spec, Digest: r.Digest,
			Reason: fmt.Sprintf("%s names version %q but %s says %q", ImageReferencesPath, isName, MetadataPath, md.Version)}
	}
	r.Version, r.Components, r.Metadata = md.Version, comps, md.Metadata
	if b := files[BootImagesPath]; b != nil {
		if r.Stream, r.StreamRaw, err = ParseBootImages(b); err != nil {
			return nil, fmt.Errorf("%s: %w", spec, err)
		}
	}
	if r.Arch == "" {
		ra, ok := arch.RPM(cf.Architecture)
		if !ok {
			return nil, &NotReleaseError{Ref: spec, Digest: r.Digest, Reason: fmt.Sprintf("its image is for unknown architecture %q", cf.Architecture)}
		}
		r.Architectures = []string{ra}
		r.Arch = ra
		if md.Metadata[MultiArchMetadataKey] == "multi" {
			r.Arch = "multi"
		}
		if want != "" && ra != want {
			return nil, &ArchMismatchError{Ref: spec, Want: want, Available: r.Architectures, WantFrom: c.opts.ArchFrom}
		}
	}
	return r, nil
}

// configFile reads the image config, again after a broken download (the
// config blob is fetched afresh each time: a failed read leaves nothing
// cached).
func (c *Client) configFile(ctx context.Context, img v1.Image) (*v1.ConfigFile, error) {
	retries := c.opts.LayerRetries
	if retries == 0 {
		retries = 2
	}
	cl, err := partial.ConfigLayer(img)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		var b []byte
		rc, err := cl.Compressed()
		if err == nil {
			b, err = io.ReadAll(io.LimitReader(&ctxReader{ctx: ctx, r: rc}, maxMetadata+1))
			rc.Close()
		}
		if err == nil {
			if len(b) > maxMetadata {
				return nil, fmt.Errorf("image config is more than %d bytes", maxMetadata)
			}
			if jsonbound.Containers(b, MaxManifestObjects) > MaxManifestObjects {
				return nil, fmt.Errorf("image config holds more than %d JSON objects and arrays, which no release or machine-os image does: refusing it", MaxManifestObjects)
			}
			return v1.ParseConfigFile(bytes.NewReader(b))
		}
		if !transient(err) || attempt >= retries || ctx.Err() != nil {
			return nil, err
		}
	}
}
