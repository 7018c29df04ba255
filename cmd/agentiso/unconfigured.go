package main

import (
	"context"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

const unconfiguredInputs = `Reads from --dir (docs/unconfigured.md):
  cluster-manifests/infraenv.yaml            required: SSH key, architecture, NTP
  cluster-manifests/pull-secret.yaml         required
  cluster-manifests/cluster-image-set.yaml   the release (or --release-image)
  cluster-manifests/nmstateconfig.yaml       optional static networking
  mirror/registries.conf, mirror/ca-bundle.crt   optional mirrors and CA
  agent-config.yaml                          optional, rendezvousIP only
Refused: install-config.yaml, and agent-config.yaml hosts, additionalNTPSources,
bootArtifactsBaseURL, minimalISO. No interactive flavour (agent TUI, web UI).`

func newCreateUnconfiguredIgnitionCmd(g *globals) *cobra.Command {
	o := &ignitionOptions{}
	c := &cobra.Command{
		Use:   "unconfigured-ignition",
		Short: "Write the Ignition config of a generic ISO that names no cluster",
		Long: `Write the Ignition config of the generic ISO: every program of the agent ISO
and nothing of any cluster. A host booted from it waits until a config image
('agentiso create config-image') is attached, then installs as usual.

` + unconfiguredInputs + `

Writes into --dir unconfigured-agent.ign (0600: it holds the pull secret).
No auth/ and no rendezvousIP: the generic ISO has no credentials.`,
		Example: `  agentiso create unconfigured-ignition --dir factory \
      --release-image quay.io/openshift-release-dev/ocp-release@sha256:<digest>
  jq '.systemd.units[] | select(.enabled) | .name' factory/unconfigured-agent.ign`,
		Args: cobra.NoArgs,
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
		Long: `Build the generic ISO: the RHCOS live ISO with the config of
'create unconfigured-ignition' embedded. Boot every host from it; each
waits, saying so on its console, until the config image of its cluster
('agentiso create config-image') is attached, then installs as usual.

` + unconfiguredInputs + `

The base ISO is found as for 'create image'. Writes into --dir
agent-unconfigured.<arch>.iso and its .sha256 (the ISO 0600: it holds the
pull secret), through a temporary name.`,
		Example: `  agentiso create unconfigured-image --dir factory --base-iso rhcos-live.x86_64.iso \
      --release-image quay.io/openshift-release-dev/ocp-release@sha256:<digest>
  agentiso iso ignition show --files factory/agent-unconfigured.x86_64.iso`,
		Args: cobra.NoArgs,
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
