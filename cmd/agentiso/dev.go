package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/fake/testcluster"
)

// newDevCmd is the hidden "dev" command: developer aids (test fixtures,
// simulators) for tests, demos and benchmarks.
func newDevCmd(g *globals) *cobra.Command {
	dev := group("dev", "Developer aids (hidden): test fixtures and simulators",
		newDevMakeTestISOCmd(g), newDevInitDirCmd(g), newDevSimulateCmd(g), newDevClusterCmd(g), newDevBMCCmd(g))
	dev.Hidden = true
	return dev
}

func newDevClusterCmd(g *globals) *cobra.Command {
	var step time.Duration
	c := &cobra.Command{
		Use:   "cluster",
		Short: "Serve an installed cluster for node-image (day 2) and play its new hosts joining",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return testcluster.ServeDir(cmd.Context(), g.dir, step, g.log)
		},
	}
	c.Flags().DurationVar(&step, "step", 2*time.Second, "time between two states of a joining host")
	return c
}
