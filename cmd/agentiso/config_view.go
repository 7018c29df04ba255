package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/seed-a052040e/agentiso/internal/config"
	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/internal/suggest"
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
			v, err := viewConfig(cmd, g, args)
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

// viewConfig resolves the settings of the command named by args, or of
// every command. The running command's own settings (the global flags)
// were resolved before they were applied; the others are resolved now,
// without changing anything.
func viewConfig(cmd *cobra.Command, g *globals, args []string) (*config.View, error) {
	command := ""
	fs := pflag.NewFlagSet("view", pflag.ContinueOnError)
	var own []config.Setting
	add := func(f *pflag.Flag) {
		if !layeredFlag(f) || fs.Lookup(f.Name) != nil {
			return
		}
		// The running command's own flags (the global ones) were
		// resolved before being applied.
		if s, ok := g.settings[f.Name]; ok && cmd.Flags().Lookup(f.Name) == f {
			own = append(own, s)
			return
		}
		// Two commands may give one shorthand to different flags (-o is
		// config view's --output and node-image create's --output-name):
		// the view lists settings by name only.
		c := *f
		c.Shorthand = ""
		fs.AddFlag(&c)
	}
	if len(args) == 0 {
		cmd.InheritedFlags().VisitAll(add)
		visitConfigFlags(cmd.Root(), cmd, add)
	} else {
		target, err := findCommand(cmd.Root(), args)
		if err != nil {
			return nil, err
		}
		command = target.CommandPath()
		target.LocalFlags().VisitAll(add)
		target.InheritedFlags().VisitAll(add)
	}
	resolved, err := g.layers.Resolve(fs)
	if err != nil {
		return nil, err
	}
	v := config.NewView(g.configLoc, g.configLoaded, command, append(own, resolved...), unknownEnv(cmd.Root()))
	means := defaultMeanings()
	kept := v.Settings[:0]
	for _, s := range v.Settings {
		// Without a command, the settings of every command: those set
		// somewhere, and the global ones; defaults depend on the command.
		if len(args) == 0 && s.Source == config.FromDefault && cmd.Root().PersistentFlags().Lookup(s.Key) == nil {
			v.Defaults++
			continue
		}
		if s.Source == config.FromDefault {
			s.Means = meaningOf(means, strings.TrimPrefix(command, cmd.Root().Name()+" "), s.Key)
		}
		kept = append(kept, s)
	}
	v.Settings = kept
	return v, nil
}

// findCommand finds the command named by args ("create", "image").
func findCommand(root *cobra.Command, args []string) (*cobra.Command, error) {
	c := root
	for _, a := range args {
		var next *cobra.Command
		var names []string
		for _, sub := range c.Commands() {
			if sub.Name() == a {
				next = sub
			}
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		if next == nil {
			msg := fmt.Sprintf("%q is not a command of %q", a, c.CommandPath())
			if s := suggest.Closest(a, names); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			return nil, fmt.Errorf("%s", msg)
		}
		c = next
	}
	if !layeredCommand(c) {
		return nil, fmt.Errorf("%q reads only its command line: it has no settings from the environment or the config file", c.CommandPath())
	}
	return c, nil
}
