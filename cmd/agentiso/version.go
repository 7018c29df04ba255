package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/config"
	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/pkg/releasepolicy"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// versionInfo is what version prints.
type versionInfo struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	Commit    string `json:"commit"`
	// Release is the release set in the environment or the config file
	// (nil: none; agentiso pins no default).
	Release   *versionRelease  `json:"release,omitempty"`
	Supported versionSupported `json:"supported"`
}

type versionRelease struct {
	PullSpec string `json:"pullSpec"`
	Origin   string `json:"origin"`
}

type versionSupported struct {
	// Floor is the oldest supported OpenShift minor release; NewestChecked
	// the newest one checked against assisted-service.
	Floor         string `json:"floor"`
	NewestChecked string `json:"newestChecked"`
	// Refused are the releases between the two that are not supported
	// (4.17).
	Refused []string `json:"refused,omitempty"`
}

func newVersionCmd(g *globals) *cobra.Command {
	var format output.Format
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the agentiso version and the release it would install",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := versionInfo{Version: version, GoVersion: "unknown", Commit: "unknown",
				Supported: versionSupported{Floor: releasepolicy.Floor().String(), NewestChecked: releasepolicy.NewestChecked().String()}}
			for _, m := range releasepolicy.Refused() {
				v.Supported.Refused = append(v.Supported.Refused, m.String())
			}
			if bi, ok := debug.ReadBuildInfo(); ok {
				v.GoVersion = bi.GoVersion
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" {
						v.Commit = s.Value
					}
				}
			}
			s, err := g.config.Lookup("release-image")
			if err != nil {
				return err
			}
			if s.Source == config.FromEnv || s.Source == config.FromFile {
				v.Release = &versionRelease{PullSpec: s.Value, Origin: s.Place()}
			}
			if format != output.Text {
				return output.Write(g.out, format, v)
			}
			fmt.Fprintf(g.out, "agentiso %s\nbuilt with %s from commit %s\n", v.Version, v.GoVersion, v.Commit)
			if v.Release != nil {
				fmt.Fprintf(g.out, "release image %s (from %s)\n", v.Release.PullSpec, v.Release.Origin)
			} else {
				fmt.Fprintf(g.out, "release image: none pinned in this build; create commands need --release-image (or $%s, or release-image: in the config file, or a ClusterImageSet)\n", config.EnvVar("release-image"))
			}
			fmt.Fprintf(g.out, "supported releases: OpenShift %s (checked against assisted-service up to %s)\n",
				releasepolicy.Supported(), releasepolicy.NewestChecked().Branch())
			return nil
		},
	}
	output.AddFlag(c, &format, "the version and release")
	return c
}
