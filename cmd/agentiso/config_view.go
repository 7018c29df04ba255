package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/internal/config"
	"github.com/seed-a052040e/agentiso/internal/redact"
	"github.com/seed-a052040e/agentiso/internal/suggest"
	"github.com/seed-a052040e/agentiso/internal/termsafe"
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

// viewedSetting is one row of config view.
type viewedSetting struct {
	config.Setting
	Env string `json:"env"`
}

// configView is what config view prints.
type configView struct {
	ConfigFile struct {
		Path  string `json:"path"`
		From  string `json:"from"`
		Found bool   `json:"found"`
	} `json:"configFile"`
	Command  string          `json:"command,omitempty"`
	Settings []viewedSetting `json:"settings"`
	// IgnoredEnv are AGENTISO_ variables that set nothing (misspelt?).
	IgnoredEnv []ignoredEnv `json:"ignoredEnv,omitempty"`
}

type ignoredEnv struct {
	Name       string `json:"name"`
	DidYouMean string `json:"didYouMean,omitempty"`
}

func newConfigViewCmd(g *globals) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "view [COMMAND...]",
		Short: "Print the effective settings and where each comes from",
		Long: `Print every setting with its effective value and where that value comes
from: flag (the command line), env (AGENTISO_<FLAG>), file (the config file,
with its line) or default. Precedence: flag > env > file > default.

Without COMMAND every key of every command is shown; with one (e.g.
'create image') only the keys that command reads, with its defaults. Flags
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
			if output != "text" && output != "yaml" && output != "json" {
				return fmt.Errorf("-o %q: want text, yaml or json", output)
			}
			v, err := viewConfig(cmd, g, args)
			if err != nil {
				return err
			}
			return v.write(g.out, output)
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "text", "output format: text, yaml or json")
	return c
}

// viewConfig resolves the settings of the command named by args, or of
// every command. The running command's own settings (the global flags)
// were resolved before they were applied; the others are resolved now,
// without changing anything.
func viewConfig(cmd *cobra.Command, g *globals, args []string) (*configView, error) {
	v := &configView{}
	v.ConfigFile.Path, v.ConfigFile.From, v.ConfigFile.Found = g.configLoc.Path, g.configLoc.Origin, g.configLoaded
	fs := pflag.NewFlagSet("view", pflag.ContinueOnError)
	var own []config.Setting
	add := func(f *pflag.Flag) {
		if !layered(f.Name) || fs.Lookup(f.Name) != nil {
			return
		}
		// The running command's own flags (the global ones) were
		// resolved before being applied.
		if s, ok := g.settings[f.Name]; ok && cmd.Flags().Lookup(f.Name) == f {
			own = append(own, s)
			return
		}
		fs.AddFlag(f)
	}
	if len(args) == 0 {
		cmd.InheritedFlags().VisitAll(add)
		visitConfigFlags(cmd.Root(), cmd, add)
	} else {
		target, err := findCommand(cmd.Root(), args)
		if err != nil {
			return nil, err
		}
		v.Command = target.CommandPath()
		target.Flags().VisitAll(add)
		target.InheritedFlags().VisitAll(add)
	}
	resolved, err := g.layers.Resolve(fs)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, s := range append(own, resolved...) {
		if seen[s.Key] {
			continue
		}
		seen[s.Key] = true
		s.Value = redactSetting(s.Value)
		v.Settings = append(v.Settings, viewedSetting{Setting: s, Env: config.EnvVar(s.Key)})
	}
	sort.Slice(v.Settings, func(i, j int) bool { return v.Settings[i].Key < v.Settings[j].Key })
	keys := configKeys(cmd.Root())
	var names []string
	for _, k := range append(keys, configFlag) {
		names = append(names, config.EnvVar(k))
	}
	for _, n := range config.UnknownEnv(os.Environ(), keys) {
		v.IgnoredEnv = append(v.IgnoredEnv, ignoredEnv{Name: n, DidYouMean: suggest.Closest(n, names)})
	}
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

// redactSetting hides what a value can carry as a secret: the password of
// a URL's user information and the values of its query (tokens, signed
// URLs); internal/redact, which every printed URL goes through.
func redactSetting(v string) string { return redact.URL(v) }

func (v *configView) write(w io.Writer, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	file := v.ConfigFile.Path
	switch {
	case file == "":
		file = "none (no home directory)"
	case !v.ConfigFile.Found:
		file += " (" + v.ConfigFile.From + ", not found)"
	default:
		file += " (" + v.ConfigFile.From + ")"
	}
	fmt.Fprintf(w, "Config file: %s\n", termsafe.String(file))
	if v.Command != "" {
		fmt.Fprintf(w, "Command:     %s\n", v.Command)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	for _, s := range v.Settings {
		val := termsafe.String(s.Value)
		if val == "" || strings.ContainsAny(val, " ") {
			val = fmt.Sprintf("%q", s.Value)
		}
		src := string(s.Source)
		if s.Source != config.FromDefault {
			src += " " + termsafe.String(s.Origin)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Key, val, src)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(v.IgnoredEnv) > 0 {
		fmt.Fprintf(w, "\nIgnored environment variables (they set nothing):\n")
	}
	for _, e := range v.IgnoredEnv {
		line := "  " + termsafe.String(e.Name)
		if e.DidYouMean != "" {
			line += ": did you mean " + e.DidYouMean + "?"
		}
		fmt.Fprintln(w, line)
	}
	return nil
}
