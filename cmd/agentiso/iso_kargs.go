package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

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
		Args:  cobra.ExactArgs(1),
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
