package console

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// UsageHint completes cobra's own usage errors ("accepts 1 arg(s),
// received 0", "unknown command"), which say what is wrong but not what is
// right, for command c: its usage line, a did-you-mean for a mistyped
// subcommand, and where the examples are. It is "" for any other error.
func UsageHint(c *cobra.Command, err error) string {
	if c == nil || err == nil {
		return ""
	}
	msg := err.Error()
	var hint string
	switch {
	case strings.HasPrefix(msg, "unknown command "):
		if q := strings.SplitN(msg, `"`, 3); len(q) == 3 {
			if s := c.SuggestionsFor(q[1]); len(s) > 0 {
				hint = fmt.Sprintf("\nDid you mean %q?", c.CommandPath()+" "+s[0])
			}
		}
		if c.HasAvailableSubCommands() {
			var names []string
			for _, sub := range c.Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			hint += "\nCommands: " + strings.Join(names, ", ")
		}
	case strings.HasPrefix(msg, "accepts "), strings.HasPrefix(msg, "requires at least "), strings.HasPrefix(msg, "requires at most "),
		strings.HasPrefix(msg, "unknown flag"), strings.HasPrefix(msg, "unknown shorthand flag"), strings.HasPrefix(msg, "flag needs an argument"),
		strings.HasPrefix(msg, "invalid argument "):
		hint = "\nUsage: " + c.UseLine()
	default:
		return ""
	}
	return hint + fmt.Sprintf("\nRun '%s --help' for details and examples.", c.CommandPath())
}
