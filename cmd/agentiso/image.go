package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
)

type imageOptions struct {
	release    releaseFlags
	strict     bool
	baseISO    string
	baseISOSHA string
	mirror     string
	cacheDir   string
	regenerate bool
	resetBase  bool
	// create image only (docs/airgap.md)
	embedPayload bool
	embedImages  []string
}

func newCreateImageCmd(g *globals) *cobra.Command {
	o := &imageOptions{}
	c := &cobra.Command{
		Use:   "image",
		Short: "Build the bootable agent ISO",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.create(cmd, o.release, true, func(ctx context.Context, s *asset.Store) error {
				return agent.CreateImage(ctx, s, g.log, o.assetOptions(g), o.regenerate)
			})
		},
	}
	o.addFlags(c.Flags())
	c.Flags().BoolVar(&o.embedPayload, "embed-payload", false, "carry the release payload in the ISO and serve it from every host on port 22625: no registry at the site (4.21 or later, with featureSet: TechPreviewNoUpgrade in install-config.yaml; docs/airgap.md)")
	c.Flags().StringArrayVar(&o.embedImages, "embed-image", nil, "with --embed-payload, one more image to carry, by digest (repeatable)")
	return c
}

func newCreatePXEFilesCmd(g *globals) *cobra.Command {
	o := &imageOptions{}
	c := &cobra.Command{
		Use:   "pxe-files",
		Short: "Build PXE files: kernel, initrd with the agent config, rootfs, iPXE script",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.create(cmd, o.release, true, func(ctx context.Context, s *asset.Store) error {
				return agent.CreatePXEFiles(ctx, s, g.log, o.assetOptions(g), o.regenerate)
			})
		},
	}
	o.addFlags(c.Flags())
	return c
}

func newCreateUnconfiguredImageCmd(g *globals) *cobra.Command {
	o := &imageOptions{}
	c := &cobra.Command{
		Use:   "unconfigured-image",
		Short: "Build the generic ISO: the agent ISO without any cluster in it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.create(cmd, o.release, false, func(ctx context.Context, s *asset.Store) error {
				return agent.CreateUnconfiguredImage(ctx, s, g.log, o.assetOptions(g))
			})
		},
	}
	o.addFlags(c.Flags())
	return c
}
