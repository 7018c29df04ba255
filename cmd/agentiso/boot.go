package main

import (
	"errors"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/pkg/bmcboot"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

func newBootCmd(g *globals) *cobra.Command {
	o := bmcboot.Options{}
	var wait bool
	var format output.Format
	timeScale := 1.0
	// pending is the object of a run that failed, printed by onFailure
	// with the exit code; wrote says the object was printed.
	var pending *bootResult
	var wrote bool
	c := &cobra.Command{
		Use:   "boot [HOST...]",
		Short: "Boot the hosts from a served ISO through their BMCs (Redfish virtual media)",
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir, o.Hosts, o.Log = g.dir, args, g.log
			if wait && (strings.HasPrefix(o.ISO, "node.") || strings.HasPrefix(path.Base(o.URL), "node.")) {
				return errors.New("--wait follows an install (wait-for install-complete); hosts booted from a node ISO join an installed cluster: follow them with agentiso node-image monitor")
			}
			if t := console.Inspect(g.errOut); t.TTY {
				o.Table, o.Live = g.errOut, true
			}
			res, err := bmcboot.Run(cmd.Context(), o)
			if res == nil {
				// Stopped before any BMC was spoken to: the object of a
				// failure before the start (onFailure below).
				return err
			}
			out := &bootResult{Result: res}
			booting := "every host is booting from " + path.Base(res.ISO)
			if res.ConfigImage != "" {
				booting += ", its config image attached"
			}
			switch {
			case err != nil:
			case o.Eject:
				g.log.Info("virtual media ejected")
			case strings.HasPrefix(path.Base(res.ISO), "node."):
				g.log.Info(booting)
				g.log.Info("follow the new hosts with: agentiso node-image monitor --dir " + g.dir)
			case !wait:
				g.log.Info(booting)
				g.log.Info("follow the install with: agentiso wait-for install-complete --dir " + g.dir)
			default:
				g.log.Info(booting)
				out.Wait, err = waitFor(cmd.Context(), g, waitForOptions{target: "install-complete", timeScale: timeScale, requestTimeout: 10 * time.Second})
			}
			if err != nil {
				// onFailure prints it, with the exit code.
				pending = out
				return err
			}
			if format != output.Text {
				wrote = true
				return output.Write(g.out, format, out)
			}
			return nil
		},
	}
	// A script given -o gets its one object whatever ends the command: a
	// usage error, a refused address or ISO URL (no host then), a host that
	// failed, the wait that followed.
	g.objectOnFailure(&format, &wrote, func(cc *cobra.Command) bool { return cc == c }, func(_ *cobra.Command, code int, err error) any {
		out := pending
		if out == nil {
			out = &bootResult{Result: bmcboot.FailedBefore(o.Eject, err)}
		}
		out.ExitCode = code
		if code == rendezvous.ExitInterrupted {
			out.Result.Result = bmcboot.ResultInterrupted
		}
		return out
	})
	// Completion offers the hosts boot can boot, each once.
	c.ValidArgsFunction = func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		var names []string
		for _, n := range bmcboot.HostNames(cmd.Context(), g.dir) {
			if !slices.Contains(args, n) {
				names = append(names, n)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
	output.AddFlag(c, &format, "one final object: the result of each host (its Redfish system, virtual media slot, power action or error) and, with --wait, wait-for's status")
	f := c.Flags()
	f.StringVar(&o.URL, "url", "", "where agentiso serve serves --dir, as the BMCs reach it (http://10.0.0.1:8080), or the ISO's own URL")
	f.StringVar(&o.ISO, "iso", "", "the ISO of --dir to boot, by file name: agent.<arch>.iso (the default), agent-unconfigured.<arch>.iso (the generic ISO), node.<arch>.iso or a node ISO's --output-name")
	f.BoolVar(&o.ConfigImage, "config-image", false, "with the generic ISO: also insert the config image (create config-image) served beside it, in a second virtual media slot (a USB stick or floppy slot first)")
	f.BoolVar(&o.Eject, "eject", false, "eject the virtual media instead of booting (after the install)")
	f.BoolVar(&wait, "wait", false, "then wait for the install to complete (wait-for install-complete)")
	f.StringVar(&o.MediaUser, "media-user", "", "user name the BMCs fetch the ISO with (agentiso serve --user)")
	f.StringVar(&o.MediaPasswordFile, "media-password-file", "", "file whose one line is that user's password (agentiso serve --password-file)")
	f.DurationVar(&o.CallTimeout, "call-timeout", 30*time.Second, "bound on each Redfish call")
	f.IntVar(&o.Parallel, "parallel", 16, "BMCs spoken to at once")
	f.Float64Var(&timeScale, "time-scale", 1, "run --wait's clock this many times faster (for the simulator)")
	_ = f.MarkHidden("time-scale")
	return c
}

// bootResult is what boot -o json|yaml prints: bmcboot's result, the
// process's exit code and, with --wait, wait-for's final status (absent
// when the wait did not start).
type bootResult struct {
	*bmcboot.Result
	ExitCode int                `json:"exitCode"`
	Wait     *rendezvous.Status `json:"wait,omitempty"`
}
