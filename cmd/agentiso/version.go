package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/seed-a052040e/agentiso/internal/config"
	"github.com/seed-a052040e/agentiso/pkg/releasepolicy"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the agentiso version and the release it would install",
		Long: `Print the agentiso version, the Go version it was built with and the VCS revision
when known, then the OpenShift release: agentiso pins none, so this names the
release set in the environment or the config file (and where), if any, and
the releases agentiso supports.`,
		Example: `  agentiso version`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rev := "unknown"
			goVer := "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				goVer = bi.GoVersion
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" {
						rev = s.Value
					}
				}
			}
			fmt.Fprintf(g.out, "agentiso %s\nbuilt with %s from commit %s\n", version, goVer, rev)
			s, err := releaseImageSetting(g)
			if err != nil {
				return err
			}
			if s.Source == config.FromEnv || s.Source == config.FromFile {
				origin := s.Origin
				if s.Source == config.FromFile {
					origin = "config file " + origin
				}
				fmt.Fprintf(g.out, "release image %s (from %s)\n", s.Value, origin)
			} else {
				fmt.Fprintf(g.out, "release image: none pinned in this build; create commands need --release-image (or $%s, or release-image: in the config file, or a ClusterImageSet)\n", config.EnvVar("release-image"))
			}
			fmt.Fprintf(g.out, "supported releases: OpenShift %s and later (checked against assisted-service up to %s)\n",
				releasepolicy.Floor(), releasepolicy.NewestChecked().Branch())
			return nil
		},
	}
}

// releaseImageSetting resolves release-image through the environment and
// the config file, as the create commands would.
func releaseImageSetting(g *globals) (config.Setting, error) {
	if g.layers == nil {
		return config.Setting{Source: config.FromDefault}, nil
	}
	fs := pflag.NewFlagSet("version", pflag.ContinueOnError)
	fs.String("release-image", "", "")
	settings, err := g.layers.Resolve(fs)
	if err != nil || len(settings) != 1 {
		return config.Setting{}, err
	}
	return settings[0], nil
}
