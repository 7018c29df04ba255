package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

func newCreatePXEFilesCmd(g *globals) *cobra.Command {
	o := &imageOptions{}
	c := &cobra.Command{
		Use:   "pxe-files",
		Short: "Build PXE files: kernel, initrd with the agent config, rootfs, iPXE script",
		Long: `Validate the inputs in --dir and build the files that boot a host from the
network instead of the agent ISO. They are taken from the same base RHCOS
live ISO as create image (found the same way: --base-iso, the cache, the
release's stream, the payload's machine-os-images), streamed from it
without extraction:

  boot-artifacts/agent.<arch>-vmlinuz      the live kernel (gunzipped on
                                           aarch64)
  boot-artifacts/agent.<arch>-initrd.img   the live initrd, unchanged, then
                                           the agent Ignition config as a
                                           separate gzip newc cpio archive
                                           (0600: it carries the pull secret)
  boot-artifacts/agent.<arch>-rootfs.img   the live root file system
  boot-artifacts/agent.<arch>.ipxe         with bootArtifactsBaseURL in
                                           agent-config.yaml: an iPXE script
                                           that boots the three from there

Each has a <file>.sha256. Serve boot-artifacts/ at bootArtifactsBaseURL
and chain-load the .ipxe script (or use your own PXE configuration with the
kernel arguments the command prints: the live ISO's defaults without
coreos.liveiso=, the agent's, and coreos.live.rootfs_url=<URL of the
rootfs>). Every file is written to a temporary name and renamed at the end,
with auth/ and the state, as one unit; a failed run leaves the previous
files. Also writes rendezvousIP and auth/ like create image.

s390x, when the base ISO has them (as upstream):
  boot-artifacts/agent.s390x-initrd.addrsize  the initrd's load address and
                                              the new initrd's size
  boot-artifacts/agent.s390x-generic.ins      the ISO's generic.ins naming
                                              the files above
The .prm files are not written: the kernel arguments are printed.`,
		Example: `  # agent-config.yaml has bootArtifactsBaseURL: http://10.0.0.1:8080/boot
  agentiso create pxe-files --dir mycluster --base-iso rhcos-live.x86_64.iso
  agentiso pxe info mycluster
  # serve mycluster/boot-artifacts/ as http://10.0.0.1:8080/boot/, then
  # chain http://10.0.0.1:8080/boot/agent.x86_64.ipxe from iPXE

  # The release's own RHCOS ISO (cache or download), no iPXE script
  agentiso create pxe-files --dir mycluster`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCreatePXEFiles(cmd.Context(), g, o)
		},
	}
	o.addFlags(c.Flags())
	return c
}

func runCreatePXEFiles(ctx context.Context, g *globals, o *imageOptions) error {
	s, err := persistImageTargets(ctx, g, o, agent.PXETargets())
	if err != nil {
		return err
	}
	px, err := asset.Fetch[*agent.PXEFiles](ctx, s)
	if err != nil {
		return err
	}
	for _, r := range px.Results() {
		g.log.Debug("wrote", "file", r.Path, "bytes", r.Size, "sha256", r.SHA256, "method", r.Method, "sha256-from", r.HashSource())
	}
	g.log.Info("PXE boot artifacts created in " + filepath.Join(s.Dir(), assetdir.BootArtifactsDir))
	g.log.Info("Kernel parameters for PXE boot: " + px.Kargs)
	if px.IPXE != "" {
		g.log.Info("Created iPXE script "+px.IPXE, "rootfs", px.RootfsURL)
	} else {
		g.log.Info("No iPXE script: set bootArtifactsBaseURL in agent-config.yaml for one; boot with coreos.live.rootfs_url=<URL of " + filepath.Base(px.Rootfs) + "> added")
		stale := filepath.Join(s.Dir(), strings.TrimSuffix(px.Kernel, "-"+assetdir.PXEKernel)+".ipxe")
		if _, err := os.Stat(stale); err == nil {
			g.log.Warn("The iPXE script " + stale + " is from an earlier run and was left as it was: it boots from the bootArtifactsBaseURL of that run")
		}
	}
	g.log.Warn("The initrd " + filepath.Join(s.Dir(), px.Initrd) + " carries the pull secret and install credentials, so it is readable only by you (0600): " +
		"serve it as yourself, or copy it for the web server's group only (README, \"Serving the PXE files\"); never make it world-readable")
	return reportCreated(ctx, g, s, "create pxe-files")
}
