package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/internal/termsafe"
	"github.com/seed-a052040e/agentiso/pkg/ignition"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// group is a command that only holds subs: run alone, it shows its help.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs, RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
	c.AddCommand(subs...)
	return c
}

// newIsoCmd groups the commands that inspect a CoreOS live ISO or an agent ISO.
func newIsoCmd(g *globals) *cobra.Command {
	return group("iso", "Inspect the embedded Ignition config and kernel arguments of a live or agent ISO",
		group("ignition", "Work with the Ignition config embedded in an ISO", newIsoIgnitionShowCmd(g)),
		group("kargs", "Work with the kernel arguments embedded in an ISO", newIsoKargsShowCmd(g)),
		newIsoInfoCmd(g))
}

func newIsoInfoCmd(g *globals) *cobra.Command {
	var format output.Format
	cmd := &cobra.Command{
		Use:   "info ISO",
		Short: "Print the volume ID, architecture and embed areas of an ISO",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := isoeditor.FileInfo(args[0])
			if err != nil {
				return err
			}
			return writeResult(g.out, format, in)
		},
	}
	output.AddFlag(cmd, &format, "the information")
	output.AddJSONAlias(cmd, &format)
	return cmd
}

// writeResult prints v: as format, or as its own text.
func writeResult(w io.Writer, format output.Format, v interface{ WriteText(io.Writer) error }) error {
	if format != output.Text {
		return output.Write(w, format, v)
	}
	return v.WriteText(w)
}

func newIsoIgnitionShowCmd(g *globals) *cobra.Command {
	var files bool
	c := &cobra.Command{
		Use:   "show ISO",
		Short: "Print the embedded Ignition config",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := isoeditor.FileIgnition(args[0])
			if err != nil {
				return err
			}
			if files {
				return ignition.WriteListing(g.out, cfg)
			}
			if !strings.HasSuffix(string(cfg), "\n") {
				cfg = append(cfg, '\n')
			}
			_, err = g.out.Write(cfg)
			return err
		},
	}
	c.Flags().BoolVar(&files, "files", false, "list files, directories and units instead of printing the config")
	return c
}

func newIsoKargsShowCmd(g *globals) *cobra.Command {
	var defaults bool
	cmd := &cobra.Command{
		Use:   "show ISO",
		Short: "Print the kernel arguments the ISO boots with",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := isoeditor.FileKargs(args[0], defaults)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(g.out, termsafe.String(k))
			return err
		},
	}
	cmd.Flags().BoolVar(&defaults, "default", false, "print the default kernel arguments instead of the current ones")
	return cmd
}

// newPXECmd groups the commands that inspect PXE files.
func newPXECmd(g *globals) *cobra.Command {
	return group("pxe", "Inspect the PXE files create pxe-files wrote", newPXEInfoCmd(g))
}

func newPXEInfoCmd(g *globals) *cobra.Command {
	var format output.Format
	var verify bool
	cmd := &cobra.Command{
		Use:   "info [DIR]",
		Short: "List the PXE files in DIR with sizes, checksums, URLs and kernel arguments",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := g.dir
			if len(args) == 1 {
				if cmd.Flags().Changed("dir") && args[0] != g.dir {
					return fmt.Errorf("pxe info: both DIR (%s) and --dir (%s) given: name the directory once", args[0], g.dir)
				}
				dir = args[0]
			}
			res, err := isoeditor.InspectPXE(cmd.Context(), dir, verify)
			if err != nil {
				return err
			}
			return writeResult(g.out, format, res)
		},
	}
	output.AddFlag(cmd, &format, "the information")
	output.AddJSONAlias(cmd, &format)
	cmd.Flags().BoolVar(&verify, "verify", false, "read every file and check it against its .sha256")
	return cmd
}
