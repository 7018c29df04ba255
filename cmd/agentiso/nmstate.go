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
		Long: `The nmstate commands read NMState YAML (the text of an agent-config host's
networkConfig or an NMStateConfig's spec.config) and turn it into the
NetworkManager keyfiles the agent ISO carries. The output is byte-identical
to nmstatectl gc 2.2.38 for the supported subset: ethernet, bond, vlan,
linux-bridge and dummy interfaces, static and dynamic IPv4/IPv6, routes and
DNS.

Parsing is strict: an unknown field is an error naming its path and line.
By default agentiso also rejects inputs nmstate accepts but that break at
boot or are almost certainly mistakes (unknown interface types, duplicate
names, VLAN ids outside 1-4094, malformed MACs, names over 15 bytes, route
next hops of the wrong family, routes via undefined interfaces, addresses
given while "enabled" is omitted). --lenient restores nmstate's behaviour.`,
		Example: `  agentiso nmstate gc host0.yaml
  agentiso nmstate gc --installer --output-dir out/ host0.yaml
  agentiso nmstate validate host0.yaml`,
	}
	cmd.AddCommand(newNmstateGCCmd(g), newNmstateValidateCmd(g))
	return cmd
}

func newNmstateGCCmd(g *globals) *cobra.Command {
	var o nmstateOptions
	cmd := &cobra.Command{
		Use:   "gc FILE",
		Short: "Generate NetworkManager keyfiles from NMState YAML (like nmstatectl gc)",
		Long: `gc is a drop-in for "nmstatectl gc FILE". It prints YAML with one key,
NetworkManager, holding a list of [file name, file content] pairs in
nmstate's order; each content is a complete keyfile. FILE "-" reads stdin.

With --output-dir the keyfiles are written to that directory instead
(created if needed), each as <connection id>.nmconnection with mode 0600,
atomically.

With --installer the keyfiles get the post-processing OpenShift applies
before they go into the agent ISO: autoconnect=true and
autoconnect-priority=1 in [connection].`,
		Example: `  # same output as nmstatectl gc
  agentiso nmstate gc host0.yaml

  # keyfiles exactly as the agent ISO carries them
  agentiso nmstate gc --installer --output-dir /tmp/host0 host0.yaml

  # reproduce nmstate's own leniency
  agentiso nmstate gc --lenient host0.yaml`,
		Args: cobra.ExactArgs(1),
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
		Long: `validate parses and checks NMState YAML exactly as gc does and reports every
problem, one per line, each naming the file, the line, the field path and
how to fix it. It exits 0 when the file is valid and 1 otherwise. FILE "-"
reads stdin.`,
		Example: `  agentiso nmstate validate host0.yaml
  agentiso nmstate validate --lenient host0.yaml`,
		Args: cobra.ExactArgs(1),
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
