package devcmd

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateHelp = flag.Bool("update", false, "rewrite testdata/help/ from the current --help output")

// The --help of every command is the one in testdata/help/<command>.txt,
// its long help and examples from help/<command>.txt. go test -run
// TestHelpGolden -update rewrites the files after an intended change.
func TestHelpGolden(t *testing.T) {
	root := NewRootCmd(io.Discard, io.Discard)
	want := map[string]bool{}
	for _, c := range append([]*cobra.Command{root}, root.Commands()...) {
		assert.NotEmpty(t, c.Long, "%s has no %s", c.Name(), helpFile(c))
		assert.NotEmpty(t, c.Example, "%s has no examples in %s", c.Name(), helpFile(c))
		args := []string{c.Name(), "--help"}
		if c == root {
			args = args[1:]
		}
		name := filepath.Join("testdata", "help", c.Name()+".txt")
		want[name] = true
		var out, errOut bytes.Buffer
		require.Equal(t, 0, Run(args, &out, &errOut), "%v: %s", args, errOut.String())
		if *updateHelp {
			require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
			require.NoError(t, os.WriteFile(name, out.Bytes(), 0o644))
			continue
		}
		b, err := os.ReadFile(name)
		if !assert.NoError(t, err, "run go test -run TestHelpGolden -update") {
			continue
		}
		assert.Equal(t, string(b), out.String(), "agentiso-dev %v differs from %s", args, name)
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "help"))
	require.NoError(t, err)
	for _, e := range entries {
		if p := filepath.Join("testdata", "help", e.Name()); !want[p] {
			t.Errorf("%s: no such command", p)
		}
	}
}

// Errors are agentiso's one line, "ERROR message", with exit code 1: a
// bad flag and a failing command alike.
func TestRunErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, Run([]string{"make-test-iso"}, &out, &errOut))
	assert.Equal(t, "ERROR required flag(s) \"output-file\" not set\n", errOut.String())

	errOut.Reset()
	assert.Equal(t, 1, Run([]string{"--log-level", "loud", "init-dir", "--rendezvous-ip", "127.0.0.1", "--dir", t.TempDir()}, &out, &errOut))
	assert.Contains(t, errOut.String(), "ERROR ")
	assert.Contains(t, errOut.String(), "loud")

	errOut.Reset()
	assert.Equal(t, 1, Run([]string{"init-dir", "--rendezvous-ip", "not-an-ip", "--dir", t.TempDir()}, &out, &errOut))
	assert.Equal(t, "ERROR --rendezvous-ip \"not-an-ip\" is not an IP address\n", errOut.String())
}
