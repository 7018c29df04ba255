package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-a052040e/agentiso/internal/redact"
	"github.com/seed-a052040e/agentiso/pkg/arch"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

// ReleaseQuery is what `agentiso release info` asks about a release.
type ReleaseQuery struct {
	// Store, when the asset directory holds inputs (HasReleaseInputs),
	// resolves the release through the asset graph, so that the mirrors,
	// CA, pull secret, proxy and architecture of install-config.yaml
	// apply; the release requested is the one provided to it. Without a
	// store the release below is read anonymously with the system trust
	// store, or described as given with Offline.
	Store   *asset.Store
	Image   string // the pull spec asked about (without a store)
	Version string // the exact version it must be (--release-version)
	Offline bool   // never contact a registry
	// Origin says where Image was given (without a store).
	Origin string
	// Mirror and CacheDir are those of create image: where the base ISO
	// would come from.
	Mirror, CacheDir string
}

// HasReleaseInputs reports whether dir holds a file that says how to read
// the release (install-config.yaml, the ZTP pull secret or
// ClusterImageSet).
func HasReleaseInputs(dir string) (bool, error) {
	for _, f := range []string{assetdir.InstallConfig, assetdir.PullSecret, assetdir.ClusterImageSet} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
	}
	return false, nil
}

// DirReleaseInfo is release info on the asset directory dir: ReleaseInfo
// of the release r asks for, read through dir's store (OpenStore) when dir
// holds a file that says how to read it (HasReleaseInputs), else as given;
// mirror and cacheDir are where its base ISO would come from.
func DirReleaseInfo(ctx context.Context, dir string, log *slog.Logger, r ReleaseRequest, mirror, cacheDir string) (*release.Description, error) {
	q := ReleaseQuery{Image: r.Image, Version: r.Version, Offline: r.Offline, Origin: r.Origin, Mirror: mirror, CacheDir: cacheDir}
	if has, err := HasReleaseInputs(dir); err != nil {
		return nil, err
	} else if has {
		if q.Store, err = OpenStore(dir, log, r); err != nil {
			return nil, err
		}
	}
	return ReleaseInfo(ctx, q)
}

// ReleaseInfo reads a release the way create image does and says what
// agentiso would install from it: its digest, version and architectures,
// where it was read, whether it is supported, and the RHCOS live ISO its
// base ISO would be (and where from). Nothing is written.
func ReleaseInfo(ctx context.Context, q ReleaseQuery) (*release.Description, error) {
	info, cpu, err := resolveRelease(ctx, q)
	if err != nil {
		return nil, err
	}
	info.Support = release.Support(info.Version)
	if len(info.stream) == 0 {
		// Never another release's ISO: this release's is unknown.
		why := "the payload carries no CoreOS boot-image stream"
		if info.Source == ReleaseFromOffline {
			why = "--offline: the payload was not read"
		}
		info.RHCOS = &release.RHCOSDescription{FromStream: "unknown", Arch: cpu,
			BaseISOFrom: "--base-iso only: the RHCOS of this release is unknown (" + why + "); run release info where its registry is reachable to see which ISO it needs"}
		return &info.Description, nil
	}
	opts := baseiso.Options{Arch: cpu, Mirror: q.Mirror, CacheDir: q.CacheDir, Stream: info.stream, Offline: q.Offline}
	fi, err := baseiso.Describe(opts)
	if err != nil {
		return nil, fmt.Errorf("RHCOS stream of %s: %w", info.PullSpec, err)
	}
	// The mirror URL may carry a password or a signed query: shown hidden,
	// as config view shows it.
	r := &release.RHCOSDescription{Stream: fi.Stream, FromStream: "payload", Arch: fi.Arch, Release: fi.Release, FileName: fi.FileName,
		URL: redact.URL(fi.URL), SHA256: fi.SHA256, CachePath: fi.CachePath}
	if fi.MirrorURL != "" {
		r.MirrorURL = redact.URL(fi.MirrorURL)
	}
	if st, err := os.Stat(fi.CachePath); err == nil && st.Mode().IsRegular() {
		r.Cached = true
	}
	switch {
	case r.Cached:
		r.BaseISOFrom = "cache " + fi.CachePath + " (verified by sha256 when used)"
	case q.Offline:
		r.BaseISOFrom = "nowhere: --offline and not cached (pass --base-iso to create image)"
	case info.MachineOSImages != "" && info.fromMirror && q.Mirror == "":
		r.BaseISOFrom = "machine-os-images " + info.MachineOSImages + " (through the mirror), else " + r.URL
	case fi.MirrorURL != "":
		r.BaseISOFrom = r.MirrorURL
	case info.MachineOSImages != "":
		r.BaseISOFrom = r.URL + ", else machine-os-images " + info.MachineOSImages
	default:
		r.BaseISOFrom = r.URL
	}
	info.RHCOS = r
	return &info.Description, nil
}

// resolvedRelease adds what the base ISO choice needs.
type resolvedRelease struct {
	release.Description
	stream     []byte
	fromMirror bool
}

// resolveRelease resolves through the asset graph when there is a store,
// else anonymously (or as given, offline). It returns the architecture of
// the base ISO too.
func resolveRelease(ctx context.Context, q ReleaseQuery) (*resolvedRelease, string, error) {
	if s := q.Store; s != nil {
		p, err := asset.Fetch[*ReleasePayload](ctx, s)
		if err != nil {
			return nil, "", err
		}
		a, err := asset.Fetch[*Architecture](ctx, s)
		if err != nil {
			return nil, "", err
		}
		ri, err := asset.Fetch[*ReleaseImage](ctx, s)
		if err != nil {
			return nil, "", err
		}
		info := &resolvedRelease{Description: release.Description{PullSpec: p.PullSpec, Pinned: p.Pinned, Digest: p.Digest, Version: p.Version,
			Arch: p.Arch, Architectures: p.Architectures, Source: p.Source, From: p.From, Attempts: p.Attempts,
			MachineOSImages: p.MachineOSImages, Warnings: p.Warn, Origin: ri.Origin}, stream: p.Stream, fromMirror: p.ReadFromMirror()}
		return info, a.Arch, nil
	}
	if q.Image == "" {
		return nil, "", ErrNoRelease
	}
	req, err := NewReleaseImage(q.Image)
	if err != nil {
		return nil, "", err
	}
	if q.Offline {
		if _, err := OfflineRelease(req.PullSpec, q.Version); err != nil {
			return nil, "", fmt.Errorf("release image %s is a tag, and --offline forbids looking it up: pass it by digest (repository@sha256:...) together with --release-version", req.PullSpec)
		}
		if q.Version == "" {
			return nil, "", fmt.Errorf("release image %s: --offline needs --release-version (the exact OpenShift version of that payload); agentiso never guesses it", req.PullSpec)
		}
		// The same rules as the ReleasePayload asset.
		info := &resolvedRelease{Description: release.Description{PullSpec: req.PullSpec, Pinned: req.PullSpec, Version: q.Version, Arch: arch.Default,
			Architectures: []string{arch.Default}, Source: ReleaseFromOffline, Origin: q.Origin}}
		if i := strings.LastIndex(req.PullSpec, "@"); i >= 0 {
			info.Digest = req.PullSpec[i+1:]
		}
		return info, arch.Default, nil
	}
	c, err := release.New(release.Options{})
	if err != nil {
		return nil, "", err
	}
	rel, err := c.Resolve(ctx, q.Image)
	if err != nil {
		return nil, "", err
	}
	if q.Version != "" && q.Version != rel.Version {
		return nil, "", fmt.Errorf("release image %s is OpenShift %s, not %s (--release-version)", q.Image, rel.Version, q.Version)
	}
	info := &resolvedRelease{Description: release.Description{PullSpec: rel.PullSpec, Pinned: rel.Pinned, Digest: rel.Digest, Version: rel.Version,
		Arch: rel.Arch, Architectures: rel.Architectures, Source: ReleaseFromRegistry, From: rel.From,
		MachineOSImages: rel.Components[release.MachineOSImagesComponent], Origin: q.Origin}, stream: rel.StreamRaw}
	for _, a := range rel.Attempts {
		info.Attempts = append(info.Attempts, a.String())
	}
	cpu := arch.Default
	if rel.Arch != arch.Multi {
		cpu = rel.Arch
	}
	return info, cpu, nil
}
