package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/config"
	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/internal/output"
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
	// started is when the command started.
	started time.Time
	// format is -o of the create commands.
	format output.Format
	// onFailure is called when a command fails, with the command run
	// (cobra's, also when its line did not parse), the exit code and the
	// error, before the error is shown: wait-for still prints its status
	// object there.
	onFailure []func(c *cobra.Command, code int, err error)
}

// debugLog is the debug log in --dir, nil when the command keeps none.
func (g *globals) debugLog() io.Writer {
	if g.logFile == nil {
		return nil
	}
	return g.logFile
}

func newRootCmd(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:           "agentiso",
		Short:         "Build a bootable agent ISO that installs OpenShift with no hub cluster",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyConfig(cmd, g); err != nil {
				return &exitError{code: 1, err: err}
			}
			lg, err := console.NewLogger(g.errOut, g.logLevel, nil)
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
				g.log, _ = console.NewLogger(g.errOut, g.logLevel, g.logFile)
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
	// --version as people type it: the first line of `agentiso version`.
	root.Version = version
	root.SetVersionTemplate("agentiso {{.Version}}\n")
	root.PersistentFlags().StringVar(&g.dir, "dir", ".", "asset directory: inputs are read from it, outputs and state are written to it")
	// Completion offers directories for --dir, not files.
	_ = root.MarkPersistentFlagDirname("dir")
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
	root.AddCommand(newIsoCmd(g))
	root.AddCommand(newPXECmd(g))
	root.AddCommand(newReleaseCmd(g))
	root.AddCommand(newConfigCmd(g))
	root.AddCommand(newServeCmd(g))
	root.AddCommand(newBootCmd(g))
	root.AddCommand(newNodeImageCmd(g))
	setHelp(root, helpValues())
	return root
}

// helpWidth is the widest line of --help.
const helpWidth = 100

// writesAssetDir reports whether cmd works on the asset directory (--dir):
// the create commands, wait-for and node-image, which keep its debug log.
func writesAssetDir(cmd *cobra.Command) bool {
	for c := cmd; c.HasParent(); c = c.Parent() {
		if c.Parent() == c.Root() {
			return c.Name() == "create" || c.Name() == "wait-for" || c.Name() == "node-image"
		}
	}
	return false
}
