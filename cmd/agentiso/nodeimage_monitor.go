package main

import (
	"errors"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

func newNodeImageMonitorCmd(g *globals) *cobra.Command {
	r := nodejoin.MonitorRequest{}
	c := &cobra.Command{
		Use:   "monitor",
		Short: "Follow the hosts being added until each is a Ready node; show (and approve) their CSRs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if r.Kubeconfig == "" {
				r.Kubeconfig = os.Getenv("KUBECONFIG")
			}
			lvl, err := console.ParseLevel(g.logLevel)
			if err != nil {
				return &exitError{code: 1, err: err}
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
			r.Dir, r.Reporter = g.dir, rep
			_, err = nodejoin.RunMonitor(cmd.Context(), r)
			rep.Close(err == nil)
			var hf *nodejoin.HostFailedError
			switch {
			case err == nil:
				rep.Result("Every host is a Ready node of the cluster")
				return nil
			case errors.Is(err, nodejoin.ErrMonitorTimeout):
				return &exitError{code: 5, err: err}
			case errors.As(err, &hf):
				return &exitError{code: 6, err: err}
			}
			return err
		},
	}
	f := c.Flags()
	f.StringVar(&r.Kubeconfig, "kubeconfig", "", "kubeconfig of the installed cluster (default $KUBECONFIG)")
	f.StringVar(&r.Context, "context", "", "kubeconfig context to use (default its current-context)")
	f.StringSliceVar(&r.IPs, "ip-addresses", nil, "IP addresses of the hosts being added, comma-separated")
	f.BoolVar(&r.ApproveCSRs, "approve-csrs", false, "approve the pending CSRs of the hosts being added (only theirs)")
	f.DurationVar(&r.Timeout, "timeout", 0, "give up after this long (0: one hour)")
	f.DurationVar(&r.Interval, "interval", 0, "time between polls of the cluster (0: 10s)")
	f.BoolVar(&r.Report, "report", false, "write report.json in --dir")
	return c
}
