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
		Long: `Follow the hosts booted from node-image create's ISO, by their IP addresses,
until each is a Ready node of the cluster.

Each host runs its own assisted-service, which imports the cluster and
installs that host: until the host reboots, the table shows what it says
(status, install stage, progress) and its failing validations are
printed, read with the ISO's watcher token, which node-image create keeps
in --dir (.agentiso/node-watcher-token). Without it only the cluster side
is followed.

Then the cluster side: each joining host asks for two certificates (CSRs),
a client one through the node-bootstrapper and a serving one as the node;
they are shown while pending. With --approve-csrs they are approved, but
only those whose requester and subject are exactly a host being added
(its node name; for the serving one, only that host's addresses).

Host names come from the node with that address, from nodes-config.yaml in
--dir (hosts with static addresses), from the host's assisted-service, or
from reverse DNS; a host whose name is unknown has its CSRs neither shown
nor approved. See docs/add-nodes.md.

Exit status: 0 when every host is a Ready node; 1 on a usage error, missing
input or a refused permission (named); 5 when --timeout passes first; 6
when a host's assisted-service says its installation failed; 130 on
Ctrl-C. --report writes report.json in --dir, also after a failure.`,
		Example: `  agentiso node-image monitor --dir day2 --kubeconfig kc --ip-addresses 192.168.111.83

  # Two hosts; approve their CSRs; write report.json in --dir
  agentiso node-image monitor --dir day2 --kubeconfig kc \
      --ip-addresses 192.168.111.83,192.168.111.84 --approve-csrs --report`,
		Args: cobra.NoArgs,
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
