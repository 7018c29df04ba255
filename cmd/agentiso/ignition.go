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
		Long: `Validate the inputs and write the Ignition config that 'create image' embeds
in the ISO, so it can be read, diffed and checked (e.g. with ignition-validate)
without building an ISO.

Writes into --dir:
  agent.ign                 indented JSON (0600: holds the pull secret and tokens)
  auth/kubeconfig           admin kubeconfig of the new cluster (0600)
  auth/kubeadmin-password   console password (0600)
  rendezvousIP              the node-zero address

Keys, tokens and the password are generated once and kept in
.agentiso/state.json, so 'create ignition' and 'create image' agree and
re-runs keep the same credentials.`,
		Example: `  agentiso create ignition --dir mycluster
  jq '.storage.files[].path' mycluster/agent.ign`,
		Args: cobra.NoArgs,
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
