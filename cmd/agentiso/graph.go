package main

import (
	"bytes"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

func newGraphCmd(g *globals) *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "graph",
		Short: "Print the asset graph in Graphviz DOT form",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return asset.WriteDOT(g.out, agent.AllTargets()...)
			}
			var b bytes.Buffer
			if err := asset.WriteDOT(&b, agent.AllTargets()...); err != nil {
				return err
			}
			return fsutil.WriteFileAtomic(out, b.Bytes(), 0o644)
		},
	}
	c.Flags().StringVar(&out, "output-file", "", "write the graph to this file instead of standard output")
	return c
}
