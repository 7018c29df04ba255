package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/config"
	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// regenerateCredentialsFlag asks for new credentials
// (agent.GuardCredentials).
const regenerateCredentialsFlag = "regenerate-credentials"

// configFlag names the config file; it is itself read from the command
// line or $AGENTISO_CONFIG only.
const configFlag = config.FileKey

// configPolicy says which flags and commands read the environment and the
// config file: every flag but --help, --config, --regenerate-credentials,
// a one-off act that must be asked for on the command line (set in the
// environment or a file it would replace the credentials on every run),
// and -o (and its deprecated --json): in the environment or a file it
// would change what every command prints, to people and to scripts alike.
func configPolicy() config.Policy {
	return config.Policy{
		CommandLineOnly: map[string]string{
			regenerateCredentialsFlag: "a one-off act: give --" + regenerateCredentialsFlag + " on the command line (in a file it would replace the credentials on every run)",
			output.Flag:               "a choice for one run: give -o on the command line (in a file it would change what every command prints, to people and scripts alike)",
			"json":                    "",
		},
	}
}

// applyConfig fills the flags of cmd that the command line left unset from
// the environment or the config file, and records where every setting came
// from.
func applyConfig(cmd *cobra.Command, g *globals) error {
	a, err := configPolicy().Apply(cmd, g.configFile)
	g.config = a
	return err
}

// setting returns where the named setting of the running command came
// from (the zero Setting for a flag that is not layered).
func (g *globals) setting(key string) config.Setting {
	if g.config == nil {
		return config.Setting{}
	}
	return g.config.Settings[key]
}

// warnMisspeltEnv warns about each AGENTISO_ variable that sets nothing but
// is close to one that would (AGENTISO_RELEASE_IMAGES): otherwise it would
// be silently ignored. Variables close to none (other tools', test
// harnesses') are left alone; config view lists them all.
func warnMisspeltEnv(root *cobra.Command, g *globals) {
	for _, e := range config.UnknownEnv(os.Environ(), configPolicy().Keys(root)) {
		if e.Name == config.EnvVar(output.Flag) || e.Name == config.EnvVar("json") {
			g.log.Warn(fmt.Sprintf("$%s sets nothing: -o is read from the command line only", e.Name))
			continue
		}
		if e.DidYouMean != "" {
			g.log.Warn(fmt.Sprintf("$%s sets nothing: no agentiso setting has that name; did you mean $%s?", termsafe.String(e.Name), e.DidYouMean))
		}
	}
}
