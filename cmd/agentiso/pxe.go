package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

func newCreatePXEFilesCmd(g *globals) *cobra.Command {
	o := &imageOptions{}
	c := &cobra.Command{
		Use:   "pxe-files",
		Short: "Build PXE files: kernel, initrd with the agent config, rootfs, iPXE script",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCreatePXEFiles(cmd.Context(), g, o)
		},
	}
	o.addFlags(c.Flags())
	return c
}

func runCreatePXEFiles(ctx context.Context, g *globals, o *imageOptions) error {
	s, err := persistImageTargets(ctx, g, o, agent.PXETargets())
	if err != nil {
		return err
	}
	px, err := asset.Fetch[*agent.PXEFiles](ctx, s)
	if err != nil {
		return err
	}
	for _, r := range px.Results() {
		g.log.Debug("wrote", "file", r.Path, "bytes", r.Size, "sha256", r.SHA256, "method", r.Method, "sha256-from", r.HashSource())
	}
	g.log.Info("PXE boot artifacts created in " + filepath.Join(s.Dir(), assetdir.BootArtifactsDir))
	g.log.Info("Kernel parameters for PXE boot: " + px.Kargs)
	if px.IPXE != "" {
		g.log.Info("Created iPXE script "+px.IPXE, "rootfs", px.RootfsURL)
	} else {
		g.log.Info("No iPXE script: set bootArtifactsBaseURL in agent-config.yaml for one; boot with coreos.live.rootfs_url=<URL of " + filepath.Base(px.Rootfs) + "> added")
		stale := filepath.Join(s.Dir(), strings.TrimSuffix(px.Kernel, "-"+assetdir.PXEKernel)+".ipxe")
		if _, err := os.Stat(stale); err == nil {
			g.log.Warn("The iPXE script " + stale + " is from an earlier run and was left as it was: it boots from the bootArtifactsBaseURL of that run")
		}
	}
	g.log.Warn("The initrd " + filepath.Join(s.Dir(), px.Initrd) + " carries the pull secret and install credentials, so it is readable only by you (0600): " +
		"serve it as yourself, or copy it for the web server's group only (README, \"Serving the PXE files\"); never make it world-readable")
	return reportCreated(ctx, g, s, "create pxe-files")
}
