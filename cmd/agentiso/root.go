package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/config"
	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
)

// globals holds what every command shares: the asset directory, the
// output streams and the one logger. Commands receive it; nothing is global.
type globals struct {
	dir      string
	logLevel string
	in       io.Reader
	out      io.Writer
	errOut   io.Writer
	log      *slog.Logger
	// configFile is --config; config is how the environment and the
	// config file were applied to this invocation's flags (nil for a
	// command that reads only its command line).
	configFile string
	config     *config.Applied
	// logFile is the debug log in --dir of the commands that work on
	// an asset directory (nil for the others); args the command line.
	logFile *console.LogFile
	args    []string
	// dirExisted is whether --dir existed before the command ran.
	dirExisted bool
	// format is -o of the create commands.
	format output.Format
	// onFailure is called when a command fails, with the command run
	// (cobra's, also when its line did not parse), the exit code and the
	// error, before the error is shown: wait-for still prints its status
	// object there.
	onFailure []func(c *cobra.Command, code int, err error)
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
	g := &globals{in: in, out: out, errOut: errOut, args: args}
	root := newRootCmd(g)
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	// Ctrl-C or SIGTERM cancels the context: long work stops, temp files
	// are removed, and nothing half-written is left behind. A phase that
	// cannot see the context (a read blocked on standard input) is ended
	// anyway: on a second signal, or forceExitAfter after the first, the
	// process exits 130 (its locked temporary files are then removed by the
	// next run).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-sigs:
		case <-finished:
			return
		}
		cancel()
		t := time.NewTimer(forceExitAfter)
		defer t.Stop()
		select {
		case <-sigs:
		case <-t.C:
		case <-finished:
			return
		}
		_, _ = io.WriteString(errOut, console.Line(slog.LevelError, "interrupted", console.Inspect(errOut).Colour))
		os.Exit(130)
	}()
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
		var ie *baseiso.InterruptedError
		if errors.As(err, &ie) {
			msg += "; the partial base ISO download " + ie.Part + " is kept on purpose: the next run resumes it"
		}
		_, _ = io.WriteString(errOut, console.Line(slog.LevelError, msg, console.Inspect(errOut).Colour))
		return 130
	}
	_, _ = io.WriteString(errOut, console.Line(slog.LevelError, strings.TrimSpace(err.Error())+usageHint(c, err), console.Inspect(errOut).Colour))
	return code
}

func newRootCmd(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "agentiso",
		Short: "Build a bootable agent ISO that installs OpenShift with no hub cluster",
		Long: `agentiso turns a cluster description (install-config.yaml + agent-config.yaml,
or a directory of ZTP manifests) into one bootable agent ISO. Boot every
machine from it: the host that owns the rendezvous IP runs a temporary
assisted-service, the others register with it, and the cluster installs
itself. Everything works offline.

Every flag can also be set in the environment as AGENTISO_<FLAG> (upper
case, "-" as "_": AGENTISO_RELEASE_IMAGE for --release-image) and in the
config file (--config, else ~/.config/agentiso/config.yaml) as a key named
like the flag (release-image: ...). The command line wins over the
environment, which wins over the file. --regenerate-credentials is only
read from the command line. 'agentiso config view' shows every setting and
where it comes from.`,
		Example: `  agentiso create agent-config-template --dir mycluster   # then edit it
  agentiso create image --dir mycluster --base-iso rhcos-live.x86_64.iso
  # boot every host from mycluster/agent.x86_64.iso, then
  agentiso wait-for install-complete --dir mycluster`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyConfig(cmd, g); err != nil {
				return &exitError{code: 1, err: err}
			}
			lg, err := newLogger(g.errOut, g.logLevel)
			if err != nil {
				if s := g.setting("log-level"); s.Source != config.FromFlag && s.Source != "" {
					err = fmt.Errorf("%w (from %s)", err, s.Origin)
				}
				return &exitError{code: 1, err: err}
			}
			g.log = lg
			if writesAssetDir(cmd) {
				_, statErr := os.Stat(g.dir)
				g.dirExisted = statErr == nil
				g.logFile = console.NewLogFile(g.dir, nil)
				lv, _ := console.ParseLevel(g.logLevel)
				g.log = slog.New(slog.NewMultiHandler(console.NewHandler(g.errOut, lv, console.Inspect(g.errOut).Colour),
					console.NewHandler(g.logFile, slog.LevelDebug, false)))
				g.log.Debug(fmt.Sprintf("agentiso %s: %s", version, strings.Join(g.args, " ")))
			}
			for _, w := range output.Deprecations(cmd.Flags()) {
				g.log.Warn(w)
			}
			if configPolicy().LayeredCommand(cmd) && cmd.CommandPath() != "agentiso config view" {
				warnMisspeltEnv(cmd.Root(), g)
			}
			return nil
		},
	}
	root.PersistentFlags().StringVar(&g.dir, "dir", ".", "asset directory: inputs are read from it, outputs and state are written to it")
	root.PersistentFlags().StringVar(&g.configFile, configFlag, "", "config file (default $XDG_CONFIG_HOME/agentiso/config.yaml, else the system's user config directory; env "+config.EnvVar(configFlag)+"): keys named like the flags")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "info", "log level: trace, debug, info, warn or error (progress lines are info: warn and error hide them; outcomes and errors always show)")
	_ = root.RegisterFlagCompletionFunc("log-level", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return console.Levels, cobra.ShellCompDirectiveNoFileComp
	})
	// Flag help is wrapped to the terminal, at most helpWidth columns
	// (cobra leaves each flag on one line, up to 250 columns).
	width := helpWidth
	if w := console.Inspect(g.out).Width(); w > 0 && w < width {
		width = max(w, 60)
	}
	root.SetUsageTemplate(strings.ReplaceAll(root.UsageTemplate(), ".FlagUsages |", fmt.Sprintf(".FlagUsagesWrapped %d |", width)))
	root.AddCommand(newVersionCmd(g))
	root.AddCommand(newCreateCmd(g))
	root.AddCommand(newGraphCmd(g))
	root.AddCommand(newNmstateCmd(g))
	root.AddCommand(newWaitForCmd(g))
	addWaitForDevCmds(g, root)
	root.AddCommand(newIsoCmd(g))
	root.AddCommand(newPXECmd(g))
	root.AddCommand(newReleaseCmd(g))
	root.AddCommand(newConfigCmd(g))
	root.AddCommand(newServeCmd(g))
	root.AddCommand(newBootCmd(g))
	root.AddCommand(newNodeImageCmd(g))
	devCmd(root).AddCommand(newDevMakeTestISOCmd(g))
	return root
}

// helpWidth is the widest line of --help.
const helpWidth = 100

// newLogger returns the one logger used by every command: "LEVEL
// message" lines on w (internal/console), coloured on a terminal unless
// NO_COLOR is set.
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	lv, err := console.ParseLevel(level)
	if err != nil {
		return nil, err
	}
	return slog.New(console.NewHandler(w, lv, console.Inspect(w).Colour)), nil
}

// writesAssetDir reports whether cmd works on the asset directory (--dir):
// the create commands and wait-for, which keep its debug log.
func writesAssetDir(cmd *cobra.Command) bool {
	for c := cmd; c.HasParent(); c = c.Parent() {
		if c.Parent() == c.Root() {
			return c.Name() == "create" || c.Name() == "wait-for"
		}
	}
	return false
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
	if !failed || g.dirExisted {
		return
	}
	entries, err := os.ReadDir(g.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Name() != console.LogFileName {
			return
		}
	}
	_ = os.Remove(filepath.Join(g.dir, console.LogFileName))
	_ = os.Remove(g.dir)
}

// usageHint completes cobra's own usage errors ("accepts 1 arg(s),
// received 0", "unknown command"), which say what is wrong but not what is
// right: the command's usage line, a did-you-mean for a mistyped
// subcommand, and where the examples are.
func usageHint(c *cobra.Command, err error) string {
	if c == nil {
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
