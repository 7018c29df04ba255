package config

import (
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func policyTree() (Policy, *cobra.Command, *cobra.Command) {
	run := func(*cobra.Command, []string) error { return nil }
	root := &cobra.Command{Use: "tool"}
	root.PersistentFlags().String("dir", ".", "")
	root.PersistentFlags().String(FileKey, "", "")
	create := &cobra.Command{Use: "create"}
	image := &cobra.Command{Use: "image", RunE: run}
	image.Flags().String("release-image", "", "")
	image.Flags().Bool("once", false, "")
	image.Flags().String("output", "", "")
	image.Flags().Bool("knob", false, "")
	_ = image.Flags().MarkHidden("knob")
	create.AddCommand(image)
	dev := &cobra.Command{Use: "dev"}
	sim := &cobra.Command{Use: "simulate", RunE: run}
	sim.Flags().String("scenario", "", "")
	dev.AddCommand(sim)
	root.AddCommand(create, dev)
	p := Policy{CommandLineOnly: map[string]string{"once": "a one-off act", "output": ""}, OwnCommandLine: []string{"dev"}}
	return p, root, image
}

// The keys are the layered flags of the layered commands: no --help, no
// config file, no command-line-only or hidden flag, nothing of dev.
func TestPolicyKeysAndSchema(t *testing.T) {
	p, root, _ := policyTree()
	assert.Equal(t, []string{"dir", "release-image"}, p.Keys(root))
	s := p.Schema(root)
	assert.Equal(t, []string{"dir", "release-image"}, s.Keys)
	assert.Equal(t, "a one-off act", s.Refused["once"])
	assert.Contains(t, s.Refused[FileKey], "a config file cannot name another one")
	assert.NotContains(t, s.Refused, "output", "no reason: an unknown key")
}

func TestPolicyFindCommand(t *testing.T) {
	p, root, image := policyTree()
	c, err := p.FindCommand(root, []string{"create", "image"})
	require.NoError(t, err)
	assert.Equal(t, image, c)
	_, err = p.FindCommand(root, []string{"create", "imag"})
	assert.EqualError(t, err, `"imag" is not a command of "tool create"; did you mean "image"?`)
	_, err = p.FindCommand(root, []string{"dev", "simulate"})
	assert.ErrorContains(t, err, `"tool dev simulate" reads only its command line`)
}

// Apply fills what the command line left unset from the environment and
// says where each value came from.
func TestPolicyApply(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv(EnvVar("release-image"), "quay.io/x/y@sha256:1")
	p, root, image := policyTree()
	root.SetArgs([]string{"create", "image", "--dir", "d"})
	var a *Applied
	image.RunE = func(cmd *cobra.Command, _ []string) error {
		var err error
		a, err = p.Apply(cmd, "")
		return err
	}
	require.NoError(t, root.Execute())
	require.NotNil(t, a)
	assert.False(t, a.Loaded)
	assert.Equal(t, FromEnv, a.Settings["release-image"].Source)
	assert.Equal(t, "quay.io/x/y@sha256:1", image.Flags().Lookup("release-image").Value.String())
	assert.Equal(t, FromFlag, a.Settings["dir"].Source)
	_, ok := a.Settings["once"]
	assert.False(t, ok)
}

// Lookup resolves a key the command does not declare through the
// environment; without layers it is a default. Place names each source.
func TestAppliedLookupAndPlace(t *testing.T) {
	t.Setenv(EnvVar("release-image"), "quay.io/x/y@sha256:1")
	l, err := New(nil)
	require.NoError(t, err)
	s, err := (&Applied{Layers: l}).Lookup("release-image")
	require.NoError(t, err)
	assert.Equal(t, Setting{Key: "release-image", Value: "quay.io/x/y@sha256:1", Source: FromEnv, Origin: "$AGENTISO_RELEASE_IMAGE"}, s)
	assert.Equal(t, "$AGENTISO_RELEASE_IMAGE", s.Place())
	s, err = (*Applied)(nil).Lookup("release-image")
	require.NoError(t, err)
	assert.Equal(t, FromDefault, s.Source)
	assert.Empty(t, s.Place())
	assert.Equal(t, "config file /etc/a.yaml:3", Setting{Source: FromFile, Origin: "/etc/a.yaml:3"}.Place())
	assert.Equal(t, "--release-image", Setting{Source: FromFlag, Origin: "--release-image"}.Place())
}
