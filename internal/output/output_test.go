package output

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newCmd(f *Format) *cobra.Command {
	c := &cobra.Command{Use: "info", RunE: func(*cobra.Command, []string) error { return nil }}
	AddFlag(c, f, "the information")
	AddJSONAlias(c, f)
	return c
}

func TestFlagValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want Format
	}{
		{nil, Text},
		{[]string{"-o", "json"}, JSON},
		{[]string{"--output=yaml"}, YAML},
		{[]string{"-o", "YML"}, YAML},
		{[]string{"-o", "text"}, Text},
		{[]string{"--json"}, JSON},
		{[]string{"--json=false"}, Text},
	} {
		var f Format
		c := newCmd(&f)
		c.SetArgs(tc.args)
		require.NoError(t, c.Execute(), tc.args)
		assert.Equal(t, tc.want, f, tc.args)
	}
}

func TestFlagRefusesOtherFormats(t *testing.T) {
	var f Format
	c := newCmd(&f)
	c.SetArgs([]string{"-o", "xml"})
	c.SetOut(&bytes.Buffer{})
	c.SetErr(&bytes.Buffer{})
	err := c.Execute()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `invalid argument "xml" for "-o, --output" flag: want json or yaml`)
}

func TestJSONAliasIsHiddenAndDeprecated(t *testing.T) {
	var f Format
	c := newCmd(&f)
	assert.True(t, c.Flags().Lookup("json").Hidden)
	assert.True(t, IsAlias(c.Flags().Lookup("json")))
	assert.False(t, IsAlias(c.Flags().Lookup(Flag)))
	assert.NotContains(t, c.Flags().FlagUsages(), "--json")
	c.SetArgs([]string{"--json"})
	require.NoError(t, c.Execute())
	assert.Equal(t, []string{"--json is deprecated and will be removed: use -o json"}, Deprecations(c.Flags()))

	var g Format
	c = newCmd(&g)
	c.SetArgs([]string{"-o", "yaml"})
	require.NoError(t, c.Execute())
	assert.Empty(t, Deprecations(c.Flags()))
}

func TestCompletion(t *testing.T) {
	var f Format
	c := newCmd(&f)
	root := &cobra.Command{Use: "agentiso"}
	root.AddCommand(c)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{cobra.ShellCompRequestCmd, "info", "-o", ""})
	require.NoError(t, root.Execute())
	assert.Equal(t, "json\nyaml\n:4\n", out.String()[:len("json\nyaml\n:4\n")])
}

func TestWrite(t *testing.T) {
	v := struct {
		Path string `json:"path"`
		Size int64  `json:"size"`
		Note string `json:"note,omitempty"`
	}{"agent.x86_64.iso", 42, ""}
	var b bytes.Buffer
	require.NoError(t, Write(&b, JSON, v))
	assert.Equal(t, "{\n  \"path\": \"agent.x86_64.iso\",\n  \"size\": 42\n}\n", b.String())
	b.Reset()
	require.NoError(t, Write(&b, YAML, v))
	assert.Equal(t, "path: agent.x86_64.iso\nsize: 42\n", b.String())
	assert.Error(t, Write(&b, Text, v))
}

// FromArgs finds -o in a command line that failed to parse before reaching
// it, whatever stands around it.
func TestFromArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want Format
	}{
		{nil, Text},
		{[]string{"wait-for", "install-complete", "--bogus", "-o", "json"}, JSON},
		{[]string{"--bogus", "value", "--output=yaml"}, YAML},
		{[]string{"--dir", "d", "-ojson", "--x"}, JSON},
		{[]string{"--json"}, JSON},
		{[]string{"-o", "xml"}, Text},
		{[]string{"--", "-o", "json"}, Text},
		{[]string{"-o"}, Text},
	} {
		assert.Equal(t, tc.want, FromArgs(tc.args), tc.args)
	}
}
