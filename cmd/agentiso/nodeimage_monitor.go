package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
)

func newNodeImageMonitorCmd(g *globals) *cobra.Command {
	r := nodejoin.MonitorRequest{}
	c := &cobra.Command{
		Use:   "monitor",
		Short: "Follow the hosts being added until each is a Ready node; show (and approve) their CSRs",
		Long: `Follow the hosts booted from node-image create's ISO, by their IP addresses,
on the cluster side: each joining host asks for two certificates (CSRs), a
client one through the node-bootstrapper and a serving one as the node;
they are shown while pending. With --approve-csrs they are approved, but
only those whose requester and subject are exactly a host being added
(its node name; for the serving one, only that host's addresses). The
command ends when every host is a Ready node.

Host names come from the node with that address, from nodes-config.yaml in
--dir (hosts with static addresses), or from reverse DNS; a host whose name
is unknown has its CSRs neither shown nor approved.

Not yet: the live table of the hosts' own assisted-service (stage,
progress, validations) that wait-for shows. See docs/add-nodes.md.

Exit status: 0 when every host is a Ready node; 1 on a usage error, a
refused permission (named), or when --timeout passes first; 130 on Ctrl-C.
--report writes report.json in --dir, also after a failure.`,
		Example: `  agentiso node-image monitor --kubeconfig kc --ip-addresses 192.168.111.83

  # Two hosts; approve their CSRs; write report.json in --dir
  agentiso node-image monitor --kubeconfig kc --ip-addresses 192.168.111.83,192.168.111.84 \
      --approve-csrs --report`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if r.Kubeconfig == "" {
				r.Kubeconfig = os.Getenv("KUBECONFIG")
			}
			r.Dir, r.Log = g.dir, g.log
			if _, err := nodejoin.RunMonitor(cmd.Context(), r); err != nil {
				return err
			}
			g.log.Info("Every host is a Ready node of the cluster")
			return nil
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
