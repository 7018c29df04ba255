package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// newPXECmd groups the commands that inspect PXE files.
func newPXECmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pxe",
		Short: "Inspect the PXE files create pxe-files wrote",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newPXEInfoCmd(g))
	return cmd
}

type pxeInfoOptions struct {
	dir    string
	format output.Format
	verify bool
	out    io.Writer
}

func newPXEInfoCmd(g *globals) *cobra.Command {
	o := pxeInfoOptions{}
	cmd := &cobra.Command{
		Use:   "info [DIR]",
		Short: "List the PXE files in DIR with sizes, checksums, URLs and kernel arguments",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.dir, o.out = g.dir, g.out
			if len(args) == 1 {
				if cmd.Flags().Changed("dir") && args[0] != g.dir {
					return fmt.Errorf("pxe info: both DIR (%s) and --dir (%s) given: name the directory once", args[0], g.dir)
				}
				o.dir = args[0]
			}
			return pxeInfo(cmd.Context(), o)
		},
	}
	output.AddFlag(cmd, &o.format, "the information")
	output.AddJSONAlias(cmd, &o.format)
	cmd.Flags().BoolVar(&o.verify, "verify", false, "read every file and check it against its .sha256")
	return cmd
}

func pxeInfo(ctx context.Context, o pxeInfoOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	res, err := isoeditor.InspectPXE(ctx, o.dir, o.verify)
	if err != nil {
		return err
	}
	if o.format != output.Text {
		return output.Write(o.out, o.format, res)
	}
	return res.WriteText(o.out)
}
