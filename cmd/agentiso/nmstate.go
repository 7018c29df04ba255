package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"github.com/seed-a052040e/agentiso/pkg/nmstate"
)

type nmstateOptions struct {
	file      string
	outputDir string
	installer bool
	lenient   bool
}

func newNmstateCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "nmstate",
		Short: "Turn NMState YAML into NetworkManager keyfiles, without nmstatectl",
	}
	cmd.AddCommand(newNmstateGCCmd(g), newNmstateValidateCmd(g))
	return cmd
}

func newNmstateGCCmd(g *globals) *cobra.Command {
	var o nmstateOptions
	cmd := &cobra.Command{
		Use:   "gc FILE",
		Short: "Generate NetworkManager keyfiles from NMState YAML (like nmstatectl gc)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			return runNmstateGC(g, o)
		},
	}
	cmd.Flags().StringVar(&o.outputDir, "output-dir", "", "write the keyfiles into this directory instead of printing YAML")
	cmd.Flags().BoolVar(&o.installer, "installer", false, "apply the agent ISO post-processing (autoconnect=true, autoconnect-priority=1)")
	cmd.Flags().BoolVar(&o.lenient, "lenient", false, "accept what nmstatectl accepts, skipping agentiso's stricter checks")
	return cmd
}

func newNmstateValidateCmd(g *globals) *cobra.Command {
	var o nmstateOptions
	cmd := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check NMState YAML without generating anything",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			files, err := nmstateGenerate(g, o)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.out, "%s: valid, %d connection(s)\n", o.file, len(files))
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.lenient, "lenient", false, "accept what nmstatectl accepts, skipping agentiso's stricter checks")
	return cmd
}

func nmstateGenerate(g *globals, o nmstateOptions) ([]nmstate.Keyfile, error) {
	var data []byte
	var err error
	if o.file == "-" {
		data, err = fsutil.ReadLimited(g.in, "standard input", asset.MaxInputFileSize)
	} else {
		data, err = fsutil.ReadRegular(o.file, asset.MaxInputFileSize)
	}
	if err != nil {
		return nil, fmt.Errorf("reading NMState YAML: %w", err)
	}
	return nmstate.GenerateFile(o.file, data, nmstate.Options{Lenient: o.lenient, Installer: o.installer})
}

func runNmstateGC(g *globals, o nmstateOptions) error {
	files, err := nmstateGenerate(g, o)
	if err != nil {
		return err
	}
	if o.outputDir != "" {
		if err := nmstate.WriteKeyfiles(o.outputDir, files); err != nil {
			return err
		}
		g.log.Info("wrote keyfiles", "count", len(files), "dir", o.outputDir)
		return nil
	}
	out, err := nmstate.GCYAML(files)
	if err != nil {
		return err
	}
	_, err = g.out.Write(out)
	return err
}
