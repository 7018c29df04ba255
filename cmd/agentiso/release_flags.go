package main

import (
	"github.com/spf13/pflag"

	"github.com/seed-a052040e/agentiso/internal/config"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
)

// releaseFlags are the release options shared by the create commands;
// Origin is set only where the release is not the layered setting
// (release info's IMAGE argument).
type releaseFlags = agent.ReleaseRequest

// addReleaseFlags declares --release-image, --release-version and, unless
// the command declares its own, --offline.
func addReleaseFlags(f *pflag.FlagSet, r *releaseFlags, withOffline bool) {
	f.StringVar(&r.Image, "release-image", "", "OpenShift release image pull spec to install, by digest (a tag is resolved through the registry); agentiso pins no default: without it, the release of cluster-manifests/cluster-image-set.yaml (env "+config.EnvVar("release-image")+")")
	f.StringVar(&r.Version, "release-version", "", "exact OpenShift version of the release (e.g. 4.20.3): checked against the payload, or with --offline taken as given for a release by digest")
	if withOffline {
		f.BoolVar(&r.Offline, "offline", false, "never contact a registry: the release must be given by digest with --release-version")
	}
}

// releaseOrigin says where the release image setting came from:
// "--release-image", "$AGENTISO_RELEASE_IMAGE" or "config file PATH:LINE".
func releaseOrigin(g *globals, r releaseFlags) string {
	if r.Origin != "" {
		return r.Origin
	}
	if p := g.setting("release-image").Place(); p != "" {
		return p
	}
	return "--release-image"
}

// openStore opens the asset store for --dir with the release the command
// line asked for (agent.OpenStore).
func openStore(g *globals, rf releaseFlags) (*asset.Store, error) {
	rf.Origin = releaseOrigin(g, rf)
	return agent.OpenStore(g.dir, g.log, rf)
}
