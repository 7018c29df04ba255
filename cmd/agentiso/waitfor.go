package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

type waitForOptions struct {
	target         string // bootstrap-complete or install-complete
	timeout        time.Duration
	timeScale      float64
	restURL        string
	requestTimeout time.Duration
	format         output.Format
	// wrote is set once the wait's status object was printed: a failure
	// before that prints one of its own (onFailure).
	wrote bool
}

func newWaitForCmd(g *globals) *cobra.Command {
	o := &waitForOptions{}
	cmd := &cobra.Command{
		Use:   "wait-for",
		Short: "Watch the installation until bootstrap or the whole install completes",
		Long: `wait-for follows an agent-based installation from the workstation.

It polls the assisted-service REST API on the rendezvous host
(http://<rendezvousIP>:8090/api/assisted-install/v2, authenticated with the
watcher token only) and shows cluster and host status, validations that
start or stop failing (with a hint for common causes) and install events.
When the rendezvous host reboots and its API goes away, wait-for switches to
the new cluster's Kubernetes API with <dir>/auth/kubeconfig.

On a terminal the hosts are shown as a live table; otherwise each message is
one timestamped line. Use --log-level debug to see every poll.

Exit codes: 0 done, 1 usage or missing inputs, 5 bootstrap failed or timed
out, 6 installation failed or timed out, 130 interrupted (Ctrl-C).`,
		Example: `  agentiso wait-for bootstrap-complete --dir mycluster
  agentiso wait-for install-complete --dir mycluster --log-level debug
  agentiso wait-for install-complete --dir mycluster --timeout 3h`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return &exitError{code: 1, err: errors.New("wait-for needs a target: bootstrap-complete or install-complete")}
		},
	}
	output.AddPersistentFlag(cmd, &o.format, "a final status object (result, exit code, the cluster as last seen, how to reach it)")
	cmd.PersistentFlags().DurationVar(&o.timeout, "timeout", 0, "give up after this long (default 60m for bootstrap, 90m for install after bootstrap)")
	cmd.PersistentFlags().Float64Var(&o.timeScale, "time-scale", 1, "run the clock this many times faster (for the simulator)")
	cmd.PersistentFlags().StringVar(&o.restURL, "rendezvous-url", "", "assisted-service v2 base URL (default from --dir)")
	cmd.PersistentFlags().DurationVar(&o.requestTimeout, "request-timeout", 10*time.Second, "timeout of each API request")
	for _, f := range []string{"time-scale", "request-timeout"} {
		_ = cmd.PersistentFlags().MarkHidden(f)
	}

	sub := func(target, short, long, example string) *cobra.Command {
		return &cobra.Command{
			Use:     target,
			Short:   short,
			Long:    long,
			Example: example,
			Args:    cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				oo := *o
				oo.target = target
				st, err := waitFor(cmd.Context(), g, oo)
				if st != nil && o.format != output.Text {
					o.wrote = true
					if werr := output.Write(g.out, o.format, st); werr != nil && err == nil {
						err = werr
					}
				}
				return err
			},
		}
	}
	cmd.AddCommand(
		sub("bootstrap-complete", "Wait until the cluster's control plane has bootstrapped",
			`Wait until the bootstrap configmap (kube-system/bootstrap) of the new cluster says
"complete". Before the cluster API exists, progress comes from the rendezvous
host's REST API. Times out after 60 minutes (--timeout). Exit code 5 on failure.`,
			`  agentiso wait-for bootstrap-complete --dir mycluster`),
		sub("install-complete", "Wait until the cluster is installed and the console is up",
			`Wait for bootstrap (as bootstrap-complete), then until the ClusterVersion is
Available and neither Progressing nor Failing and the console route is
admitted (90 minutes, --timeout). Prints how to log in at the end.
Exit code 5 when bootstrap fails, 6 when the installation fails.`,
			`  agentiso wait-for install-complete --dir mycluster`),
	)
	// A script given -o gets its object whatever ends the command: a
	// usage error, a bad setting, missing inputs in --dir.
	g.onFailure = append(g.onFailure, func(c *cobra.Command, code int, err error) {
		if o.wrote || (c != cmd && c.Parent() != cmd) {
			return
		}
		f := o.format
		if f == output.Text {
			f = output.FromArgs(g.args)
		}
		if f == output.Text {
			return
		}
		target := ""
		if c != cmd {
			target = c.Name()
		}
		o.wrote = true
		_ = output.Write(g.out, f, rendezvous.StatusBeforeWait(target, code, err))
	})
	return cmd
}

// runWaitFor waits for o.target, printing what it sees on standard error.
func runWaitFor(ctx context.Context, g *globals, o waitForOptions) error {
	_, err := waitFor(ctx, g, o)
	return err
}

// waitFor is runWaitFor, and returns the wait's status too (none when it
// failed before the wait began).
func waitFor(ctx context.Context, g *globals, o waitForOptions) (*rendezvous.Status, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.timeout < 0 || o.timeScale <= 0 {
		return nil, &exitError{code: 1, err: errors.New("--timeout must be positive and --time-scale greater than zero")}
	}
	lvl, err := console.ParseLevel(g.logLevel)
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	in, err := loadWaitForInputs(g.dir, o.restURL, g.setting("rendezvous-url").Origin, rendezvous.BaseURL)
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	rest, err := rendezvous.NewClient(in.restURL, in.Auth.WatcherAuthToken, o.requestTimeout, nil)
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	kube, err := rendezvous.NewKubeClient(in.Kubeconfig, "", o.requestTimeout)
	if err != nil {
		return nil, &exitError{code: 1, err: fmt.Errorf("%s: %w", in.KubeconfigPath, err)}
	}
	var clock rendezvous.Clock = rendezvous.RealClock{}
	if o.timeScale != 1 {
		clock = &rendezvous.ScaledClock{Scale: o.timeScale}
	}
	var rep rendezvous.Reporter
	if t := console.Inspect(g.errOut); t.TTY {
		rep = rendezvous.NewTerminalReporter(g.errOut, lvl, t.Colour, t.Width)
	} else {
		rep = rendezvous.NewPlainReporter(g.errOut, lvl)
	}
	if g.logFile != nil {
		rep = rendezvous.Tee(rep, rendezvous.NewPlainReporter(g.logFile, slog.LevelDebug))
	}
	if in.restURLSource != "" {
		rep.Log(slog.LevelInfo, fmt.Sprintf("Using the rendezvous API at %s (from %s)", in.restURL, in.restURLSource))
	}
	rep.Log(slog.LevelDebug, fmt.Sprintf("Rendezvous API %s, cluster API %s", rest.URL(), kube.Server()))

	ip := in.RendezvousIP
	w := rendezvous.NewWaiter(rendezvous.Options{
		REST: rest, Kube: kube, Reporter: rep, Clock: clock,
		BootstrapTimeout: o.timeout, InstallTimeout: o.timeout,
		KubeconfigPath: in.KubeconfigPath, PasswordPath: in.PasswordPath, RendezvousIP: ip,
		ProbeSSH: func(ctx context.Context) error {
			d := net.Dialer{Timeout: 5 * time.Second}
			c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ip, "22"))
			if err == nil {
				_ = c.Close()
			}
			return err
		},
	})
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.target == "install-complete" {
		err = w.WaitForInstallComplete(ctx)
	} else {
		err = w.WaitForBootstrapComplete(ctx)
		if err == nil {
			rep.Result("Bootstrap is complete")
			rep.Result("The cluster is ready when 'agentiso wait-for install-complete' succeeds")
		}
	}
	rep.Close(err == nil)
	st := w.Status(o.target, err)
	var we *rendezvous.WaitError
	switch {
	case err == nil:
		return &st, nil
	case errors.Is(err, rendezvous.ErrInterrupted):
		return &st, &exitError{code: rendezvous.ExitInterrupted, err: err}
	case errors.As(err, &we):
		return &st, &exitError{code: we.ExitCode(), err: err}
	}
	return &st, &exitError{code: 1, err: err}
}
