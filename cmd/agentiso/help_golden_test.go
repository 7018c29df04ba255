package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateHelp = flag.Bool("update", false, "rewrite testdata/help/ from the current --help output")

// allCommands is every command of the tree, hidden ones included.
func allCommands() []*cobra.Command {
	var all []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		all = append(all, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&globals{}))
	return all
}

// The --help of every command is the one in testdata/<its help file>
// (testdata/help/create/image.txt): help text moved out of the Go code, or
// changed, shows here as a diff. go test -run TestHelpGolden -update
// rewrites the files after an intended change.
func TestHelpGolden(t *testing.T) {
	want := map[string]bool{}
	for _, c := range allCommands() {
		p := strings.Fields(c.CommandPath())[1:]
		name := filepath.Join("testdata", filepath.FromSlash(helpFile(c)))
		want[name] = true
		var out, errOut bytes.Buffer
		code := run(append(append([]string{}, p...), "--help"), strings.NewReader(""), &out, &errOut)
		require.Equal(t, 0, code, "%v --help: %s", p, errOut.String())
		if *updateHelp {
			require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
			require.NoError(t, os.WriteFile(name, out.Bytes(), 0o644))
			continue
		}
		b, err := os.ReadFile(name)
		if !assert.NoError(t, err, "run go test -run TestHelpGolden -update") {
			continue
		}
		assert.Equal(t, string(b), out.String(), "agentiso %s --help differs from %s", strings.Join(p, " "), name)
	}
	// No golden file of a command that is gone.
	require.NoError(t, filepath.WalkDir(filepath.Join("testdata", "help"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !want[p] {
			if *updateHelp {
				return os.Remove(p)
			}
			t.Errorf("%s: no such command", p)
		}
		return err
	}))
}
