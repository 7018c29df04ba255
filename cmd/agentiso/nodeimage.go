package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
)

func newNodeImageCmd(g *globals) *cobra.Command {
	return group("node-image", "Day 2: add nodes to an installed cluster from an ISO built from its own configuration",
		newNodeImageCreateCmd(g), newNodeImageMonitorCmd(g))
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
			return agent.RunNodeImage(cmd.Context(), g.dir, g.log, r)
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
