package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/ignition"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

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
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.iso, o.out = args[0], g.out
			return isoIgnitionShow(o)
		},
	}
	c.Flags().BoolVar(&o.files, "files", false, "list files, directories and units instead of printing the config")
	return c
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
		return ignition.WriteListing(o.out, cfg)
	}
	_, err = o.out.Write(cfg)
	if err == nil && !strings.HasSuffix(string(cfg), "\n") {
		_, err = io.WriteString(o.out, "\n")
	}
	return err
}
