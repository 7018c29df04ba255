package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/nmstate"
)

func newNmstateCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "nmstate",
		Short: "Turn NMState YAML into NetworkManager keyfiles, without nmstatectl",
	}
	cmd.AddCommand(newNmstateGCCmd(g), newNmstateValidateCmd(g))
	return cmd
}

func newNmstateGCCmd(g *globals) *cobra.Command {
	var o nmstate.Options
	var outputDir string
	cmd := &cobra.Command{
		Use:   "gc FILE",
		Short: "Generate NetworkManager keyfiles from NMState YAML (like nmstatectl gc)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := nmstate.GenerateInput(args[0], g.in, o)
			if err != nil {
				return err
			}
			if outputDir != "" {
				if err := nmstate.WriteKeyfiles(outputDir, files); err != nil {
					return err
				}
				g.log.Info("wrote keyfiles", "count", len(files), "dir", outputDir)
				return nil
			}
			out, err := nmstate.GCYAML(files)
			if err != nil {
				return err
			}
			_, err = g.out.Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&outputDir, "output-dir", "", "write the keyfiles into this directory instead of printing YAML")
	cmd.Flags().BoolVar(&o.Installer, "installer", false, "apply the agent ISO post-processing (autoconnect=true, autoconnect-priority=1)")
	cmd.Flags().BoolVar(&o.Lenient, "lenient", false, "accept what nmstatectl accepts, skipping agentiso's stricter checks")
	return cmd
}

func newNmstateValidateCmd(g *globals) *cobra.Command {
	var o nmstate.Options
	cmd := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check NMState YAML without generating anything",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := nmstate.GenerateInput(args[0], g.in, o)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.out, "%s: valid, %d connection(s)\n", args[0], len(files))
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.Lenient, "lenient", false, "accept what nmstatectl accepts, skipping agentiso's stricter checks")
	return cmd
}
