package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/seed-a052040e/agentiso/data"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/ignition"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

// Where ReleasePayload's facts come from.
const (
	ReleaseFromRegistry = "registry"        // read from the payload
	ReleaseFromOffline  = "offline (given)" // --offline: digest and --release-version as given
)

// ReleasePayload is the release agentiso installs, as its payload
// describes it: read from the registry through the install-config mirrors,
// or, with --offline and no look-up, the digest and --release-version the
// user gave.
type ReleasePayload struct {
	Warnings
	// PullSpec is the user's spelling (used in messages).
	PullSpec string `json:"pullSpec"`
	// Pinned is what hosts pull: the source repository by digest, so that
	// digest-only mirrors serve it.
	Pinned  string `json:"pinned"`
	Digest  string `json:"digest,omitempty"`
	Version string `json:"version"`
	// Arch is "multi" or the release's one architecture (RPM spelling).
	Arch          string   `json:"arch"`
	Architectures []string `json:"architectures"`
	// Stream is the payload's CoreOS boot-image stream JSON; nil means the
	// stream pinned in this build.
	Stream []byte `json:"stream,omitempty"`
	// MachineOSImages is the payload's machine-os-images pull spec.
	MachineOSImages string `json:"machineOSImages,omitempty"`
	// ServiceImages are the payload's pull specs of the components
	// assisted-service checks the pull secret for
	// (ignition.ServiceComponents); empty when the payload was not read.
	ServiceImages map[string]string `json:"serviceImages,omitempty"`
	// Source is one of the ReleaseFrom* values; From and Attempts say
	// where a registry read happened.
	Source   string   `json:"source"`
	From     string   `json:"from,omitempty"`
	Attempts []string `json:"attempts,omitempty"`
}

// Name implements asset.Asset.
func (*ReleasePayload) Name() string { return "Release Payload" }

// Doing implements asset.Described.
func (*ReleasePayload) Doing() string { return "read the release payload" }

// Dependencies implements asset.Asset.
func (*ReleasePayload) Dependencies() []asset.Asset {
	return []asset.Asset{&ReleaseImage{}, &InstallConfig{}, &PullSecret{}, &CABundle{}, &Architecture{}, &OCMirror{}}
}

// StreamJSON is the CoreOS stream OS_IMAGES is written from: the payload's,
// else the one embedded in this build. The base ISO is only ever named by
// the payload's (Stream).
func (a *ReleasePayload) StreamJSON() []byte {
	if len(a.Stream) > 0 {
		return a.Stream
	}
	return data.RHCOSStream()
}

// ReleaseClientOptions gathers what the registry client needs from the
// inputs: pull secret, mirrors, trust bundle, proxy and architecture.
func ReleaseClientOptions(ic *manifests.InstallConfig, pullSecret, caPEM, arch string) release.Options {
	o := release.Options{PullSecret: []byte(pullSecret), TrustBundle: []byte(caPEM), Arch: arch}
	if ic != nil {
		o.Mirrors = mirrorsOf(ic.MirrorSources())
		if px := ic.Proxy; px != nil {
			o.Proxy = &release.Proxy{HTTPProxy: px.HTTPProxy, HTTPSProxy: px.HTTPSProxy, NoProxy: px.NoProxy}
		}
	}
	return o
}

// ReleaseClient builds the registry client from the resolved parents of a
// ReleasePayload. With --mirror-from, the oc-mirror output's mirror sets
// are mirrors too, and its image store, when it has one, answers every
// read: no registry is contacted.
func ReleaseClient(p asset.Parents) (*release.Client, error) {
	ic := asset.Get[*InstallConfig](p).Config
	ps := ""
	if s := asset.Get[*PullSecret](p); s.Manifest != nil {
		ps = s.Manifest.PullSecretJSON()
	}
	o := ReleaseClientOptions(ic, ps, asset.Get[*CABundle](p).PEM, asset.Get[*Architecture](p).Arch)
	if m := asset.Get[*OCMirror](p); m.Resources != nil || m.store != nil {
		if m.Resources != nil {
			o.Mirrors = append(o.Mirrors, mirrorsOf(m.Resources.DigestSources)...)
		}
		if m.store != nil {
			o.Local = m.store
		}
	}
	return release.New(o)
}

// mirrorsOf are the registry client's mirrors for sources: digest-only,
// as the registries.conf agentiso writes for the hosts.
func mirrorsOf(sources []manifests.ImageDigestSource) []release.Mirror {
	var out []release.Mirror
	for _, s := range sources {
		out = append(out, release.Mirror{Source: s.Source, Mirrors: s.Mirrors, DigestOnly: true,
			Blocked: s.SourcePolicy == "NeverContactSource"})
	}
	return out
}

func isDigest(spec string) bool {
	ref, err := name.ParseReference(spec)
	if err != nil {
		return false
	}
	_, ok := ref.(name.Digest)
	return ok
}

// Generate implements asset.Asset.
func (a *ReleasePayload) Generate(ctx context.Context, p asset.Parents) error {
	req := asset.Get[*ReleaseImage](p)
	a.PullSpec = req.PullSpec
	arch := asset.Get[*Architecture](p).Arch
	switch {
	case req.Offline:
		if !isDigest(req.PullSpec) {
			return fmt.Errorf("release image %s is a tag, and --offline forbids looking it up: pass it by digest (repository@sha256:...) together with --release-version, or drop --offline so agentiso reads the release from its registry", req.PullSpec)
		}
		if req.Version == "" {
			return fmt.Errorf("release image %s: --offline needs --release-version (the exact OpenShift version of that payload, e.g. 4.19.3); agentiso never guesses it", req.PullSpec)
		}
		a.Pinned, a.Version, a.Arch, a.Architectures, a.Source = req.PullSpec, req.Version, arch, []string{arch}, ReleaseFromOffline
		a.Digest = req.PullSpec[strings.LastIndex(req.PullSpec, "@")+1:]
		return nil
	}
	c, err := ReleaseClient(p)
	if err != nil {
		return fmt.Errorf("release image %s: %w", req.PullSpec, err)
	}
	if err := a.resolve(ctx, c, req); err != nil {
		return err
	}
	if m := asset.Get[*OCMirror](p); m.store != nil {
		// read from the oc-mirror output, not from the source: as from a
		// mirror (the base ISO, too, is then taken from its
		// machine-os-images)
		a.From = m.store.String()
	}
	return nil
}

// resolve reads the payload of req through c.
func (a *ReleasePayload) resolve(ctx context.Context, c *release.Client, req *ReleaseImage) error {
	a.PullSpec = req.PullSpec
	rel, err := c.Resolve(ctx, req.PullSpec)
	if err != nil {
		return fmt.Errorf("read release image %s (pass --offline with a release by digest and --release-version to build without a registry): %w", req.PullSpec, err)
	}
	if req.Version != "" && req.Version != rel.Version {
		return fmt.Errorf("release image %s is OpenShift %s, not %s (--release-version)", req.PullSpec, rel.Version, req.Version)
	}
	a.Pinned, a.Digest, a.Version, a.Arch, a.Architectures = rel.Pinned, rel.Digest, rel.Version, rel.Arch, rel.Architectures
	a.Stream, a.MachineOSImages, a.Source, a.From = rel.StreamRaw, rel.Components[release.MachineOSImagesComponent], ReleaseFromRegistry, rel.From
	for _, c := range ignition.ServiceComponents() {
		if img := rel.Components[c]; img != "" {
			if a.ServiceImages == nil {
				a.ServiceImages = map[string]string{}
			}
			a.ServiceImages[c] = img
		}
	}
	for _, at := range rel.Attempts {
		a.Attempts = append(a.Attempts, at.String())
	}
	return nil
}

// streamUnknownWhy says why the payload's CoreOS stream is not known.
func (a *ReleasePayload) streamUnknownWhy() string {
	if a.Source == ReleaseFromOffline {
		return "--offline: the payload was not read"
	}
	return "the payload carries no CoreOS boot-image stream"
}

// ReadFromMirror reports whether the payload was read from a mirror rather
// than from its source repository (an air-gapped setup).
func (a *ReleasePayload) ReadFromMirror() bool {
	if a.From == "" {
		return false
	}
	src := a.Pinned
	if i := strings.LastIndex(src, "@"); i >= 0 {
		src = src[:i]
	}
	return !strings.HasPrefix(a.From, src+"@") && !strings.HasPrefix(a.From, src+":")
}

// OfflineRelease is a release given by digest with its version, used with
// no registry look-up (as --offline --release-image R --release-version V).
func OfflineRelease(pullSpec, version string) (*ReleaseImage, error) {
	r, err := NewReleaseImage(pullSpec)
	if err != nil {
		return nil, err
	}
	if !isDigest(pullSpec) {
		return nil, fmt.Errorf("offline release %s must be given by digest", pullSpec)
	}
	r.Version, r.Offline = version, true
	return r, nil
}
