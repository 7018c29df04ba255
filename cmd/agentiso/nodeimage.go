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
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
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
		Args:  cobra.NoArgs,
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
