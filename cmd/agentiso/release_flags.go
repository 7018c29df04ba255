package main

import (
	"github.com/spf13/pflag"

	"github.com/seed-a052040e/agentiso/internal/config"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
)

// releaseFlags are the release options shared by the create commands.
type releaseFlags struct {
	image   string // --release-image
	version string // --release-version
	offline bool   // --offline
	// origin names where image came from when it is not the layered
	// setting (release info's IMAGE argument).
	origin string
}

// addReleaseFlags declares --release-image, --release-version and, unless
// the command declares its own, --offline.
func addReleaseFlags(f *pflag.FlagSet, r *releaseFlags, withOffline bool) {
	f.StringVar(&r.image, "release-image", "", "OpenShift release image pull spec to install, by digest (a tag is resolved through the registry); agentiso pins no default: without it, the release of cluster-manifests/cluster-image-set.yaml (env "+config.EnvVar("release-image")+")")
	f.StringVar(&r.version, "release-version", "", "exact OpenShift version of the release (e.g. 4.20.3): checked against the payload, or with --offline taken as given for a release by digest")
	if withOffline {
		f.BoolVar(&r.offline, "offline", false, "never contact a registry: the release must be given by digest with --release-version")
	}
}

// releaseOrigin says where the release image setting came from:
// "--release-image", "$AGENTISO_RELEASE_IMAGE" or "config file PATH:LINE".
func releaseOrigin(g *globals, r releaseFlags) string {
	if r.origin != "" {
		return r.origin
	}
	if p := g.setting("release-image").Place(); p != "" {
		return p
	}
	return "--release-image"
}

// provide hands the requested release to the store: --release-image with
// its version and --offline, or, without it, those two for the release of
// the ClusterImageSet.
func (r releaseFlags) provide(s *asset.Store, origin string) error {
	if r.image == "" {
		if r.version == "" && !r.offline {
			return nil
		}
		return s.Provide(&agent.ReleaseOptions{Version: r.version, Offline: r.offline})
	}
	rel, err := agent.NewReleaseImage(r.image)
	if err != nil {
		return err
	}
	rel.Version, rel.Offline, rel.Origin = r.version, r.offline, origin
	return s.Provide(rel)
}
