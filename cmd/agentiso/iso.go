package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	v32 "github.com/coreos/ignition/v2/config/v3_2"
	"github.com/coreos/ignition/v2/config/v3_2/types"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
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

type isoIgnitionShowOptions struct {
	iso   string
	files bool
	out   io.Writer
}

func newIsoIgnitionShowCmd(g *globals) *cobra.Command {
	o := isoIgnitionShowOptions{}
	c := &cobra.Command{
		Use:   "show ISO",
		Short: "Print the embedded Ignition config",
		Long: `Print the Ignition config (config.ign) embedded in the ISO, decompressed,
exactly as it will be seen by the live system. Fails if no config is embedded,
as on a pristine RHCOS live ISO.

With --files, print a summary instead: one line per file (mode, owner,
path), directory and systemd unit (enabled or not), without any content.

The config of an agent ISO contains secrets (pull secret, SSH keys, tokens):
take care where you redirect it.`,
		Example: `  agentiso iso ignition show agent.x86_64.iso > agent.ign
  agentiso iso ignition show --files agent.x86_64.iso`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.iso, o.out = args[0], g.out
			return isoIgnitionShow(o)
		},
	}
	c.Flags().BoolVar(&o.files, "files", false, "list files, directories and units instead of printing the config")
	return c
}

// listIgnition prints the shape of a config: what lands where, no content.
func listIgnition(w io.Writer, cfg []byte) error {
	c, rpt, err := v32.ParseCompatibleVersion(cfg)
	if err != nil {
		return fmt.Errorf("embedded config does not parse: %w (%s)", err, rpt.String())
	}
	var b strings.Builder
	owner := func(u types.NodeUser) string {
		if u.Name != nil {
			return *u.Name
		}
		return "root"
	}
	for _, d := range c.Storage.Directories {
		mode := 0o755
		if d.Mode != nil {
			mode = *d.Mode
		}
		fmt.Fprintf(&b, "dir  %04o %-6s %s\n", mode, owner(d.User), termsafe.String(d.Path))
	}
	for _, f := range c.Storage.Files {
		mode := 0o644
		if f.Mode != nil {
			mode = *f.Mode
		}
		fmt.Fprintf(&b, "file %04o %-6s %s\n", mode, owner(f.User), termsafe.String(f.Path))
	}
	for _, u := range c.Systemd.Units {
		state := "disabled"
		if u.Enabled != nil && *u.Enabled {
			state = "enabled"
		}
		fmt.Fprintf(&b, "unit %-8s %s\n", state, termsafe.String(u.Name))
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func isoIgnitionShow(o isoIgnitionShowOptions) error {
	iso, f, err := isoeditor.OpenFile(o.iso)
	if err != nil {
		return err
	}
	defer f.Close()
	cfg, err := iso.EmbeddedIgnition()
	if err != nil {
		return fmt.Errorf("%s: %w", o.iso, err)
	}
	if o.files {
		return listIgnition(o.out, cfg)
	}
	_, err = o.out.Write(cfg)
	if err == nil && !strings.HasSuffix(string(cfg), "\n") {
		_, err = io.WriteString(o.out, "\n")
	}
	return err
}

type isoKargsShowOptions struct {
	iso         string
	showDefault bool
	out         io.Writer
}

func newIsoKargsShowCmd(g *globals) *cobra.Command {
	o := isoKargsShowOptions{}
	cmd := &cobra.Command{
		Use:   "show ISO",
		Short: "Print the kernel arguments the ISO boots with",
		Long: `Print the kernel arguments in the ISO's kernel-argument embed areas: the
live ISO's defaults followed by any arguments appended when the agent ISO was
made. With --default, print only the defaults recorded in coreos/kargs.json.
Fails if the areas disagree with each other or the ISO has none.`,
		Example: `  agentiso iso kargs show agent.x86_64.iso
  agentiso iso kargs show --default rhcos-live.x86_64.iso`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.iso, o.out = args[0], g.out
			return isoKargsShow(o)
		},
	}
	cmd.Flags().BoolVar(&o.showDefault, "default", false, "print the default kernel arguments instead of the current ones")
	return cmd
}

func isoKargsShow(o isoKargsShowOptions) error {
	iso, f, err := isoeditor.OpenFile(o.iso)
	if err != nil {
		return err
	}
	defer f.Close()
	var k string
	if o.showDefault {
		if iso.KargsAreas() == nil {
			return fmt.Errorf("%s: %w: the ISO has no %s", o.iso, isoeditor.ErrNoKargs, isoeditor.KargsJSONPath)
		}
		k = iso.KargsAreas().Default
	} else if k, err = iso.Kargs(); err != nil {
		return fmt.Errorf("%s: %w", o.iso, err)
	}
	_, err = fmt.Fprintln(o.out, termsafe.String(k))
	return err
}

type isoInfoOptions struct {
	iso    string
	asJSON bool
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
  agentiso iso info --json agent.x86_64.iso | jq .ignition.used
  agentiso iso info --json agent.x86_64.iso | jq -r .rootfsURL`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.iso, o.out = args[0], g.out
			return isoInfo(o)
		},
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the information as JSON")
	return cmd
}

func isoInfo(o isoInfoOptions) error {
	in, err := isoeditor.FileInfo(o.iso)
	if err != nil {
		return err
	}
	if o.asJSON {
		enc := json.NewEncoder(o.out)
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	}
	arch := in.Arch
	if arch == "" {
		arch = "unknown"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Volume ID:      %s\n", termsafe.String(in.VolumeID))
	fmt.Fprintf(&b, "Architecture:   %s\n", arch)
	fmt.Fprintf(&b, "Size:           %d bytes\n", in.Size)
	switch {
	case in.Minimal:
		fmt.Fprintf(&b, "Type:           minimal (no %s; the live system downloads it)\n", isoeditor.RootfsPath)
	case in.MinisoData:
		fmt.Fprintf(&b, "Type:           full (carries %s: a minimal ISO can be built from it)\n", isoeditor.MinisoPath)
	default:
		fmt.Fprintf(&b, "Type:           full (no usable %s: no minimal ISO can be built from it)\n", isoeditor.MinisoPath)
	}
	if in.RootfsURL != "" {
		fmt.Fprintf(&b, "Rootfs URL:     %s\n", termsafe.String(in.RootfsURL))
	} else if in.Minimal {
		b.WriteString("Rootfs URL:     none (coreos.live.rootfs_url= is not set: the ISO cannot boot)\n")
	}
	ig := in.Ignition
	fmt.Fprintf(&b, "Ignition area:  %s, offset %d, length %d, used %d (%.2f%%)\n",
		ig.File, ig.Offset, ig.Length, ig.Used, 100*float64(ig.Used)/float64(ig.Length))
	fmt.Fprintf(&b, "Ignition:       %s\n", map[bool]string{true: "embedded", false: "none"}[ig.HasConfig])
	if k := in.Kargs; k != nil {
		fmt.Fprintf(&b, "Kargs areas:    %d of %d bytes, %d free\n", len(k.Areas), k.Size, k.Free)
		for _, a := range k.Areas {
			fmt.Fprintf(&b, "  %s, offset %d\n", a.Path, a.Offset)
		}
		fmt.Fprintf(&b, "Default kargs:  %s\n", k.Default)
		fmt.Fprintf(&b, "Current kargs:  %s\n", k.Current)
	} else {
		fmt.Fprintf(&b, "Kargs areas:    none (no %s)\n", isoeditor.KargsJSONPath)
	}
	_, err = io.WriteString(o.out, b.String())
	return err
}
