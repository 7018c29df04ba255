package main

import (
	"github.com/spf13/cobra"
)

// devCmd returns the hidden "dev" command of root, creating it on first use.
// Developer-only commands (simulators, fixtures) hang under it.
func devCmd(root *cobra.Command) *cobra.Command {
	for _, c := range root.Commands() {
		if c.Name() == "dev" {
			return c
		}
	}
	dev := &cobra.Command{
		Use:     "dev",
		Short:   "Developer tools (simulators, fixtures); not for production use",
		Long:    "Developer tools used for demos and tests: simulators and fixture generators. Not covered by any compatibility promise.",
		Example: "  agentiso dev init-dir --dir demo --rendezvous-ip 192.168.111.80 --local\n  agentiso dev simulate --dir demo --scenario sno-happy",
		Hidden:  true,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.AddCommand(dev)
	return dev
}
