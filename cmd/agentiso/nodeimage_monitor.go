package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// monitorResult is node-image monitor's -o object: the report and the
// exit code.
type monitorResult struct {
	*nodejoin.MonitorReport
	ExitCode int `json:"exitCode"`
}

func newNodeImageMonitorCmd(g *globals) *cobra.Command {
	r := nodejoin.MonitorRequest{}
	var format output.Format
	// last is the report of the run (also one that failed); wrote says
	// the -o object was printed.
	var last *nodejoin.MonitorReport
	var wrote bool
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
			last, err = nodejoin.RunMonitor(cmd.Context(), r)
			rep.Close(err == nil)
			if err == nil {
				rep.Result("Every host is a Ready node of the cluster")
				if format != output.Text {
					wrote = true
					return output.Write(g.out, format, monitorResult{MonitorReport: last})
				}
			} else if code := nodejoin.MonitorExitCode(err); code > 1 {
				return &exitError{code: code, err: err}
			}
			return err
		},
	}
	// A script given -o gets its one object whatever ends the command.
	g.objectOnFailure(&format, &wrote, func(cc *cobra.Command) bool { return cc == c }, func(_ *cobra.Command, code int, err error) any {
		out := last
		if out == nil {
			out = &nodejoin.MonitorReport{Hosts: []*nodejoin.HostStatus{}}
		}
		if out.Error == "" && err != nil {
			out.Error = err.Error()
		}
		return monitorResult{MonitorReport: out, ExitCode: code}
	})
	output.AddFlag(c, &format, "one final object: each host (name and where it came from, role, node, ready, its pending, approved and refused CSRs, its own service's last status), complete, the error and the exit code")
	f := c.Flags()
	f.StringVar(&r.Kubeconfig, "kubeconfig", "", "kubeconfig of the installed cluster (default $KUBECONFIG)")
	f.StringVar(&r.Context, "context", "", "kubeconfig context to use (default its current-context)")
	f.StringSliceVar(&r.IPs, "ip-addresses", nil, "IP addresses of the hosts being added, comma-separated (default the static addresses of nodes-config.yaml's hosts in --dir)")
	f.BoolVar(&r.ApproveCSRs, "approve-csrs", false, "approve the pending CSRs of the hosts being added (only theirs)")
	f.DurationVar(&r.Timeout, "timeout", 0, "give up after this long (0: one hour)")
	f.DurationVar(&r.Interval, "interval", 0, "time between polls of the cluster (0: 10s)")
	f.BoolVar(&r.Report, "report", false, "write report.json in --dir")
	return c
}
