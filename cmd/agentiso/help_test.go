package main

import (
	"bytes"
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
