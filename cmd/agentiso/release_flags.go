package main

import (
	"errors"

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
}

// addReleaseFlags declares --release-image, --release-version and, unless
// the command declares its own, --offline.
func addReleaseFlags(f *pflag.FlagSet, r *releaseFlags, withOffline bool) {
	f.StringVar(&r.image, "release-image", "", "OpenShift release image pull spec to install, a tag or a digest (default: the release pinned in this build; env "+config.EnvVar("release-image")+")")
	f.StringVar(&r.version, "release-version", "", "exact OpenShift version of --release-image (e.g. 4.19.3): checked against the payload, or with --offline taken as given for a release by digest")
	if withOffline {
		f.BoolVar(&r.offline, "offline", false, "never contact a registry: the release must be the pinned default, or given by digest with --release-version")
	}
}

// provide hands the requested release to the store.
func (r releaseFlags) provide(s *asset.Store) error {
	if r.image == "" {
		if r.version != "" {
			return errors.New("--release-version describes --release-image: pass both (the pinned default release has its own version)")
		}
		if !r.offline {
			return nil
		}
		def, err := agent.DefaultRelease()
		if err != nil {
			return err
		}
		def.Offline = true
		return s.Provide(def)
	}
	rel, err := agent.NewReleaseImage(r.image)
	if err != nil {
		return err
	}
	rel.Version, rel.Offline = r.version, r.offline
	return s.Provide(rel)
}
