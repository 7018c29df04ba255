package main

import (
	"context"
	"path/filepath"

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
}

func newCreateImageCmd(g *globals) *cobra.Command {
	o := &imageOptions{}
	c := &cobra.Command{
		Use:   "image",
		Short: "Build the bootable agent ISO",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCreateImage(cmd.Context(), g, o)
		},
	}
	o.addFlags(c.Flags())
	return c
}

func runCreateImage(ctx context.Context, g *globals, o *imageOptions) error {
	s, err := persistImageTargets(ctx, g, o, agent.ImageTargets())
	if err != nil {
		return err
	}
	iso, err := asset.Fetch[*agent.AgentISO](ctx, s)
	if err != nil {
		return err
	}
	res := iso.Result()
	if iso.Minimal {
		g.log.Info("Generated minimal ISO at "+res.Path, "bytes", res.Size, "sha256", res.SHA256, "rootfs", iso.RootfsURL)
		if r := iso.RootfsResult(); r != nil {
			g.log.Info("RootFS file created in "+filepath.Dir(r.Path)+". Upload it at "+iso.RootfsURL, "file", r.Path, "bytes", r.Size, "sha256", r.SHA256, "method", r.Method, "sha256-from", r.HashSource())
		}
	} else {
		g.log.Info("Generated ISO at "+res.Path, "bytes", res.Size, "sha256", res.SHA256, "method", res.Method, "sha256-from", res.HashSource())
	}
	g.log.Warn("The ISO carries the pull secret and install credentials; it is readable only by you (0600). Keep it private.")
	return reportCreated(ctx, g, s, "create image")
}

// persistImageTargets resolves and writes the targets of a command that
// builds from the base ISO (agent.PersistImageTargets).
func persistImageTargets(ctx context.Context, g *globals, o *imageOptions, targets []asset.Asset) (*asset.Store, error) {
	s, err := openStore(g, o.release)
	if err != nil {
		return nil, err
	}
	return s, agent.PersistImageTargets(ctx, s, g.log, o.assetOptions(g), o.regenerate, targets)
}
