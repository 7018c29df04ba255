package main

import (
	"bytes"
	"io/fs"
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every line of every command's --help fits in helpWidth columns (issue 22
// item 12: flag help came in lines of up to 250).
func TestHelpFitsInWidth(t *testing.T) {
	var walk func(c *cobra.Command)
	var paths [][]string
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		p := strings.Fields(c.CommandPath())[1:]
		paths = append(paths, p)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&globals{}))
	require.Greater(t, len(paths), 10)
	for _, p := range paths {
		var out bytes.Buffer
		code := run(append(append([]string{}, p...), "--help"), strings.NewReader(""), &out, &out)
		require.Equal(t, 0, code, "%v --help: %s", p, out.String())
		for i, line := range strings.Split(out.String(), "\n") {
			assert.LessOrEqual(t, utf8.RuneCountInString(line), helpWidth, "agentiso %s --help, line %d: %q", strings.Join(p, " "), i+1, line)
		}
	}
}

// Every command, hidden ones included, has a summary, long help and
// examples, from its own help file; every help file is a command's (a
// missing or orphaned file fails), and every {{name}} in them and every
// fragment (help/*.inc) is used.
func TestEveryCommandHasItsHelpFile(t *testing.T) {
	used := map[string]bool{}
	for _, c := range allCommands() {
		p := c.CommandPath()
		assert.NotEmpty(t, c.Short, "%s: no Short", p)
		assert.NotEmpty(t, c.Long, "%s: no long help: write %s", p, helpFile(c))
		assert.NotEmpty(t, c.Example, "%s: no examples: add them to %s after a line %q", p, helpFile(c), strings.TrimSpace(examplesLine))
		assert.NotContains(t, c.Long+c.Example, "{{", "%s: a {{name}} in %s that helpValues does not know", p, helpFile(c))
		assert.False(t, used[helpFile(c)], "%s: %s is a second command's", p, helpFile(c))
		used[helpFile(c)] = true
	}
	var all strings.Builder
	var fragments []string
	require.NoError(t, fs.WalkDir(helpFiles, "help", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := helpFiles.ReadFile(p)
		require.NoError(t, err)
		switch path.Ext(p) {
		case ".txt":
			assert.True(t, used[p], "%s is no command's help", p)
			assert.Equal(t, 1, strings.Count(string(b), examplesLine), "%s: the prose, a line %q, the examples", p, strings.TrimSpace(examplesLine))
			all.Write(b)
		case ".inc":
			fragments = append(fragments, p)
		default:
			t.Errorf("%s: help files are .txt (a command's) or .inc (a fragment)", p)
		}
		return nil
	}))
	require.NotEmpty(t, fragments)
	for _, p := range fragments {
		assert.Contains(t, all.String(), "{{"+strings.TrimSuffix(path.Base(p), ".inc")+"}}", "%s is used by no help file", p)
	}
}
