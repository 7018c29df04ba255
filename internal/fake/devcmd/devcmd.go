// Package devcmd is agentiso-dev (cmd/agentiso-dev), the command line of
// agentiso's developer aids for tests, demos and benchmarks: a synthetic
// RHCOS-layout ISO (make-test-iso), the rendezvous simulator and the asset
// directory it serves (simulate, init-dir), the installed cluster of the
// day-2 demo (cluster) and the Redfish BMC emulator (bmc). It links the
// fakes of internal/fake, which the shipped agentiso never does.
package devcmd

import (
	"context"
	"embed"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/internal/fake/rendezvoussim"
)

// env is what every command shares: the asset directory and the logger
// (set once the command line is parsed).
type env struct {
	dir, logLevel string
	log           *slog.Logger
}

// forceExitAfter is how long an interrupted command may take to wind down
// before the process exits anyway.
const forceExitAfter = 5 * time.Second

// Run runs agentiso-dev with args, writing to out and errOut, and returns
// its exit code: 0, 1 on an error (printed as agentiso prints errors), 130
// when interrupted.
func Run(args []string, out, errOut io.Writer) int {
	root := NewRootCmd(out, errOut)
	root.SetArgs(args)
	ctx, stop := console.CancelOnInterrupt(context.Background(), forceExitAfter, func() {
		_, _ = io.WriteString(errOut, console.Line(slog.LevelError, "interrupted", console.Inspect(errOut).Colour))
		os.Exit(130)
	})
	defer stop()
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	_, _ = io.WriteString(errOut, console.Line(slog.LevelError, strings.TrimSpace(err.Error()), console.Inspect(errOut).Colour))
	if ctx.Err() != nil {
		return 130
	}
	return 1
}

// NewRootCmd is agentiso-dev's command tree.
func NewRootCmd(out, errOut io.Writer) *cobra.Command {
	e := &env{}
	root := &cobra.Command{
		Use:           "agentiso-dev",
		Short:         "Developer aids for agentiso's tests, demos and benchmarks: fixture ISOs and simulators",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			lg, err := console.NewLogger(errOut, e.logLevel, nil)
			if err != nil {
				return err
			}
			e.log = lg
			return nil
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetOut(out)
	root.SetErr(errOut)
	root.PersistentFlags().StringVar(&e.dir, "dir", ".", "asset directory: what init-dir writes, simulate and cluster serve")
	_ = root.MarkPersistentFlagDirname("dir")
	root.PersistentFlags().StringVar(&e.logLevel, "log-level", "info", "log level: trace, debug, info, warn or error")
	root.AddCommand(newMakeTestISOCmd(), newInitDirCmd(e), newSimulateCmd(e), newClusterCmd(e), newBMCCmd(e))
	setHelp(root, strings.NewReplacer(
		"{{scenarios}}", strings.Join(rendezvoussim.BuiltinNames(), ", "),
		"{{hold-timeout}}", rendezvoussim.DefaultHoldTimeout.String(),
	))
	return root
}

// helpFiles holds the long help and the examples of every command:
// help/<command>.txt (help/agentiso-dev.txt for the root), the prose, then
// a line "-- examples --", then the examples, as agentiso's own help files.
//
//go:embed help
var helpFiles embed.FS

// examplesLine separates a help file's prose from its examples.
const examplesLine = "\n-- examples --\n"

// setHelp sets the Long and Example of c and of every command under it
// from its help file, with values' {{name}}s replaced.
func setHelp(c *cobra.Command, values *strings.Replacer) {
	if b, err := helpFiles.ReadFile(helpFile(c)); err == nil {
		long, example, _ := strings.Cut(values.Replace(string(b)), examplesLine)
		c.Long, c.Example = strings.TrimRight(long, "\n"), strings.TrimRight(example, "\n")
	}
	for _, sub := range c.Commands() {
		setHelp(sub, values)
	}
}

// helpFile is the help file of c: help/<its name>.txt.
func helpFile(c *cobra.Command) string {
	return "help/" + c.Name() + ".txt"
}
