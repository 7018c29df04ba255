package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
)

type ignitionOptions struct {
	release     releaseFlags
	regenerate  bool
	interactive bool // create unconfigured-ignition only: refused
	baseISO     string
}

// addBaseISOFlag declares the Ignition-only commands' --base-iso: nothing
// is built from it; it names the hosts' RHCOS when the release's stream is
// unknown.
func (o *ignitionOptions) addBaseISOFlag(c *cobra.Command) {
	c.Flags().StringVar(&o.baseISO, "base-iso", "", "the RHCOS live ISO the hosts boot (a local path): with --offline, OS_IMAGES names its RHCOS (volume ID rhcos-<release>) (env "+baseiso.EnvBaseISO+")")
}

func (o *ignitionOptions) imageOptions() *agent.ImageOptions {
	return &agent.ImageOptions{BaseISO: o.baseISO, Offline: o.release.Offline}
}

func newCreateIgnitionCmd(g *globals) *cobra.Command {
	o := &ignitionOptions{}
	c := &cobra.Command{
		Use:   "ignition",
		Short: "Write the agent Ignition config the ISO would carry, for inspection",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.create(cmd, o.release, true, func(ctx context.Context, s *asset.Store) error {
				return agent.CreateIgnition(ctx, s, g.log, o.imageOptions(), o.regenerate)
			})
		},
	}
	addReleaseFlags(c.Flags(), &o.release, true)
	c.Flags().BoolVar(&o.regenerate, regenerateCredentialsFlag, false, "generate new keys, tokens, CAs and password, replacing those in auth/ and the state")
	o.addBaseISOFlag(c)
	return c
}

func newCreateConfigImageCmd(g *globals) *cobra.Command {
	o := &ignitionOptions{}
	c := &cobra.Command{
		Use:   "config-image",
		Short: "Build the config image that configures hosts booted from the generic ISO",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.create(cmd, o.release, false, func(ctx context.Context, s *asset.Store) error {
				return agent.CreateConfigImage(ctx, s, g.log, o.regenerate)
			})
		},
	}
	addReleaseFlags(c.Flags(), &o.release, true)
	c.Flags().BoolVar(&o.regenerate, regenerateCredentialsFlag, false, "generate new keys, tokens, CAs and password, replacing those in auth/ and the state")
	return c
}

func newCreateUnconfiguredIgnitionCmd(g *globals) *cobra.Command {
	o := &ignitionOptions{}
	c := &cobra.Command{
		Use:   "unconfigured-ignition",
		Short: "Write the Ignition config of a generic ISO that names no cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.interactive {
				return agent.ErrInteractiveUnsupported
			}
			return g.create(cmd, o.release, false, func(ctx context.Context, s *asset.Store) error {
				return agent.CreateUnconfiguredIgnition(ctx, s, g.log, o.imageOptions())
			})
		},
	}
	addReleaseFlags(c.Flags(), &o.release, true)
	o.addBaseISOFlag(c)
	c.Flags().BoolVar(&o.interactive, "interactive", false, "not supported: upstream's interactive flow (agent TUI, web UI); refused with the reason")
	return c
}

func newCreateClusterManifestsCmd(g *globals) *cobra.Command {
	var forHub bool
	var release releaseFlags
	c := &cobra.Command{
		Use:   "cluster-manifests",
		Short: "Write the ZTP manifests and mirror config the agent ISO carries",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.create(cmd, release, true, func(ctx context.Context, s *asset.Store) error {
				return agent.CreateClusterManifests(ctx, s, g.log, forHub)
			})
		},
	}
	addReleaseFlags(c.Flags(), &release, true)
	c.Flags().BoolVar(&forHub, "for-hub", false, "also write hub/<host>.yaml: the BareMetalHost and BMC Secret of each install-config host with a BMC, for a hub's Metal3 + assisted-service (docs/serve-boot.md)")
	return c
}
