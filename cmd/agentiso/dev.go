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
		Use:    "dev",
		Short:  "Developer aids (hidden): test fixtures and simulators",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.AddCommand(dev)
	return dev
}
