package main

import (
	"context"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
)

type ignitionOptions struct {
	release    releaseFlags
	regenerate bool
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
			o.release.fromEnv()
			_, err := buildIgnition(cmd.Context(), g, o.release, o.regenerate, &agent.AgentIgnition{})
			return err
		},
	}
	addReleaseFlags(c.Flags(), &o.release, true)
	c.Flags().BoolVar(&o.regenerate, regenerateCredentialsFlag, false, "generate new keys, tokens, CAs and password, replacing those in auth/ and the state")
	return c
}

// buildIgnition resolves the ignition and the credentials next to it,
// persists them (plus extra), and reports the rendezvous IP and size.
func buildIgnition(ctx context.Context, g *globals, rf releaseFlags, regenerate bool, extra ...asset.Writable) (*asset.Store, error) {
	s, err := openStore(g, rf)
	if err != nil {
		return nil, err
	}
	if err := guardCredentials(s, regenerate); err != nil {
		return nil, err
	}
	targets := append([]asset.Writable{&agent.RendezvousIP{}, &agent.AdminKubeconfig{}, &agent.KubeadminPassword{}}, extra...)
	all := []asset.Asset{&agent.AgentIgnition{}}
	for _, t := range targets {
		all = append(all, t)
	}
	if err := fetchAll(ctx, g, s, all...); err != nil {
		return nil, err
	}
	rip, err := asset.Fetch[*agent.RendezvousIP](ctx, s)
	if err != nil {
		return nil, err
	}
	g.log.Info("The rendezvous host IP (node0 IP) is " + rip.IP)
	ign, err := asset.Fetch[*agent.AgentIgnition](ctx, s)
	if err != nil {
		return nil, err
	}
	g.log.Info("Ignition: " + ign.Size.String())
	if err := s.Persist(targets...); err != nil {
		return nil, err
	}
	for _, t := range extra {
		r, err := s.Fetch(ctx, t)
		if err != nil {
			return nil, err
		}
		for _, f := range r.(asset.Writable).Files() {
			g.log.Info("Created " + filepath.Join(g.dir, f.Path))
		}
	}
	return s, nil
}
