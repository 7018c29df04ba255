package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// newIsoCmd groups the commands that inspect a CoreOS live ISO or an agent ISO.
func newIsoCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "iso",
		Short: "Inspect the embedded Ignition config and kernel arguments of a live or agent ISO",
		Long: `Inspect an RHCOS/FCOS live ISO or an agent ISO made from one.

A CoreOS live ISO has two kinds of embed areas: a fixed-size area
(images/ignition.img, described by coreos/igninfo.json) that the bootloader
loads as an extra initrd holding the Ignition config, and kernel-argument
areas in the GRUB and isolinux configs (described by coreos/kargs.json).
These commands read them without extracting the ISO.`,
		Example: `  agentiso iso info agent.x86_64.iso
  agentiso iso ignition show agent.x86_64.iso | jq .
  agentiso iso kargs show agent.x86_64.iso`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	ign := &cobra.Command{
		Use:     "ignition",
		Short:   "Work with the Ignition config embedded in an ISO",
		Long:    "Work with the Ignition config embedded in the ISO's Ignition embed area.",
		Example: `  agentiso iso ignition show agent.x86_64.iso`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	ign.AddCommand(newIsoIgnitionShowCmd(g))
	kargs := &cobra.Command{
		Use:     "kargs",
		Short:   "Work with the kernel arguments embedded in an ISO",
		Long:    "Work with the kernel arguments in the ISO's kernel-argument embed areas.",
		Example: `  agentiso iso kargs show agent.x86_64.iso`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	kargs.AddCommand(newIsoKargsShowCmd(g))
	cmd.AddCommand(ign, kargs, newIsoInfoCmd(g))
	return cmd
}

type isoInfoOptions struct {
	iso    string
	format output.Format
	out    io.Writer
}

func newIsoInfoCmd(g *globals) *cobra.Command {
	o := isoInfoOptions{}
	cmd := &cobra.Command{
		Use:   "info ISO",
		Short: "Print the volume ID, architecture and embed areas of an ISO",
		Long: `Print what agentiso knows about a live or agent ISO: the volume ID (the
live system finds its root by this label, so it must not change), the
architecture of its kernel, where the Ignition embed area is, how big it is
and how much of it is used, and the kernel-argument areas with the default
and current arguments. Offsets are byte offsets in the ISO file.

Type says whether the ISO is full (the live root file system inside) or
minimal (no images/pxeboot/rootfs.img; the kernel argument
coreos.live.rootfs_url=, shown as Rootfs URL, says where the live system
downloads it), and whether a full ISO carries coreos/miniso.dat, which
agentiso needs to build a minimal agent ISO from it.`,
		Example: `  agentiso iso info rhcos-live.x86_64.iso
  agentiso iso info -o json agent.x86_64.iso | jq .ignition.used
  agentiso iso info -o json agent.x86_64.iso | jq -r .rootfsURL`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.iso, o.out = args[0], g.out
			return isoInfo(o)
		},
	}
	output.AddFlag(cmd, &o.format, "the information")
	output.AddJSONAlias(cmd, &o.format)
	return cmd
}

func isoInfo(o isoInfoOptions) error {
	in, err := isoeditor.FileInfo(o.iso)
	if err != nil {
		return err
	}
	if o.format != output.Text {
		return output.Write(o.out, o.format, in)
	}
	return in.WriteText(o.out)
}
