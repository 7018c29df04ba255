package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/config"
	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/internal/redact"
	"github.com/seed-a052040e/agentiso/pkg/arch"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

func newReleaseCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "release",
		Short: "Inspect OpenShift release payloads",
		Args:  cobra.NoArgs,
	}
	c.AddCommand(newReleaseInfoCmd(g))
	return c
}

type releaseInfoOptions struct {
	release  releaseFlags
	mirror   string
	cacheDir string
	format   output.Format
}

func newReleaseInfoCmd(g *globals) *cobra.Command {
	o := &releaseInfoOptions{}
	c := &cobra.Command{
		Use:   "info [IMAGE]",
		Short: "Show what agentiso resolves a release image to",
		Long: `Read an OpenShift release payload the way 'create image' does and print what
agentiso would install: the digest the reference resolves to (the ISO pins
it by digest), the version and architectures from the payload's metadata,
the location it was read from (mirrors are tried in order, as the hosts'
registries.conf does; a tag is never looked up on a digest-only mirror),
and the RHCOS live ISO of the payload's CoreOS stream that the base ISO
would come from.

IMAGE defaults to --release-image (or $` + config.EnvVar("release-image") + `), else the
release pinned in this build; an IMAGE given here wins over the
environment. When --dir holds install-config.yaml, its pullSecret,
imageDigestSources/imageContentSources, additionalTrustBundle, proxy and
controlPlane.architecture are used; otherwise the registry is read
anonymously with the system trust store. Nothing is written.`,
		Example: `  # Resolve a tag through the mirrors of mycluster/install-config.yaml
  agentiso release info --dir mycluster quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64

  # The release the directory would install, as JSON for scripts
  agentiso release info --dir mycluster -o json | jq -r .pinned

  # A multi-architecture payload: its architectures
  agentiso release info quay.io/openshift-release-dev/ocp-release:4.19.3-multi -o json |
      jq .architectures`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				// IMAGE is part of the command line: it wins over the
				// environment, but not over a different --release-image.
				if g.setting("release-image").Source == config.FromFlag && o.release.image != args[0] {
					return fmt.Errorf("give the release once: as IMAGE or --release-image")
				}
				o.release.image, o.release.origin = args[0], "the IMAGE argument"
			}
			return runReleaseInfo(cmd.Context(), g, o)
		},
	}
	addReleaseFlags(c.Flags(), &o.release, true)
	c.Flags().StringVar(&o.mirror, "os-image-mirror", "", "base URL of a local web server serving the RHCOS live ISO by its file name (as for create image)")
	addCacheDirFlag(c.Flags(), &o.cacheDir)
	output.AddFlag(c, &o.format, "what the release resolves to")
	return c
}

func runReleaseInfo(ctx context.Context, g *globals, o *releaseInfoOptions) error {
	info, cpu, err := resolveReleaseInfo(ctx, g, o)
	if err != nil {
		return err
	}
	info.Support = release.Support(info.Version)
	if len(info.stream) == 0 {
		// Never another release's ISO: this release's is unknown.
		why := "the payload carries no CoreOS boot-image stream"
		if info.Source == agent.ReleaseFromOffline {
			why = "--offline: the payload was not read"
		}
		info.RHCOS = &release.RHCOSDescription{FromStream: "unknown", Arch: cpu,
			BaseISOFrom: "--base-iso only: the RHCOS of this release is unknown (" + why + "); run release info where its registry is reachable to see which ISO it needs"}
		return printReleaseInfo(g, o, info)
	}
	opts := baseiso.Options{Arch: cpu, Mirror: o.mirror, CacheDir: o.cacheDir, Stream: info.stream, Offline: o.release.offline}
	fi, err := baseiso.Describe(opts)
	if err != nil {
		return fmt.Errorf("RHCOS stream of %s: %w", info.PullSpec, err)
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
	case o.release.offline:
		r.BaseISOFrom = "nowhere: --offline and not cached (pass --base-iso to create image)"
	case info.MachineOSImages != "" && info.fromMirror && o.mirror == "":
		r.BaseISOFrom = "machine-os-images " + info.MachineOSImages + " (through the mirror), else " + r.URL
	case fi.MirrorURL != "":
		r.BaseISOFrom = r.MirrorURL
	case info.MachineOSImages != "":
		r.BaseISOFrom = r.URL + ", else machine-os-images " + info.MachineOSImages
	default:
		r.BaseISOFrom = r.URL
	}
	info.RHCOS = r
	return printReleaseInfo(g, o, info)
}

func printReleaseInfo(g *globals, o *releaseInfoOptions, info *resolvedInfo) error {
	if o.format != output.Text {
		return output.Write(g.out, o.format, info.Description)
	}
	return info.WriteText(g.out)
}

// resolvedInfo adds what the text output and the base ISO choice need.
type resolvedInfo struct {
	release.Description
	stream     []byte
	fromMirror bool
}

// resolveReleaseInfo resolves through the asset graph when --dir holds
// inputs (so mirrors, CA, pull secret and proxy apply), else anonymously.
func resolveReleaseInfo(ctx context.Context, g *globals, o *releaseInfoOptions) (*resolvedInfo, string, error) {
	hasInputs := false
	for _, f := range []string{assetdir.InstallConfig, assetdir.PullSecret, assetdir.ClusterImageSet} {
		if _, err := os.Stat(filepath.Join(g.dir, f)); err == nil {
			hasInputs = true
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", err
		}
	}
	if hasInputs {
		s, err := openStore(g, o.release)
		if err != nil {
			return nil, "", err
		}
		p, err := asset.Fetch[*agent.ReleasePayload](ctx, s)
		if err != nil {
			return nil, "", err
		}
		a, err := asset.Fetch[*agent.Architecture](ctx, s)
		if err != nil {
			return nil, "", err
		}
		ri, err := asset.Fetch[*agent.ReleaseImage](ctx, s)
		if err != nil {
			return nil, "", err
		}
		info := fromPayload(p)
		info.Origin = ri.Origin
		return info, a.Arch, nil
	}
	// No inputs: --offline's given facts, or an anonymous read with the
	// system trust store.
	req, err := requestedRelease(o.release)
	if err != nil {
		return nil, "", err
	}
	if req.Offline {
		if err := checkOffline(req); err != nil {
			return nil, "", err
		}
		info := offlineInfo(req)
		info.Origin = releaseOrigin(g, o.release)
		return info, arch.Default, nil
	}
	c, err := release.New(release.Options{})
	if err != nil {
		return nil, "", err
	}
	rel, err := c.Resolve(ctx, o.release.image)
	if err != nil {
		return nil, "", err
	}
	if o.release.version != "" && o.release.version != rel.Version {
		return nil, "", fmt.Errorf("release image %s is OpenShift %s, not %s (--release-version)", o.release.image, rel.Version, o.release.version)
	}
	info := &resolvedInfo{Description: release.Description{PullSpec: rel.PullSpec, Pinned: rel.Pinned, Digest: rel.Digest, Version: rel.Version,
		Arch: rel.Arch, Architectures: rel.Architectures, Source: agent.ReleaseFromRegistry, From: rel.From,
		MachineOSImages: rel.Components[release.MachineOSImagesComponent], Origin: releaseOrigin(g, o.release)}, stream: rel.StreamRaw}
	for _, a := range rel.Attempts {
		info.Attempts = append(info.Attempts, a.String())
	}
	cpu := arch.Default
	if rel.Arch != arch.Multi {
		cpu = rel.Arch
	}
	return info, cpu, nil
}

func requestedRelease(rf releaseFlags) (*agent.ReleaseImage, error) {
	if rf.image == "" {
		return nil, agent.ErrNoRelease
	}
	r, err := agent.NewReleaseImage(rf.image)
	if err != nil {
		return nil, err
	}
	r.Version, r.Offline = rf.version, rf.offline
	return r, nil
}

// checkOffline applies the --offline rules of the ReleasePayload asset:
// a digest and its version, never a tag.
func checkOffline(r *agent.ReleaseImage) error {
	_, err := agent.OfflineRelease(r.PullSpec, r.Version)
	if err != nil {
		return fmt.Errorf("release image %s is a tag, and --offline forbids looking it up: pass it by digest (repository@sha256:...) together with --release-version", r.PullSpec)
	}
	if r.Version == "" {
		return fmt.Errorf("release image %s: --offline needs --release-version (the exact OpenShift version of that payload); agentiso never guesses it", r.PullSpec)
	}
	return nil
}

// offlineInfo describes an --offline release without reading it (the same
// rules as the ReleasePayload asset).
func offlineInfo(r *agent.ReleaseImage) *resolvedInfo {
	info := &resolvedInfo{Description: release.Description{PullSpec: r.PullSpec, Pinned: r.PullSpec, Version: r.Version, Arch: arch.Default,
		Architectures: []string{arch.Default}, Source: agent.ReleaseFromOffline}}
	if i := strings.LastIndex(r.PullSpec, "@"); i >= 0 {
		info.Digest = r.PullSpec[i+1:]
	}
	return info
}

func fromPayload(p *agent.ReleasePayload) *resolvedInfo {
	return &resolvedInfo{Description: release.Description{PullSpec: p.PullSpec, Pinned: p.Pinned, Digest: p.Digest, Version: p.Version,
		Arch: p.Arch, Architectures: p.Architectures, Source: p.Source, From: p.From, Attempts: p.Attempts,
		MachineOSImages: p.MachineOSImages, Warnings: p.Warn}, stream: p.Stream, fromMirror: p.ReadFromMirror()}
}
