package main

import (
	"context"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

type clusterManifestsOptions struct {
	release releaseFlags
	forHub  bool
}

func newCreateClusterManifestsCmd(g *globals) *cobra.Command {
	o := &clusterManifestsOptions{}
	c := &cobra.Command{
		Use:   "cluster-manifests",
		Short: "Write the ZTP manifests and mirror config the agent ISO carries",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCreateClusterManifests(cmd.Context(), g, o)
		},
	}
	addReleaseFlags(c.Flags(), &o.release, true)
	c.Flags().BoolVar(&o.forHub, "for-hub", false, "also write hub/<host>.yaml: the BareMetalHost and BMC Secret of each install-config host with a BMC, for a hub's Metal3 + assisted-service (docs/serve-boot.md)")
	return c
}

func runCreateClusterManifests(ctx context.Context, g *globals, o *clusterManifestsOptions) error {
	s, err := openStore(g, o.release)
	if err != nil {
		return err
	}
	targets := agent.ClusterManifestsTargets()
	if o.forHub {
		targets = append(targets, agent.HubTargets()...)
	}
	// AgentManifests cross-checks the manifests it gathers.
	if err := fetchAll(ctx, g, s, append([]asset.Asset{&agent.AgentManifests{}}, targets...)...); err != nil {
		return err
	}
	if err := s.Persist(ctx, targets...); err != nil {
		return err
	}
	g.log.Info("Manifests created in: " + filepath.Join(g.dir, assetdir.ClusterManifestsDir) + " and " + filepath.Join(g.dir, assetdir.MirrorDir))
	if o.forHub {
		g.log.Info("Hub manifests (BareMetalHost + BMC Secret per host, 0600) created in: " + filepath.Join(g.dir, assetdir.HubDir))
	}
	return reportCreated(ctx, g, s, "create cluster-manifests")
}
