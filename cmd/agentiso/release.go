package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/config"
	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
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
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				// IMAGE is part of the command line: it wins over the
				// environment, but not over a different --release-image.
				if g.setting("release-image").Source == config.FromFlag && o.release.Image != args[0] {
					return fmt.Errorf("give the release once: as IMAGE or --release-image")
				}
				o.release.Image, o.release.Origin = args[0], "the IMAGE argument"
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
	o.release.Origin = releaseOrigin(g, o.release)
	d, err := agent.DirReleaseInfo(ctx, g.dir, g.log, o.release, o.mirror, o.cacheDir)
	if err != nil {
		return err
	}
	return writeResult(g.out, o.format, d)
}
