package main

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

func newNodeImageCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "node-image",
		Short: "Day 2: add nodes to an installed cluster from an ISO built from its own configuration",
		Long: `Day 2: add worker nodes to an installed on-prem cluster from a bootable ISO,
as oc adm node-image does, but from this workstation with a kubeconfig: no
pod on the cluster, no oc. See docs/add-nodes.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(newNodeImageCreateCmd(g), newNodeImageMonitorCmd(g))
	return c
}

func newNodeImageCreateCmd(g *globals) *cobra.Command {
	r := agent.NodeImageRequest{}
	var io imageOptions
	c := &cobra.Command{
		Use:   "create",
		Short: "Build the ISO that adds nodes-config.yaml's hosts (or --mac-address) to the cluster",
		Long: `Read the installed cluster over its API with the kubeconfig's credentials
(ClusterVersion, cluster-config-v1, the pull secret, proxy, trust bundle,
mirror sets, infrastructure, machine configs, boot images, nodes: the list
and why is in docs/add-nodes.md), and build node.<arch>.iso: an agent ISO
in the add-nodes workflow, from the cluster's own release, that imports the
cluster and installs each host that boots it as a worker.

Hosts come from nodes-config.yaml in --dir (hosts: as in agent-config.yaml;
optional cpuArchitecture and sshKey), or from --mac-address and the other
single-host flags (then nodes-config.yaml is not used).

Refused, with the reason and nothing written: a kubeconfig that lacks a
permission (the missing one is named, as RBAC spells it), a cluster whose
platform is not on-prem (BareMetal, None, VSphere, Nutanix, External), a
host whose name, MAC or IP already belongs to a node, a host outside the
cluster's machine networks.

The base ISO is found as for create image (--base-iso, the cache, the
release's RHCOS stream, the payload in a mirror). The ISO holds the pull
secret and tokens valid 48 hours: it is written 0600.`,
		Example: `  agentiso node-image create --kubeconfig ~/mycluster/auth/kubeconfig --dir day2

  # One host, no nodes-config.yaml
  agentiso node-image create --kubeconfig kc --dir day2 --mac-address 00:d8:e7:c7:4b:bb \
      --root-device-hint deviceName:/dev/sda --network-config-path worker-3-nmstate.yaml

  # Then boot the hosts from day2/node.x86_64.iso

  # Keep day2/report.json of the run, also when it fails
  agentiso node-image create --kubeconfig kc --dir day2 --report`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if r.Kubeconfig == "" {
				r.Kubeconfig = os.Getenv("KUBECONFIG")
			}
			r.Image = io.assetOptions(g)
			s, err := asset.NewStore(g.dir, g.log)
			if err != nil {
				return err
			}
			out, err := agent.CreateNodeImage(cmd.Context(), s, r)
			for _, w := range s.Warnings() {
				g.log.Warn(w)
			}
			if err != nil {
				return err
			}
			if px := out.PXE; px != nil {
				for _, res := range px.Results() {
					g.log.Debug("wrote", "file", res.Path, "bytes", res.Size, "sha256", res.SHA256)
				}
				g.log.Info("Generated the node PXE files in " + filepath.Join(s.Dir(), assetdir.BootArtifactsDir))
				g.log.Info("Kernel parameters for PXE boot: " + px.Kargs)
				if px.IPXE != "" {
					g.log.Info("Created iPXE script "+px.IPXE, "rootfs", px.RootfsURL)
				} else {
					g.log.Info("No iPXE script: set bootArtifactsBaseURL in nodes-config.yaml for one; boot with coreos.live.rootfs_url=<URL of " + filepath.Base(px.Rootfs) + "> added")
				}
				g.log.Warn("The initrd " + filepath.Join(s.Dir(), px.Initrd) + " carries the cluster's pull secret; it is readable only by you (0600): never serve it world-readable. Its tokens expire in 48 hours.")
				return nil
			}
			res := out.ISO.Result()
			g.log.Info("Generated node ISO at "+res.Path, "bytes", res.Size, "sha256", res.SHA256)
			g.log.Warn("The ISO carries the cluster's pull secret; it is readable only by you (0600). Its tokens expire in 48 hours.")
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&r.Kubeconfig, "kubeconfig", "", "kubeconfig of the installed cluster (default $KUBECONFIG)")
	f.StringVar(&r.Context, "context", "", "kubeconfig context to use (default its current-context)")
	f.StringVarP(&r.OutputName, "output-name", "o", "", "file name of the ISO in --dir (default node.<arch>.iso)")
	f.BoolVar(&r.PXE, "pxe", false, "write PXE files (boot-artifacts/node.<arch>-*) instead of the ISO")
	f.BoolVar(&r.Report, "report", false, "write report.json in --dir (result, error, cluster, hosts, files), also after a failure")
	f.StringVarP(&r.MAC, "mac-address", "m", "", "single host: its MAC address (nodes-config.yaml is then not used)")
	f.StringVarP(&r.CPUArchitecture, "cpu-architecture", "c", "", "single host: its CPU architecture (default the control plane's)")
	f.StringVarP(&r.SSHKeyPath, "ssh-key-path", "k", "", "single host: file with the SSH public key for the core user (default the cluster's worker key)")
	f.StringVar(&r.Hostname, "hostname", "", "single host: its host name")
	f.StringVar(&r.RootDeviceHint, "root-device-hint", "", "single host: installation disk hint as <hint name>:<value>, e.g. deviceName:/dev/sda")
	f.StringVar(&r.NetworkConfigPath, "network-config-path", "", "single host: NMState YAML file with its static network configuration")
	f.StringVar(&io.baseISO, "base-iso", "", "RHCOS live ISO to build from (a path or an http(s) URL); default the cluster release's")
	f.StringVar(&io.baseISOSHA, "base-iso-sha256", "", "expected sha256 of --base-iso")
	f.StringVar(&io.mirror, "os-image-mirror", "", "base URL of a local web server serving the release's RHCOS live ISO")
	addCacheDirFlag(f, &io.cacheDir)
	return c
}
