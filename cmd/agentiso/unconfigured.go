package main

import (
	"context"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

func newCreateUnconfiguredIgnitionCmd(g *globals) *cobra.Command {
	o := &ignitionOptions{}
	c := &cobra.Command{
		Use:   "unconfigured-ignition",
		Short: "Write the Ignition config of a generic ISO that names no cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCreateUnconfiguredIgnition(cmd.Context(), g, o)
		},
	}
	addReleaseFlags(c.Flags(), &o.release, true)
	c.Flags().BoolVar(&o.interactive, "interactive", false, "not supported: upstream's interactive flow (agent TUI, web UI); refused with the reason")
	return c
}

func runCreateUnconfiguredIgnition(ctx context.Context, g *globals, o *ignitionOptions) error {
	if o.interactive {
		return agent.ErrInteractiveUnsupported
	}
	s, err := openStore(g, o.release)
	if err != nil {
		return err
	}
	if err := s.Provide(&agent.Workflow{Unconfigured: true}); err != nil {
		return err
	}
	targets := agent.UnconfiguredIgnitionTargets()
	if err := fetchAll(ctx, g, s, targets...); err != nil {
		return err
	}
	if err := reportUnconfiguredIgnition(ctx, g, s); err != nil {
		return err
	}
	if err := s.Persist(ctx, targets...); err != nil {
		return err
	}
	g.log.Info("Unconfigured-Ignition created in: " + filepath.Join(g.dir, assetdir.UnconfiguredIgnition))
	return nil
}

func newCreateUnconfiguredImageCmd(g *globals) *cobra.Command {
	o := &imageOptions{}
	c := &cobra.Command{
		Use:   "unconfigured-image",
		Short: "Build the generic ISO: the agent ISO without any cluster in it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCreateUnconfiguredImage(cmd.Context(), g, o)
		},
	}
	o.addFlags(c.Flags())
	return c
}

func runCreateUnconfiguredImage(ctx context.Context, g *globals, o *imageOptions) error {
	s, err := openStore(g, o.release)
	if err != nil {
		return err
	}
	var held []func()
	defer func() {
		for _, release := range held {
			release()
		}
	}()
	opts := o.assetOptions(g)
	opts.HoldBaseISO = func(release func()) { held = append(held, release) }
	if err := s.Provide(opts); err != nil {
		return err
	}
	if err := s.Provide(&agent.Workflow{Unconfigured: true}); err != nil {
		return err
	}
	// Every configuration error before a base ISO is looked for.
	if err := fetchAll(ctx, g, s, agent.UnconfiguredIgnitionTargets()...); err != nil {
		return err
	}
	if err := reportUnconfiguredIgnition(ctx, g, s); err != nil {
		return err
	}
	iso, err := asset.Fetch[*agent.UnconfiguredISO](ctx, s)
	if err != nil {
		return err
	}
	if err := s.Persist(ctx, agent.UnconfiguredImageTargets()...); err != nil {
		return err
	}
	res := iso.Result()
	g.log.Info("Generated ISO at "+res.Path, "bytes", res.Size, "sha256", res.SHA256, "method", res.Method)
	g.log.Warn("The generic ISO carries the pull secret; it is readable only by you (0600). It carries no cluster credentials.")
	return nil
}

// reportUnconfiguredIgnition shows how much of the embed area the generic
// ISO's config takes.
func reportUnconfiguredIgnition(ctx context.Context, g *globals, s *asset.Store) error {
	ign, err := asset.Fetch[*agent.UnconfiguredIgnition](ctx, s)
	if err != nil {
		return err
	}
	g.log.Info("Ignition: " + ign.Size.String())
	return nil
}
