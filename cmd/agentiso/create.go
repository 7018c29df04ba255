package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/data"
	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

func newCreateCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "create",
		Short: "Create agent install artifacts",
		Long: `Create agent install artifacts from the inputs in --dir.

Inputs are install-config.yaml + agent-config.yaml, or the ZTP manifests
under cluster-manifests/, or a mix. A file you put (or edit) in --dir always
wins over the one agentiso would generate, and agentiso never deletes or
rewrites your input files.`,
		Example: `  agentiso create agent-config-template --dir mycluster
  agentiso create cluster-manifests --dir mycluster`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	output.AddPersistentFlag(c, &g.format, "what was written (each file with its size and sha256) and the release")
	c.AddCommand(newCreateClusterManifestsCmd(g), newCreateAgentConfigTemplateCmd(g), newCreateIgnitionCmd(g), newCreateImageCmd(g), newCreatePXEFilesCmd(g),
		newCreateUnconfiguredIgnitionCmd(g), newCreateUnconfiguredImageCmd(g), newCreateConfigImageCmd(g))
	return c
}

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

// openStore opens the asset store for --dir and applies command-line
// overrides.
func openStore(g *globals, rf releaseFlags) (*asset.Store, error) {
	s, err := asset.NewStore(g.dir, g.log)
	if err != nil {
		return nil, err
	}
	if err := rf.provide(s, releaseOrigin(g, rf)); err != nil {
		return nil, err
	}
	return s, nil
}

// fetchAll resolves every asset as every create command does
// (agent.Resolve: all input problems at once, the release named, the
// warnings shown).
func fetchAll(ctx context.Context, g *globals, s *asset.Store, as ...asset.Asset) error {
	return agent.Resolve(ctx, s, g.log, as...)
}

// reportCreated prints, with -o json|yaml, what a create command wrote
// and the release it installs.
func reportCreated(ctx context.Context, g *globals, s *asset.Store, command string) error {
	if g.format == output.Text {
		return nil
	}
	return output.Write(g.out, g.format, agent.Describe(ctx, s, command))
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

func newCreateAgentConfigTemplateCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "agent-config-template",
		Short: "Write a commented agent-config.yaml to start from",
		Long: `Write agent-config.yaml into --dir: a commented example with one host using
static networking. Edit it to describe your machines:

  rendezvousIP          IP of the first control-plane host (node zero); it
                        runs the temporary installer service
  additionalNTPSources  NTP servers the hosts can reach
  hosts[].hostname      name to give the host
  hosts[].role          master, arbiter or worker (empty: assigned)
  hosts[].rootDeviceHints  which disk to install to
  hosts[].interfaces    NIC names with their MACs: at least one (a host is
                        matched to its machine by MAC), and every NIC that
                        networkConfig uses
  hosts[].networkConfig NMState static networking (omit for DHCP)
  hosts[].installerArgs extra coreos-installer arguments, one per entry; only
                        the flags assisted-service accepts (agentiso
                        extension; see docs/inputs.md)
  hosts[].ignitionConfigOverride  Ignition JSON merged into the installed
                        host's config (agentiso extension)
  disabledHostValidations  host validations to turn off, e.g. for remote
                        worker nodes (agentiso extension)

An existing agent-config.yaml is never overwritten.`,
		Example: `  agentiso create agent-config-template --dir mycluster
  $EDITOR mycluster/agent-config.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := filepath.Join(g.dir, assetdir.AgentConfig)
			if _, err := os.Stat(p); err == nil {
				return fmt.Errorf("%s already exists; agentiso never overwrites your inputs (remove it first to get a fresh template)", p)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			if err := fsutil.WriteFileAtomic(p, []byte(data.AgentConfigTemplate), assetdir.Mode(assetdir.AgentConfig)); err != nil {
				return fmt.Errorf("write %s: %w", p, err)
			}
			g.log.Info("Agent-Config-Template created in: " + g.dir)
			if g.format == output.Text {
				return nil
			}
			sum := sha256.Sum256([]byte(data.AgentConfigTemplate))
			return output.Write(g.out, g.format, &agent.Created{Command: "create agent-config-template", Dir: g.dir, Files: []asset.Output{{
				Path: assetdir.AgentConfig, Size: int64(len(data.AgentConfigTemplate)), SHA256: hex.EncodeToString(sum[:]),
				Mode: fmt.Sprintf("%04o", assetdir.Mode(assetdir.AgentConfig).Perm())}}})
		},
	}
}

func newGraphCmd(g *globals) *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "graph",
		Short: "Print the asset graph in Graphviz DOT form",
		Long: `Print how every artifact is derived from the inputs: one node per asset, an
edge from each parent to its child. Render it with Graphviz.`,
		Example: `  agentiso graph | dot -Tsvg > graph.svg
  agentiso graph --output-file graph.dot`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return asset.WriteDOT(g.out, agent.AllTargets()...)
			}
			var b bytes.Buffer
			if err := asset.WriteDOT(&b, agent.AllTargets()...); err != nil {
				return err
			}
			return fsutil.WriteFileAtomic(out, b.Bytes(), 0o644)
		},
	}
	c.Flags().StringVar(&out, "output-file", "", "write the graph to this file instead of standard output")
	return c
}
