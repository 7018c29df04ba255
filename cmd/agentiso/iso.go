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
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	ign := &cobra.Command{
		Use:   "ignition",
		Short: "Work with the Ignition config embedded in an ISO",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	ign.AddCommand(newIsoIgnitionShowCmd(g))
	kargs := &cobra.Command{
		Use:   "kargs",
		Short: "Work with the kernel arguments embedded in an ISO",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
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
		Args:  cobra.ExactArgs(1),
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
