// Command agentiso turns a cluster description into a bootable agent ISO
// for installing OpenShift on bare metal with no hub cluster.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// exitError carries a specific process exit code up to run.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// forceExitAfter is how long a cancelled run may take to wind down before
// the process exits anyway.
const forceExitAfter = 5 * time.Second

// run builds the command tree, executes it and maps errors to exit codes.
func run(args []string, in io.Reader, out, errOut io.Writer) int {
	g := &globals{in: in, out: out, errOut: errOut, args: args, started: time.Now()}
	root := newRootCmd(g)
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	// Ctrl-C or SIGTERM cancels the context: long work stops, temp files
	// are removed, and nothing half-written is left behind. A phase that
	// cannot see the context is ended anyway, with exit code 130 (its
	// locked temporary files are then removed by the next run).
	ctx, stop := console.CancelOnInterrupt(context.Background(), forceExitAfter, func() {
		_, _ = io.WriteString(errOut, console.Line(slog.LevelError, "interrupted", console.Inspect(errOut).Colour))
		os.Exit(130)
	})
	defer stop()
	c, err := root.ExecuteContextC(ctx)
	defer func() { g.closeLog(err != nil) }()
	if err == nil {
		return 0
	}
	if g.logFile != nil {
		_, _ = io.WriteString(g.logFile, console.Line(slog.LevelError, strings.TrimSpace(err.Error()), false))
	}
	code := 1
	var ee *exitError
	cancelled := ctx.Err() != nil && errors.Is(err, context.Canceled)
	if cancelled {
		code = 130
	} else if errors.As(err, &ee) {
		code = ee.code
	}
	for _, f := range g.onFailure {
		f(c, code, err)
	}
	if cancelled {
		msg := "interrupted; nothing was left half-written"
		if writesAssetDir(c) {
			if old := console.EarlierImages(g.dir, g.started); len(old) > 0 {
				verb, it := "is", "it"
				if len(old) > 1 {
					verb, it = "are", "them"
				}
				msg += fmt.Sprintf("; %s in %s %s from an earlier run, built from the inputs as they were then, not this run's: run again to rebuild %s", strings.Join(old, ", "), g.dir, verb, it)
			}
		}
		var ie *baseiso.InterruptedError
		if errors.As(err, &ie) {
			msg += "; the partial base ISO download " + ie.Part + " is kept on purpose: the next run resumes it"
		}
		_, _ = io.WriteString(errOut, console.Line(slog.LevelError, msg, console.Inspect(errOut).Colour))
		return 130
	}
	_, _ = io.WriteString(errOut, console.Line(slog.LevelError, strings.TrimSpace(err.Error())+console.UsageHint(c, err), console.Inspect(errOut).Colour))
	return code
}

// objectOnFailure makes a command given -o json|yaml print its one object
// whatever ends it: when the command that failed is its own (ours) and
// printed none (*wrote), object(c, code, err) is printed in the format of
// -o, read from the command line as given when it did not parse.
func (g *globals) objectOnFailure(format *output.Format, wrote *bool, ours func(*cobra.Command) bool, object func(c *cobra.Command, code int, err error) any) {
	g.onFailure = append(g.onFailure, func(c *cobra.Command, code int, err error) {
		if *wrote || !ours(c) {
			return
		}
		f := *format
		if f == output.Text {
			f = output.FromArgs(g.args)
		}
		if f == output.Text {
			return
		}
		*wrote = true
		_ = output.Write(g.out, f, object(c, code, err))
	})
}

// closeLog ends the debug log in --dir, if one was kept. A failed command
// leaves no directory it created that holds nothing but that log (a
// mistyped --dir): the error was shown, and an empty directory would
// only mislead the next run.
func (g *globals) closeLog(failed bool) {
	if g.logFile == nil {
		return
	}
	_ = g.logFile.Close()
	g.logFile = nil
	if failed && !g.dirExisted {
		console.RemoveLogOnlyDir(g.dir)
	}
}
