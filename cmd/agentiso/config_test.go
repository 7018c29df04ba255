package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"

	"github.com/seed-a052040e/agentiso/internal/config"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
)

// The configuration keys are the flags of the supported commands, without
// the one-off --regenerate-credentials, --help, -o and its deprecated
// --json (a per-run choice), hidden flags, and the developer aids'.
func TestConfigKeys(t *testing.T) {
	keys := configPolicy().Keys(newRootCmd(&globals{}))
	for _, k := range []string{"dir", "log-level", "release-image", "release-version", "offline", "base-iso",
		"base-iso-sha256", "os-image-mirror", "strict", "reset-base-iso", "timeout", "rendezvous-url", "lenient"} {
		assert.Contains(t, keys, k)
	}
	for _, k := range []string{"help", regenerateCredentialsFlag, "size", "scenario", "rendezvous-ip", "output", "json", "time-scale", "request-timeout"} {
		assert.NotContains(t, keys, k)
	}
	assert.IsIncreasing(t, keys)
}

// The documented variable names are the ones the layers read.
func TestDocumentedEnvNames(t *testing.T) {
	assert.Equal(t, baseiso.EnvBaseISO, config.EnvVar("base-iso"))
	assert.Equal(t, "AGENTISO_RELEASE_IMAGE", config.EnvVar("release-image"))
	assert.Equal(t, "AGENTISO_RENDEZVOUS_URL", config.EnvVar("rendezvous-url"))
}

// config view shows no empty or zero default: every setting whose default
// is "", 0 or [] says what it means for its command, resolved.
func TestEveryEmptyDefaultIsExplained(t *testing.T) {
	means := defaultMeanings()
	root := newRootCmd(&globals{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !configPolicy().LayeredCommand(c) {
			return
		}
		command := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		check := func(f *pflag.Flag) {
			if !configPolicy().LayeredFlag(f) {
				return
			}
			switch f.DefValue {
			case "", "0", "0s", "[]":
				assert.NotEmpty(t, meaningOf(means, command, f.Name), "%s --%s: its default %q says nothing; add what it means to defaultMeanings", command, f.Name, f.DefValue)
			}
		}
		c.Flags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// A command's own meaning of a shared flag wins over the flag's.
func TestMeaningOfCommandFirst(t *testing.T) {
	means := map[string]string{"timeout": "wait-for's", "node-image monitor/timeout": "monitor's"}
	assert.Equal(t, "monitor's", meaningOf(means, "node-image monitor", "timeout"))
	assert.Equal(t, "wait-for's", meaningOf(means, "wait-for install-complete", "timeout"))
	assert.Empty(t, meaningOf(means, "wait-for install-complete", "interval"))
}

// config view of a command shows the settings it declares for the commands
// under it too (wait-for's --timeout, read by both its targets).
func TestConfigViewOfAParentCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"config", "view", "wait-for"}, nil, &out, &errOut)
	assert.Equal(t, 0, code, errOut.String())
	assert.Regexp(t, `(?m)^timeout +60m to bootstrap`, out.String())
	assert.Regexp(t, `(?m)^rendezvous-url +http://`, out.String())
}
