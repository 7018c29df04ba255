package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

func newCreateConfigImageCmd(g *globals) *cobra.Command {
	o := &ignitionOptions{}
	c := &cobra.Command{
		Use:   "config-image",
		Short: "Build the config image that configures hosts booted from the generic ISO",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCreateConfigImage(cmd.Context(), g, o)
		},
	}
	addReleaseFlags(c.Flags(), &o.release, true)
	c.Flags().BoolVar(&o.regenerate, regenerateCredentialsFlag, false, "generate new keys, tokens, CAs and password, replacing those in auth/ and the state")
	return c
}

func runCreateConfigImage(ctx context.Context, g *globals, o *ignitionOptions) error {
	s, err := openStore(g, o.release)
	if err != nil {
		return err
	}
	if err := agent.GuardCredentials(s, o.regenerate); err != nil {
		return err
	}
	targets := agent.ConfigImageTargets()
	if err := fetchAll(ctx, g, s, targets...); err != nil {
		return err
	}
	rip, err := asset.Fetch[*agent.RendezvousIP](ctx, s)
	if err != nil {
		return err
	}
	g.log.Info("The rendezvous host IP (node0 IP) is " + rip.IP)
	if err := s.Persist(ctx, targets...); err != nil {
		return err
	}
	ci, err := asset.Fetch[*agent.ConfigImage](ctx, s)
	if err != nil {
		return err
	}
	g.log.Info("Config image created in: "+filepath.Join(g.dir, assetdir.ConfigImage), "files", ci.Members, "bytes", ci.Size(),
		"release", ci.Info.ReleaseImage)
	g.log.Warn(fmt.Sprintf("The config image carries the pull secret and install credentials; it is readable only by you (0%o). Keep it private.", assetdir.Mode(assetdir.ConfigImage)))
	return nil
}
