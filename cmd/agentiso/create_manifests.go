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
		Long: `Write the six ZTP manifests the rendezvous host's assisted-service reads, plus
the mirror configuration, after validating every input.

Reads from --dir:
  install-config.yaml            cluster-wide settings (optional if the
                                 manifests below are all supplied)
  agent-config.yaml              rendezvous IP, hosts, static networking
  cluster-manifests/*.yaml       any manifest you supply is used as is
  mirror/registries.conf         mirror config you supply is used as is
  mirror/ca-bundle.crt

Writes into --dir:
  cluster-manifests/pull-secret.yaml          (0600: holds the pull secret)
  cluster-manifests/infraenv.yaml
  cluster-manifests/agent-cluster-install.yaml
  cluster-manifests/cluster-deployment.yaml
  cluster-manifests/cluster-image-set.yaml
  cluster-manifests/nmstateconfig.yaml        (only with static networking)
  mirror/registries.conf
  mirror/ca-bundle.crt                        (empty without a trust bundle)
  hub/<host>.yaml                             (--for-hub, 0600: BMC Secret +
                                              BareMetalHost of each BMC host)
  .agentiso/state.json                        (0600: what was generated from what)

Precedence, for every file: a file you created or edited in --dir wins;
otherwise the copy generated on an earlier run is reused when its inputs
are unchanged; otherwise it is generated again. Delete a file to have it
generated again. Re-running with unchanged inputs rewrites nothing.
Inputs are never deleted.

Every validation problem is reported at once, each with file, line, field
and what is allowed.`,
		Example: `  # A compact cluster: write the two inputs, then
  mkdir mycluster
  cat > mycluster/install-config.yaml <<'YAML'
  apiVersion: v1
  metadata:
    name: ostest
    namespace: cluster0
  baseDomain: example.com
  controlPlane: {name: master, replicas: 3}
  compute: [{name: worker, replicas: 0}]
  networking:
    machineNetwork: [{cidr: 192.168.111.0/24}]
  platform:
    baremetal:
      apiVIPs: [192.168.111.5]
      ingressVIPs: [192.168.111.4]
  pullSecret: '{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}'
  sshKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGqSD39lBCzJKKW6OKTsxkQCW+GbT/f+OhO9xZLMB4i7 me
  YAML
  cat > mycluster/agent-config.yaml <<'YAML'
  apiVersion: v1beta1
  kind: AgentConfig
  rendezvousIP: 192.168.111.20
  YAML
  agentiso create cluster-manifests --dir mycluster

  # Customise a manifest, then build from it: your edit wins from now on
  $EDITOR mycluster/cluster-manifests/agent-cluster-install.yaml
  agentiso create cluster-manifests --dir mycluster

  # The release by tag (resolved through the registry): agentiso pins none
  agentiso create cluster-manifests --dir mycluster \
      --release-image quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64`,
		Args: cobra.NoArgs,
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
