package main

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

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
		Args:  cobra.NoArgs,
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

	sub := func(target, short string) *cobra.Command {
		return &cobra.Command{
			Use:   target,
			Short: short,
			Args:  cobra.NoArgs,
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
		sub("bootstrap-complete", "Wait until the cluster's control plane has bootstrapped"),
		sub("install-complete", "Wait until the cluster is installed and the console is up"),
	)
	// A script given -o gets its object whatever ends the command: a
	// usage error, a bad setting, missing inputs in --dir.
	ours := func(c *cobra.Command) bool { return c == cmd || c.Parent() == cmd }
	g.objectOnFailure(&o.format, &o.wrote, ours, func(c *cobra.Command, code int, err error) any {
		target := ""
		if c != cmd {
			target = c.Name()
		}
		return rendezvous.StatusBeforeWait(target, code, err)
	})
	return cmd
}
