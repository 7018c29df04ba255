package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/output"
)

func newConfigCmd(g *globals) *cobra.Command {
	return group("config", "Show the settings from flags, environment and config file", newConfigViewCmd(g))
}

func newConfigViewCmd(g *globals) *cobra.Command {
	var format output.Format
	c := &cobra.Command{
		Use:   "view [COMMAND...]",
		Short: "Print the effective settings and where each comes from",
		RunE: func(cmd *cobra.Command, args []string) error {
			means := defaultMeanings()
			meaning := func(command, key string) string { return meaningOf(means, command, key) }
			v, err := configPolicy().ViewOf(cmd, g.config, args, meaning, os.Environ())
			if err != nil {
				return err
			}
			if format != output.Text {
				return output.Write(g.out, format, v)
			}
			return v.Write(g.out, "text")
		},
	}
	output.AddFlag(c, &format, "the settings")
	return c
}
