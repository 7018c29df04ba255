package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
	"github.com/seed-a052040e/agentiso/pkg/releasepolicy"
)

// The create commands, one function each: given the store of the asset
// directory (with the release the command line asked for), each resolves
// its targets (Resolve: every input problem at once), writes them as one
// unit, and logs on log where they are and what the user must know of
// them.

// ReleaseRequest is the release a command line asks for: --release-image
// (Image, given at Origin), --release-version and --offline.
type ReleaseRequest struct {
	Image, Version string
	Offline        bool
	// Origin names where Image was given: "--release-image",
	// "$AGENTISO_RELEASE_IMAGE", "config file PATH:LINE" or release
	// info's IMAGE argument.
	Origin string
	// MirrorFrom is --mirror-from: an oc-mirror v2 output directory
	// (OCMirror).
	MirrorFrom string
}

// OpenStore is the store of a command on the asset directory dir, with
// the release r asks for: Image with its version and Offline or, without
// Image, those two for the release of the ClusterImageSet.
func OpenStore(dir string, log *slog.Logger, r ReleaseRequest) (*asset.Store, error) {
	if r.Version != "" {
		if err := releasepolicy.CheckReleaseVersion(r.Version); err != nil {
			return nil, fmt.Errorf("--release-version: %w", err)
		}
	}
	s, err := asset.NewStore(dir, log)
	if err != nil {
		return nil, err
	}
	s.SetWriterOf(WriterOf)
	if r.MirrorFrom != "" {
		if err := s.Provide(&MirrorFrom{Dir: r.MirrorFrom}); err != nil {
			return nil, err
		}
	}
	if r.Image == "" {
		if r.Version == "" && !r.Offline {
			return s, nil
		}
		return s, s.Provide(&ReleaseOptions{Version: r.Version, Offline: r.Offline})
	}
	rel, err := NewReleaseImage(r.Image)
	if err != nil {
		return nil, err
	}
	rel.Version, rel.Offline, rel.Origin = r.Version, r.Offline, r.Origin
	return s, s.Provide(rel)
}

// CreateClusterManifests writes the ZTP manifests and the mirror
// configuration (create cluster-manifests) and, with forHub, each BMC
// host's BareMetalHost and Secret.
func CreateClusterManifests(ctx context.Context, s *asset.Store, log *slog.Logger, forHub bool) error {
	targets := ClusterManifestsTargets()
	if forHub {
		targets = append(targets, HubTargets()...)
	}
	// AgentManifests cross-checks the manifests it gathers.
	if err := Resolve(ctx, s, log, append([]asset.Asset{&AgentManifests{}}, targets...)...); err != nil {
		return err
	}
	if err := s.Persist(ctx, targets...); err != nil {
		return err
	}
	console.Outcome(log, "Manifests created in: "+filepath.Join(s.Dir(), assetdir.ClusterManifestsDir)+" and "+filepath.Join(s.Dir(), assetdir.MirrorDir))
	if forHub {
		console.Outcome(log, "Hub manifests (BareMetalHost + BMC Secret per host, 0600) created in: "+filepath.Join(s.Dir(), assetdir.HubDir))
	}
	return nil
}

// CreateIgnition writes agent.ign with auth/ and rendezvousIP (create
// ignition), the credentials guarded (GuardCredentials).
func CreateIgnition(ctx context.Context, s *asset.Store, log *slog.Logger, opts *ImageOptions, regenerate bool) error {
	if err := provideImageOptions(s, opts); err != nil {
		return err
	}
	if err := GuardCredentials(s, regenerate); err != nil {
		return err
	}
	targets := IgnitionTargets()
	if err := Resolve(ctx, s, log, targets...); err != nil {
		return err
	}
	if err := ReportIgnition(ctx, s, log); err != nil {
		return err
	}
	if err := s.Persist(ctx, targets...); err != nil {
		return err
	}
	console.Outcome(log, "Created "+filepath.Join(s.Dir(), assetdir.AgentIgnition))
	return nil
}

// CreateImage builds the agent ISO from the base ISO of opts (create
// image; PersistImageTargets).
func CreateImage(ctx context.Context, s *asset.Store, log *slog.Logger, opts *ImageOptions, regenerate bool) error {
	if err := PersistImageTargets(ctx, s, log, opts, regenerate, ImageTargets()); err != nil {
		return err
	}
	iso, err := asset.Fetch[*AgentISO](ctx, s)
	if err != nil {
		return err
	}
	res := iso.Result()
	if iso.Minimal {
		console.Outcome(log, "Generated minimal ISO at "+res.Path, "bytes", res.Size, "sha256", res.SHA256, "rootfs", iso.RootfsURL)
		if r := iso.RootfsResult(); r != nil {
			console.Outcome(log, "RootFS file created in "+filepath.Dir(r.Path)+". Upload it at "+iso.RootfsURL, "file", r.Path, "bytes", r.Size, "sha256", r.SHA256, "method", r.Method, "sha256-from", r.HashSource())
		}
	} else {
		if res.Method == isoeditor.MethodUnchanged {
			console.Outcome(log, "ISO unchanged at "+res.Path+": the same base ISO and the same configuration as the one there, which is untouched since it was written: not rewritten", "bytes", res.Size, "sha256", res.SHA256)
		} else {
			console.Outcome(log, "Generated ISO at "+res.Path, "bytes", res.Size, "sha256", res.SHA256, "method", res.Method, "sha256-from", res.HashSource())
		}
	}
	log.Warn("The ISO carries the pull secret and install credentials; it is readable only by you (0600). Keep it private.")
	return nil
}

// CreatePXEFiles writes the PXE files from the base ISO of opts (create
// pxe-files; PersistImageTargets), and says how to boot them.
func CreatePXEFiles(ctx context.Context, s *asset.Store, log *slog.Logger, opts *ImageOptions, regenerate bool) error {
	if err := PersistImageTargets(ctx, s, log, opts, regenerate, PXETargets()); err != nil {
		return err
	}
	px, err := asset.Fetch[*PXEFiles](ctx, s)
	if err != nil {
		return err
	}
	for _, r := range px.Results() {
		log.Debug("wrote", "file", r.Path, "bytes", r.Size, "sha256", r.SHA256, "method", r.Method, "sha256-from", r.HashSource())
	}
	console.Outcome(log, "PXE boot artifacts created in "+filepath.Join(s.Dir(), assetdir.BootArtifactsDir))
	log.Info("Kernel parameters for PXE boot: " + px.Kargs)
	if px.IPXE != "" {
		console.Outcome(log, "Created iPXE script "+px.IPXE, "rootfs", px.RootfsURL)
	} else {
		log.Info("No iPXE script: set bootArtifactsBaseURL in agent-config.yaml for one; boot with coreos.live.rootfs_url=<URL of " + filepath.Base(px.Rootfs) + "> added")
		stale := filepath.Join(s.Dir(), strings.TrimSuffix(px.Kernel, "-"+assetdir.PXEKernel)+".ipxe")
		if _, err := os.Stat(stale); err == nil {
			log.Warn("The iPXE script " + stale + " is from an earlier run and was left as it was: it boots from the bootArtifactsBaseURL of that run")
		}
	}
	log.Warn("The initrd " + filepath.Join(s.Dir(), px.Initrd) + " carries the pull secret and install credentials, so it is readable only by you (0600): " +
		"serve it as yourself, or copy it for the web server's group only (README, \"Serving the PXE files\"); never make it world-readable")
	return nil
}

// CreateConfigImage writes the config image of the cluster for hosts
// booted from the generic ISO (create config-image), the credentials
// guarded (GuardCredentials).
func CreateConfigImage(ctx context.Context, s *asset.Store, log *slog.Logger, regenerate bool) error {
	if err := GuardCredentials(s, regenerate); err != nil {
		return err
	}
	targets := ConfigImageTargets()
	if err := Resolve(ctx, s, log, targets...); err != nil {
		return err
	}
	rip, err := asset.Fetch[*RendezvousIP](ctx, s)
	if err != nil {
		return err
	}
	log.Info(rip.Line())
	if err := s.Persist(ctx, targets...); err != nil {
		return err
	}
	ci, err := asset.Fetch[*ConfigImage](ctx, s)
	if err != nil {
		return err
	}
	console.Outcome(log, "Config image created in: "+filepath.Join(s.Dir(), assetdir.ConfigImage), "files", ci.Members, "bytes", ci.Size(),
		"release", ci.Info.ReleaseImage)
	log.Warn(fmt.Sprintf("The config image carries the pull secret and install credentials; it is readable only by you (0%o). Keep it private.", assetdir.Mode(assetdir.ConfigImage)))
	return nil
}

// CreateUnconfiguredIgnition writes the Ignition config of the generic ISO
// (create unconfigured-ignition).
func CreateUnconfiguredIgnition(ctx context.Context, s *asset.Store, log *slog.Logger, opts *ImageOptions) error {
	if err := provideImageOptions(s, opts); err != nil {
		return err
	}
	if err := s.Provide(&Workflow{Unconfigured: true}); err != nil {
		return err
	}
	targets := UnconfiguredIgnitionTargets()
	if err := resolveUnconfiguredIgnition(ctx, s, log); err != nil {
		return err
	}
	if err := s.Persist(ctx, targets...); err != nil {
		return err
	}
	console.Outcome(log, "Unconfigured-Ignition created in: "+filepath.Join(s.Dir(), assetdir.UnconfiguredIgnition))
	return nil
}

// CreateUnconfiguredImage builds the generic ISO from the base ISO of opts
// (create unconfigured-image): every configuration error is reported
// before a base ISO is looked for.
func CreateUnconfiguredImage(ctx context.Context, s *asset.Store, log *slog.Logger, opts *ImageOptions) error {
	defer holdBaseISO(opts)()
	if err := s.Provide(opts); err != nil {
		return err
	}
	if err := s.Provide(&Workflow{Unconfigured: true}); err != nil {
		return err
	}
	if err := resolveUnconfiguredIgnition(ctx, s, log); err != nil {
		return err
	}
	iso, err := asset.Fetch[*UnconfiguredISO](ctx, s)
	if err != nil {
		return err
	}
	if err := s.Persist(ctx, UnconfiguredImageTargets()...); err != nil {
		return err
	}
	res := iso.Result()
	console.Outcome(log, "Generated ISO at "+res.Path, "bytes", res.Size, "sha256", res.SHA256, "method", res.Method)
	log.Warn("The generic ISO carries the pull secret; it is readable only by you (0600). It carries no cluster credentials.")
	return nil
}

// resolveUnconfiguredIgnition resolves the generic ISO's config and logs
// how much of the embed area it takes.
func resolveUnconfiguredIgnition(ctx context.Context, s *asset.Store, log *slog.Logger) error {
	if err := Resolve(ctx, s, log, UnconfiguredIgnitionTargets()...); err != nil {
		return err
	}
	ign, err := asset.Fetch[*UnconfiguredIgnition](ctx, s)
	if err != nil {
		return err
	}
	log.Info("Ignition: " + ign.Size.String())
	return nil
}

// provideImageOptions gives the Ignition-only commands their --base-iso:
// with the release's RHCOS stream unknown (--offline), it says which RHCOS
// OS_IMAGES names (OSImage). nil provides nothing.
func provideImageOptions(s *asset.Store, opts *ImageOptions) error {
	if opts == nil {
		return nil
	}
	return s.Provide(opts)
}
