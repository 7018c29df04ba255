package main

import (
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
			rep := rendezvous.NewReporter(g.errOut, lvl, g.debugLog())
			r.Dir, r.Reporter = g.dir, rep
			_, err = nodejoin.RunMonitor(cmd.Context(), r)
			rep.Close(err == nil)
			if err == nil {
				rep.Result("Every host is a Ready node of the cluster")
			} else if code := nodejoin.MonitorExitCode(err); code > 1 {
				return &exitError{code: code, err: err}
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
