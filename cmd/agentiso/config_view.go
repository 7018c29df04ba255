package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/output"
)

func newConfigCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "Show the settings from flags, environment and config file",
		Long: `Every flag can also be set in the environment as AGENTISO_<FLAG> and in the
config file as a key named like the flag; see 'agentiso config view' and
docs/config.md.`,
		Example: `  agentiso config view`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(newConfigViewCmd(g))
	return c
}

func newConfigViewCmd(g *globals) *cobra.Command {
	var format output.Format
	c := &cobra.Command{
		Use:   "view [COMMAND...]",
		Short: "Print the effective settings and where each comes from",
		Long: `Print every setting with its effective value and where that value comes
from: flag (the command line), env (AGENTISO_<FLAG>), file (the config file,
with its line) or default. Precedence: flag > env > file > default.

With COMMAND (e.g. 'create image') every setting that command reads is
shown, defaults resolved: what an empty default does ("the release's RHCOS
live ISO: ..."), the real cache directory, the real timeouts. Without
COMMAND, the global settings and every setting that is set somewhere (flag,
environment or file). Hidden flags are command-line only and not shown. Flags
given to config view itself (--dir, --log-level, --config) count as given
on the command line.

The config file is --config FILE, else $AGENTISO_CONFIG, else
$XDG_CONFIG_HOME/agentiso/config.yaml (~/.config/agentiso/config.yaml; on
macOS, without XDG_CONFIG_HOME, ~/Library/Application Support/agentiso/).

Secrets are never printed: the password of a URL (a proxy or mirror with
credentials) and the values of its query parameters (tokens) are shown as
xxxxx.`,
		Example: `  # Everything, and where it comes from
  agentiso config view

  # What create image would use with the lab's file
  agentiso config view create image --config /etc/agentiso/lab.yaml

  # For scripts
  agentiso config view -o json | jq -r '.settings[] | select(.key=="release-image") | .value'`,
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
