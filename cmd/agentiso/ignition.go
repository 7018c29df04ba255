package main

import (
	"context"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

type ignitionOptions struct {
	release     releaseFlags
	regenerate  bool
	interactive bool // create unconfigured-ignition only: refused
}

func newCreateIgnitionCmd(g *globals) *cobra.Command {
	o := &ignitionOptions{}
	c := &cobra.Command{
		Use:   "ignition",
		Short: "Write the agent Ignition config the ISO would carry, for inspection",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCreateIgnition(cmd.Context(), g, o)
		},
	}
	addReleaseFlags(c.Flags(), &o.release, true)
	c.Flags().BoolVar(&o.regenerate, regenerateCredentialsFlag, false, "generate new keys, tokens, CAs and password, replacing those in auth/ and the state")
	return c
}

func runCreateIgnition(ctx context.Context, g *globals, o *ignitionOptions) error {
	s, err := openStore(g, o.release)
	if err != nil {
		return err
	}
	if err := agent.GuardCredentials(s, o.regenerate); err != nil {
		return err
	}
	targets := agent.IgnitionTargets()
	if err := fetchAll(ctx, g, s, targets...); err != nil {
		return err
	}
	if err := agent.ReportIgnition(ctx, s, g.log); err != nil {
		return err
	}
	if err := s.Persist(ctx, targets...); err != nil {
		return err
	}
	g.log.Info("Created " + filepath.Join(g.dir, assetdir.AgentIgnition))
	return reportCreated(ctx, g, s, "create ignition")
}
