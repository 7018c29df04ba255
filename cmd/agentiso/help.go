package main

import (
	"embed"
	"path"
	"strings"

	"github.com/spf13/cobra"
)

// helpFiles holds the long help and the examples of every command, one
// file per command: help/<its words as directories>.txt (helpFile), the
// prose, then a line "-- examples --", then the examples. {{name}} in a
// file is replaced by helpValues' value of name; help/*.inc are the
// fragments several files share.
//
//go:embed help
var helpFiles embed.FS

// examplesLine separates a help file's prose from its examples.
const examplesLine = "\n-- examples --\n"

// setHelp sets the Long and Example of c and of every command under it
// from its help file (a test keeps one file per command).
func setHelp(c *cobra.Command, values *strings.Replacer) {
	if b, err := helpFiles.ReadFile(helpFile(c)); err == nil {
		long, example, _ := strings.Cut(values.Replace(string(b)), examplesLine)
		c.Long, c.Example = strings.TrimRight(long, "\n"), strings.TrimRight(example, "\n")
	}
	for _, sub := range c.Commands() {
		setHelp(sub, values)
	}
}

// helpFile is the help file of c: help/agentiso.txt for the root, else
// help/<the words of its path after the root's>.txt
// (help/create/image.txt).
func helpFile(c *cobra.Command) string {
	words := strings.Fields(c.CommandPath())
	if len(words) == 1 {
		return "help/" + words[0] + ".txt"
	}
	return path.Join(append([]string{"help"}, words[1:]...)...) + ".txt"
}

// helpValues are what the {{name}}s of the help files stand for.
func helpValues() *strings.Replacer {
	inputs, _ := helpFiles.ReadFile("help/unconfigured-inputs.inc")
	return strings.NewReplacer(
		"{{unconfigured-inputs}}", strings.TrimRight(string(inputs), "\n"),
	)
}
