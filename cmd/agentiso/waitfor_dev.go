package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/rendezvous/sim"
)

// addWaitForDevCmds registers the hidden dev commands that go with wait-for.
func addWaitForDevCmds(g *globals, root *cobra.Command) {
	devCmd(root).AddCommand(newDevSimulateCmd(g), newDevInitDirCmd(g))
}

type simulateOptions struct {
	scenario   string
	listen     string
	kubeListen string
	speed      float64
	hold       bool
}

func newDevSimulateCmd(g *globals) *cobra.Command {
	o := &simulateOptions{}
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Serve a simulated rendezvous host and cluster API for wait-for",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runSimulate(cmd.Context(), g, *o) },
	}
	cmd.Flags().StringVar(&o.scenario, "scenario", "", "scenario YAML file or built-in scenario name (required)")
	cmd.Flags().StringVar(&o.listen, "listen", "", "REST API listen address host:port")
	cmd.Flags().StringVar(&o.kubeListen, "kube-listen", "", "Kubernetes API listen address host:port")
	cmd.Flags().Float64Var(&o.speed, "speed", 1, "scenario seconds per real second")
	cmd.Flags().BoolVar(&o.hold, "hold-until-seen", false, "hold each REST API state until a client has been served it (at most "+sim.DefaultHoldTimeout.String()+" per step)")
	_ = cmd.MarkFlagRequired("scenario")
	return cmd
}

func runSimulate(ctx context.Context, g *globals, o simulateOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.speed <= 0 {
		return &exitError{code: 1, err: errors.New("--speed must be greater than zero")}
	}
	sc, err := sim.Load(o.scenario)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := sim.ServeDir(ctx, g.dir, sim.DirOptions{Scenario: sc, Listen: o.listen, KubeListen: o.kubeListen, Speed: o.speed, HoldUntilSeen: o.hold, Log: g.log}); err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}

func newDevInitDirCmd(g *globals) *cobra.Command {
	o := sim.DevDirOptions{}
	cmd := &cobra.Command{
		Use:   "init-dir",
		Short: "Write the files wait-for reads, with freshly generated credentials",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Dir = g.dir
			if err := sim.WriteDevDir(o); err != nil {
				return &exitError{code: 1, err: err}
			}
			g.log.Info("wrote wait-for inputs", "dir", g.dir, "local", o.Local)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.RendezvousIP, "rendezvous-ip", "", "IP address of the rendezvous host (required)")
	cmd.Flags().StringVar(&o.ClusterName, "cluster-name", "ocp", "cluster name")
	cmd.Flags().StringVar(&o.BaseDomain, "base-domain", "example.com", "base DNS domain")
	cmd.Flags().BoolVar(&o.Local, "local", false, "serve the simulator on free loopback ports and point the inputs at them")
	_ = cmd.MarkFlagRequired("rendezvous-ip")
	return cmd
}
