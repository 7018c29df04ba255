package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/seed-a052040e/agentiso/internal/config"
	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// configFlag names the config file; it is itself read from the command
// line or $AGENTISO_CONFIG only.
const configFlag = config.FileKey

// layered reports whether a flag can also be set through the environment
// and the config file: all but --help, --config,
// --regenerate-credentials, a one-off act that must be asked for on the
// command line (set in the environment or a file it would replace the
// credentials on every run), and -o (and its deprecated --json): in the
// environment or a file it would change what every command prints, to
// people and to scripts alike.
func layered(flag string) bool {
	return flag != "help" && flag != configFlag && flag != regenerateCredentialsFlag && flag != output.Flag && flag != "json"
}

// layeredFlag is layered for one flag: hidden flags (simulator and test
// knobs, deprecated aliases) are read from the command line only, so that
// config view, which lists every setting, shows no flag that --help hides.
func layeredFlag(f *pflag.Flag) bool { return layered(f.Name) && !f.Hidden }

// configSchema is what a config file may hold: the layered flags of every
// command under root; the others are refused with the reason.
func configSchema(root *cobra.Command) config.Schema {
	return config.Schema{Keys: configKeys(root), Refused: map[string]string{
		configFlag:                "a config file cannot name another one: use --config or $" + config.EnvVar(configFlag),
		regenerateCredentialsFlag: "a one-off act: give --" + regenerateCredentialsFlag + " on the command line (in a file it would replace the credentials on every run)",
		output.Flag:               "a choice for one run: give -o on the command line (in a file it would change what every command prints, to people and scripts alike)",
	}}
}

// layeredCommand reports whether cmd reads its flags through the layers:
// all commands but those that read only their command line, the hidden
// developer aids (dev ...) and cobra's help and completion.
func layeredCommand(cmd *cobra.Command) bool {
	for c := cmd; c.HasParent(); c = c.Parent() {
		if c.Parent() == c.Root() {
			switch c.Name() {
			case "dev", "help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
				return false
			}
		}
	}
	return true
}

// configKeys returns, sorted, every key of the configuration: the layered
// flags of every command under root.
func configKeys(root *cobra.Command) []string {
	seen := map[string]bool{}
	visitConfigFlags(root, nil, func(f *pflag.Flag) {
		if layeredFlag(f) {
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

// visitConfigFlags calls fn for the flags of every command under root that
// reads the layers, except skip.
func visitConfigFlags(root, skip *cobra.Command, fn func(*pflag.Flag)) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c == skip || !layeredCommand(c) {
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

// layeredFlags returns the flags of cmd that can also be set through the
// environment and the config file, or nil for a command that reads only
// its command line.
func layeredFlags(cmd *cobra.Command) *pflag.FlagSet {
	if !layeredCommand(cmd) {
		return nil
	}
	fs := pflag.NewFlagSet(cmd.CommandPath(), pflag.ContinueOnError)
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if layeredFlag(f) {
			fs.AddFlag(f)
		}
	})
	return fs
}

// loadConfig finds and reads the config file (nil when the default one does
// not exist) and returns the layers of this invocation.
func loadConfig(cmd *cobra.Command, g *globals) (*config.Layers, error) {
	loc, err := config.Locate(g.configFile, cmd.Flags().Changed(configFlag))
	if err != nil {
		return nil, err
	}
	g.configLoc = loc
	f, err := config.Load(loc, configSchema(cmd.Root()))
	if err != nil {
		return nil, err
	}
	g.configLoaded = f != nil
	return config.New(f)
}

// applyConfig fills the flags of cmd that the command line left unset from
// the environment or the config file, and records where every setting came
// from.
func applyConfig(cmd *cobra.Command, g *globals) error {
	fs := layeredFlags(cmd)
	if fs == nil {
		return nil
	}
	layers, err := loadConfig(cmd, g)
	if err != nil {
		return err
	}
	g.layers = layers
	settings, err := layers.Apply(fs)
	if err != nil {
		return err
	}
	g.settings = map[string]config.Setting{}
	for _, s := range settings {
		g.settings[s.Key] = s
	}
	return nil
}

// setting returns where the named setting of the running command came
// from (the zero Setting for a flag that is not layered).
func (g *globals) setting(key string) config.Setting {
	return g.settings[key]
}

// unknownEnv returns the AGENTISO_ variables of the environment that set
// nothing, each with the variable it most likely misspells.
func unknownEnv(root *cobra.Command) []config.IgnoredEnv {
	return config.UnknownEnv(os.Environ(), configKeys(root))
}

// warnMisspeltEnv warns about each AGENTISO_ variable that sets nothing but
// is close to one that would (AGENTISO_RELEASE_IMAGES): otherwise it would
// be silently ignored. Variables close to none (other tools', test
// harnesses') are left alone; config view lists them all.
func warnMisspeltEnv(root *cobra.Command, g *globals) {
	for _, e := range unknownEnv(root) {
		if e.Name == config.EnvVar(output.Flag) || e.Name == config.EnvVar("json") {
			g.log.Warn(fmt.Sprintf("$%s sets nothing: -o is read from the command line only", e.Name))
			continue
		}
		if e.DidYouMean != "" {
			g.log.Warn(fmt.Sprintf("$%s sets nothing: no agentiso setting has that name; did you mean $%s?", termsafe.String(e.Name), e.DidYouMean))
		}
	}
}
