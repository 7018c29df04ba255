package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/seed-a052040e/agentiso/internal/suggest"
)

// Policy says which of a command tree's commands and flags read the
// layers (the environment and the config file); the others read only
// their command line.
type Policy struct {
	// CommandLineOnly are the flags never read from the environment or a
	// file (besides --help and the config file's own FileKey), each with
	// the reason a config file key naming it is refused ("" when such a
	// key is simply unknown).
	CommandLineOnly map[string]string
	// OwnCommandLine are the commands under the root that read only their
	// command line, with every command under them (developer aids);
	// cobra's help and completion commands always do.
	OwnCommandLine []string
}

// LayeredFlag reports whether f can also be set through the environment
// and the config file. Hidden flags (simulator and test knobs, deprecated
// aliases) are read from the command line only, so that config view, which
// lists every setting, shows no flag that --help hides.
func (p Policy) LayeredFlag(f *pflag.Flag) bool {
	_, only := p.CommandLineOnly[f.Name]
	return f.Name != "help" && f.Name != FileKey && !only && !f.Hidden
}

// LayeredCommand reports whether cmd reads its flags through the layers.
func (p Policy) LayeredCommand(cmd *cobra.Command) bool {
	for c := cmd; c.HasParent(); c = c.Parent() {
		if c.Parent() != c.Root() {
			continue
		}
		switch c.Name() {
		case "help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return false
		}
		for _, n := range p.OwnCommandLine {
			if c.Name() == n {
				return false
			}
		}
	}
	return true
}

// VisitFlags calls fn for the flags of every command under root that reads
// the layers, except skip and the commands under it.
func (p Policy) VisitFlags(root, skip *cobra.Command, fn func(*pflag.Flag)) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c == skip || !p.LayeredCommand(c) {
			return
		}
		c.Flags().VisitAll(fn)
		c.PersistentFlags().VisitAll(fn)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// Keys returns, sorted, every key of the configuration: the layered flags
// of every command under root.
func (p Policy) Keys(root *cobra.Command) []string {
	seen := map[string]bool{}
	p.VisitFlags(root, nil, func(f *pflag.Flag) {
		if p.LayeredFlag(f) {
			seen[f.Name] = true
		}
	})
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Schema is what a config file for root's commands may hold; the
// command-line-only flags are refused with their reason.
func (p Policy) Schema(root *cobra.Command) Schema {
	refused := map[string]string{FileKey: "a config file cannot name another one: use --" + FileKey + " or $" + EnvVar(FileKey)}
	for k, why := range p.CommandLineOnly {
		if why != "" {
			refused[k] = why
		}
	}
	return Schema{Keys: p.Keys(root), Refused: refused}
}

// Applied is how the layers were applied to one invocation.
type Applied struct {
	// Location is where the config file was looked for; Loaded whether
	// one was read.
	Location Location
	Loaded   bool
	Layers   *Layers
	// Settings says where each layered flag of the command got its value.
	Settings map[string]Setting
}

// Lookup resolves key, a string setting the command itself does not
// declare (version reads release-image), through the environment and the
// config file: a default when a is nil (a command that reads only its
// command line).
func (a *Applied) Lookup(key string) (Setting, error) {
	if a == nil || a.Layers == nil {
		return Setting{Source: FromDefault}, nil
	}
	fs := pflag.NewFlagSet(key, pflag.ContinueOnError)
	fs.String(key, "", "")
	settings, err := a.Layers.Resolve(fs)
	if err != nil || len(settings) != 1 {
		return Setting{}, err
	}
	return settings[0], nil
}

// Apply fills the flags of cmd that the command line left unset from the
// environment or the config file (configFile is --config's value, the
// empty string when not given), and records where every setting came from.
// It returns nil for a command that reads only its command line.
func (p Policy) Apply(cmd *cobra.Command, configFile string) (*Applied, error) {
	if !p.LayeredCommand(cmd) {
		return nil, nil
	}
	fs := pflag.NewFlagSet(cmd.CommandPath(), pflag.ContinueOnError)
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if p.LayeredFlag(f) {
			fs.AddFlag(f)
		}
	})
	loc, err := Locate(configFile, cmd.Flags().Changed(FileKey))
	if err != nil {
		return nil, err
	}
	a := &Applied{Location: loc}
	f, err := Load(loc, p.Schema(cmd.Root()))
	if err != nil {
		return a, err
	}
	a.Loaded = f != nil
	if a.Layers, err = New(f); err != nil {
		return a, err
	}
	settings, err := a.Layers.Apply(fs)
	if err != nil {
		return a, err
	}
	a.Settings = map[string]Setting{}
	for _, s := range settings {
		a.Settings[s.Key] = s
	}
	return a, nil
}

// FindCommand finds the layered command named by args ("create", "image")
// under root, with a did-you-mean for a mistyped name.
func (p Policy) FindCommand(root *cobra.Command, args []string) (*cobra.Command, error) {
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
	if !p.LayeredCommand(c) {
		return nil, fmt.Errorf("%q reads only its command line: it has no settings from the environment or the config file", c.CommandPath())
	}
	return c, nil
}

// ViewOf resolves, without changing anything, the settings of the command
// named by args, or of every command (config view [COMMAND...]), as seen
// by cmd (config view itself), whose own flags were applied as a. means
// says what the empty default of a setting does for a command (its path
// without the program's name); environ's AGENTISO_ variables that set
// nothing are listed.
func (p Policy) ViewOf(cmd *cobra.Command, a *Applied, args []string, means func(command, key string) string, environ []string) (*View, error) {
	command := ""
	fs := pflag.NewFlagSet("view", pflag.ContinueOnError)
	var own []Setting
	add := func(f *pflag.Flag) {
		if !p.LayeredFlag(f) || fs.Lookup(f.Name) != nil {
			return
		}
		// The running command's own flags (the global ones) were
		// resolved before being applied.
		if s, ok := a.Settings[f.Name]; ok && cmd.Flags().Lookup(f.Name) == f {
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
	root := cmd.Root()
	if len(args) == 0 {
		cmd.InheritedFlags().VisitAll(add)
		p.VisitFlags(root, cmd, add)
	} else {
		target, err := p.FindCommand(root, args)
		if err != nil {
			return nil, err
		}
		command = target.CommandPath()
		// LocalFlags: also the flags it declares for the commands under
		// it (wait-for's --timeout).
		target.LocalFlags().VisitAll(add)
		target.InheritedFlags().VisitAll(add)
	}
	resolved, err := a.Layers.Resolve(fs)
	if err != nil {
		return nil, err
	}
	v := NewView(a.Location, a.Loaded, command, append(own, resolved...), UnknownEnv(environ, p.Keys(root)))
	kept := v.Settings[:0]
	for _, s := range v.Settings {
		// Without a command, the settings of every command: those set
		// somewhere, and the global ones; defaults depend on the command.
		if len(args) == 0 && s.Source == FromDefault && root.PersistentFlags().Lookup(s.Key) == nil {
			v.Defaults++
			continue
		}
		if s.Source == FromDefault {
			s.Means = means(strings.TrimPrefix(command, root.Name()+" "), s.Key)
		}
		kept = append(kept, s)
	}
	v.Settings = kept
	return v, nil
}
