package main

import "github.com/spf13/cobra"

// devCmd returns the hidden "dev" command of root, creating it on first use.
// Developer aids (test fixtures, simulators) hang under it; several files
// register into it, so it is found or created rather than built once.
func devCmd(root *cobra.Command) *cobra.Command {
	for _, c := range root.Commands() {
		if c.Name() == "dev" {
			return c
		}
	}
	dev := &cobra.Command{
		Use:   "dev",
		Short: "Developer aids (hidden): test fixtures and simulators",
		Long:  "Developer aids used by tests, demos and benchmarks: fixture generators and the rendezvous simulator. Not part of the supported interface.",
		Example: `  agentiso dev make-test-iso --output-file base.iso --size 64MiB
  agentiso dev init-dir --dir demo --rendezvous-ip 127.0.0.1 --local
  agentiso dev simulate --dir demo --scenario sno-happy`,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.AddCommand(dev)
	return dev
}
